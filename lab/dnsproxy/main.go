// Command dnsproxy is the lab's AdGuard dnsproxy: one forwarding proxy on 127.0.0.1 (or -listen) for UDP, TCP, DoT,
// DoH (h2 and HTTP/1.1), DoH3 and DoQ, in front of one lab server over plain DNS. dnsproxy's own command
// (internal/cmd) cannot be imported, so this is the minimal setup through its proxy package: no cache, no bootstrap
// resolver (the upstream must be an IP literal, so nothing ever falls back to the system resolver), no fallbacks.
//
// Unlike the lab's CoreDNS, its DoQ and DoH3 servers use quic-go's ListenEarly with Allow0RTT, so resumed queries
// are answered from 0-RTT, and answers over QUIC and HTTPS are not cut to the EDNS buffer size.
//
// It prints "dnsproxy-lab ready" on stderr once every listener is bound, and stops on SIGINT/SIGTERM.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/AdguardTeam/dnsproxy/proxy"
	"github.com/AdguardTeam/dnsproxy/upstream"
)

func main() {
	listen := flag.String("listen", "127.0.0.1", "address to listen on (IP literal)")
	dnsPort := flag.Int("dns-port", 0, "plain DNS port (UDP and TCP)")
	tlsPort := flag.Int("tls-port", 0, "DoT port (TCP), also DoQ (UDP)")
	httpsPort := flag.Int("https-port", 0, "DoH port (TCP, h2 and HTTP/1.1), also DoH3 (UDP)")
	certFile := flag.String("cert", "", "server certificate chain (PEM)")
	keyFile := flag.String("key", "", "server key (PEM)")
	up := flag.String("upstream", "", "upstream server, e.g. udp://127.0.0.1:5353 (IP literal only)")
	verbose := flag.Bool("verbose", false, "debug logging")
	flag.Parse()
	if err := run(*listen, *dnsPort, *tlsPort, *httpsPort, *certFile, *keyFile, *up, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "dnsproxy-lab: error:", err)
		os.Exit(1)
	}
}

func run(listen string, dnsPort, tlsPort, httpsPort int, certFile, keyFile, up string, verbose bool) error {
	ip, err := netip.ParseAddr(listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if dnsPort <= 0 || tlsPort <= 0 || httpsPort <= 0 || certFile == "" || keyFile == "" || up == "" {
		return fmt.Errorf("-dns-port, -tls-port, -https-port, -cert, -key and -upstream are required")
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	l := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("loading the certificate: %w", err)
	}
	// dnsproxy sets NextProtos per listener (dot, doq, h2/http1.1, h3) on clones of this config.
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}

	// No Bootstrap: an upstream given by name would fail instead of asking the system resolver.
	ups, err := proxy.ParseUpstreamsConfig([]string{up}, &upstream.Options{Logger: l, Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("upstream %q: %w", up, err)
	}

	at := func(port int) netip.AddrPort { return netip.AddrPortFrom(ip, uint16(port)) }
	conf := &proxy.Config{
		Logger:         l,
		UpstreamConfig: ups,
		UpstreamMode:   proxy.UpstreamModeLoadBalance,
		TLSConfig:      tlsConf,
		UDPListenAddr:  []*net.UDPAddr{net.UDPAddrFromAddrPort(at(dnsPort))},
		TCPListenAddr:  []*net.TCPAddr{net.TCPAddrFromAddrPort(at(dnsPort))},
		TLSListenAddr:  []*net.TCPAddr{net.TCPAddrFromAddrPort(at(tlsPort))},
		QUICListenAddr: []*net.UDPAddr{net.UDPAddrFromAddrPort(at(tlsPort))},
		HTTPConfig: &proxy.HTTPConfig{
			ListenAddresses: []netip.AddrPort{at(httpsPort)},
			ReadTimeout:     10 * time.Second,
			WriteTimeout:    10 * time.Second,
			HTTP3Enabled:    true,
		},
	}
	p, err := proxy.New(conf)
	if err != nil {
		return fmt.Errorf("creating the proxy: %w", err)
	}
	ctx := context.Background()
	if err = p.Start(ctx); err != nil {
		return fmt.Errorf("starting the proxy: %w", err)
	}
	fmt.Fprintln(os.Stderr, "dnsproxy-lab ready")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	shutdown, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return p.Shutdown(shutdown)
}
