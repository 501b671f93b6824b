// refclient is the lab's independent reference DNS client: dnscost's own timings are compared with
// its medians, so it shares no code with dnscost and keeps every exchange explicit (no pools, no
// retries, no fallbacks, no TLS resumption).
//
//	refclient --transport udp|tcp|dot|doh|doh1|doq|doh3 --server IP:PORT [--sni dns.test] [--ca FILE]
//	          [--path /dns-query] [--method post|get] --mode cold|warm --count N --name NAME
//	          [--qtype A] [--timeout MS]
//	refclient serve --listen IP:PORT
//
// Timing contract (it defines fairness, keep it in step with dnscost):
//   - cold: every exchange opens a new connection; the clock runs from just before the dial to the
//     parsed answer.
//   - warm: one connection is opened before the clock starts and reused; the clock runs from
//     sending the query to the parsed answer. A broken connection is reopened untimed.
//   - udp has no connection: cold and warm both send one datagram from a fresh socket.
//   - doq/doh3 (quic-go): cold dials a new QUIC connection from a fresh UDP socket inside the span (its handshake is
//     reported as tls_ms; there is no connect); never 0-RTT or resumption.
//
// stdout carries one JSON line per exchange; diagnostics go to stderr.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"
)

type options struct {
	transport, server, sni, ca, path, method, mode, name string
	qtype                                                uint16
	count                                                int
	timeout                                              time.Duration
	tls                                                  *tls.Config
}

// result is one stdout line; pointers become null where a phase did not happen in the timed span.
type result struct {
	Transport string   `json:"transport"`
	Mode      string   `json:"mode"`
	I         int      `json:"i"`
	OK        bool     `json:"ok"`
	Rcode     *string  `json:"rcode"`
	Ms        float64  `json:"ms"`
	ConnectMs *float64 `json:"connect_ms"`
	TLSMs     *float64 `json:"tls_ms"`
	Error     *string  `json:"error"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "refclient serve:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "refclient:", err)
		os.Exit(2)
	}
	run(o, json.NewEncoder(os.Stdout))
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("refclient", flag.ContinueOnError)
	o := &options{}
	var qtype string
	var timeoutMs int
	fs.StringVar(&o.transport, "transport", "", "udp|tcp|dot|doh|doh1|doq|doh3")
	fs.StringVar(&o.server, "server", "", "IP:PORT")
	fs.StringVar(&o.sni, "sni", "dns.test", "TLS server name")
	fs.StringVar(&o.ca, "ca", "", "PEM file of the only CA to trust (dot, doh, doh1)")
	fs.StringVar(&o.path, "path", "/dns-query", "DoH path")
	fs.StringVar(&o.method, "method", "post", "DoH method: post|get")
	fs.StringVar(&o.mode, "mode", "", "cold|warm")
	fs.IntVar(&o.count, "count", 1, "number of exchanges")
	fs.StringVar(&o.name, "name", "", "query name")
	fs.StringVar(&qtype, "qtype", "A", "query type")
	fs.IntVar(&timeoutMs, "timeout", 5000, "per-exchange timeout in ms")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch o.transport {
	case "udp", "tcp", "dot", "doh", "doh1", "doq", "doh3":
	default:
		return nil, fmt.Errorf("--transport must be udp|tcp|dot|doh|doh1|doq|doh3, got %q", o.transport)
	}
	if o.mode != "cold" && o.mode != "warm" {
		return nil, fmt.Errorf("--mode must be cold|warm, got %q", o.mode)
	}
	if o.method != "post" && o.method != "get" {
		return nil, fmt.Errorf("--method must be post|get, got %q", o.method)
	}
	if o.server == "" || o.name == "" || o.count < 1 || timeoutMs < 1 {
		return nil, fmt.Errorf("need --server, --name, --count >= 1 and --timeout >= 1")
	}
	t, ok := dns.StringToType[strings.ToUpper(qtype)]
	if !ok {
		return nil, fmt.Errorf("unknown --qtype %q", qtype)
	}
	o.qtype = t
	o.name = dns.Fqdn(o.name)
	o.timeout = time.Duration(timeoutMs) * time.Millisecond
	if o.transport != "udp" && o.transport != "tcp" {
		cfg, err := tlsConfig(o)
		if err != nil {
			return nil, err
		}
		o.tls = cfg
	}
	return o, nil
}

// tlsConfig pins TLS 1.3 and the lab CA, and leaves ClientSessionCache nil so nothing resumes.
func tlsConfig(o *options) (*tls.Config, error) {
	if o.ca == "" {
		return nil, fmt.Errorf("--ca is required for %s", o.transport)
	}
	pem, err := os.ReadFile(o.ca)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", o.ca)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: o.sni, MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13}
	switch o.transport {
	case "doh":
		cfg.NextProtos = []string{"h2"}
	case "doh1":
		cfg.NextProtos = []string{"http/1.1"}
	case "doq":
		cfg.NextProtos = []string{"doq"}
	case "doh3":
		cfg.NextProtos = []string{"h3"}
	}
	return cfg, nil
}

func run(o *options, out *json.Encoder) {
	var warm conn
	for i := 0; i < o.count; i++ {
		r := result{Transport: o.transport, Mode: o.mode, I: i}
		var m *dns.Msg
		var err error
		switch {
		case o.transport == "udp":
			m, err = exchangeUDP(o, &r)
		case o.mode == "cold":
			m, err = exchange(o, nil, &r)
		default:
			if warm == nil {
				warm, err = dial(o, time.Now().Add(o.timeout), nil)
			}
			if err == nil {
				if m, err = exchange(o, warm, &r); err != nil {
					warm.Close()
					warm = nil
				}
			}
		}
		if err != nil {
			s := err.Error()
			r.Error = &s
		} else {
			rc := dns.RcodeToString[m.Rcode]
			r.Rcode = &rc
			r.OK = true
		}
		_ = out.Encode(r)
	}
	if warm != nil {
		warm.Close()
	}
}

func since(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
