// dnscost-quic is the native host's QUIC companion: Node.js has no QUIC, so this small program does the QUIC and
// TLS work of DNS over QUIC (RFC 9250) and DNS over HTTPS over HTTP/3 (RFC 8484 over RFC 9114) with quic-go, and
// reports what happened on the wire. The host (native-host/src/transports/quic-companion.ts) starts it once,
// lazily, and talks to it over stdin/stdout; the types are native-host/src/transports/quic-protocol.ts.
//
// Lifecycle: it runs until stdin ends. Every request is handled concurrently and answered by exactly one frame with
// the request's id; connections stay open until the host closes them (warm) or the peer does (reported as an
// unsolicited `event` frame with id 0). Session tickets are kept per connection so a later connection can resume
// from it (0-RTT where the server allows). Nothing is retried, no connection is reopened by itself.
//
// Framing: 4-byte big-endian length, then that many bytes of UTF-8 JSON; stdout carries frames only, logs go to
// stderr. Timings are on Go's monotonic clock, in milliseconds. Bytes and packets are counted per UDP datagram by
// wrapping the connection's socket (QUIC padding included), with UDP and IP headers added.
//
// Files: main.go reads frames and dispatches them; protocol.go is the frames, codes and framing; companion.go the
// handlers; conn.go a connection, its counting socket and tickets; doq.go and doh3.go one exchange each; errors.go
// maps failures to codes.
package main

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "-v") {
		fmt.Printf("dnscost-quic protocol %d\n", protocolVersion)
		return
	}
	// quic-go's buffer-size warning is about throughput, not a DNS query: keep stderr for real problems.
	_ = os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	c := &companion{
		out:    &out{w: os.Stdout},
		conns:  map[int64]*qconn{},
		caches: map[int64]*ticketCache{},
		pools:  map[string]*x509.CertPool{},
	}
	in := bufio.NewReader(os.Stdin)
	for {
		body, err := readFrame(in)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintln(os.Stderr, "dnscost-quic:", err)
			}
			return // stdin ended: the host is gone, and so are we
		}
		r, ok := c.decode(body)
		if !ok {
			continue
		}
		switch r.Type {
		case "hello":
			go c.hello(r)
		case "open":
			go c.open(r)
		case "exchange":
			go c.exchange(r)
		case "close":
			go c.close(r)
		}
	}
}

// decode is one frame's request, or false after answering why it is none (bad JSON, an unknown type).
func (c *companion) decode(body []byte) (request, bool) {
	var r request
	if err := json.Unmarshal(body, &r); err != nil {
		c.fail(0, codeBadRequest, "bad JSON: "+err.Error(), nil, nil, nil)
		return r, false
	}
	switch r.Type {
	case "hello", "open", "exchange", "close":
		return r, true
	}
	c.fail(r.ID, codeBadRequest, fmt.Sprintf("unknown type %q", r.Type), nil, nil, nil)
	return r, false
}
