package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// serve runs a minimal authoritative responder (A 192.0.2.99 for any name, UDP and TCP) so the
// lab's own network test depends on no other lab server; prints "ready" once both listen.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "", "IP:PORT for UDP and TCP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return fmt.Errorf("need --listen IP:PORT")
	}
	answer := net.ParseIP("192.0.2.99")
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		if len(q.Question) == 1 && q.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A:   answer,
			})
		}
		_ = w.WriteMsg(m)
	})

	var started sync.WaitGroup
	errs := make(chan error, 2)
	// miekg/dns closes a TCP connection after 128 queries or 8 s idle by default; a warm series
	// must see one connection for its whole run.
	idle := func() time.Duration { return 10 * time.Minute }
	servers := []*dns.Server{
		{Addr: *listen, Net: "udp", Handler: handler},
		{Addr: *listen, Net: "tcp", Handler: handler, MaxTCPQueries: -1, IdleTimeout: idle},
	}
	for _, s := range servers {
		started.Add(1)
		s.NotifyStartedFunc = started.Done
		go func(s *dns.Server) { errs <- s.ListenAndServe() }(s)
	}
	ready := make(chan struct{})
	go func() { started.Wait(); close(ready) }()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	for {
		select {
		case <-ready:
			fmt.Println("ready")
			ready = nil
		case err := <-errs:
			return err
		case <-sig:
			for _, s := range servers {
				_ = s.Shutdown()
			}
			return nil
		}
	}
}
