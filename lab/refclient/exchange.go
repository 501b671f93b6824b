package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/http2"
)

// conn is one open connection that carries queries one at a time.
type conn interface {
	query(wire []byte, deadline time.Time) ([]byte, error)
	Close() error
}

const maxAnswer = 65535

// The query dnscost sends, byte for byte in size: EDNS0 with a 1232-byte buffer and, on encrypted transports, RFC 7830
// padding to a 128-octet block (RFC 8467), as browsers pad. The server then does the same work for both clients
// (it pads its answers to padded queries), so a difference between them is the clients' own.
const ednsBuffer = 1232
const padBlock = 128

func buildQuery(o *options) (*dns.Msg, []byte, error) {
	q := new(dns.Msg)
	q.SetQuestion(o.name, o.qtype)
	if strings.HasPrefix(o.transport, "doh") || o.transport == "doq" {
		q.Id = 0 // RFC 8484 §4.1: id 0 keeps GET requests cache-friendly; RFC 9250 §4.2.1 requires it
	}
	opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	opt.SetUDPSize(ednsBuffer)
	q.Extra = append(q.Extra, opt)
	if o.transport != "udp" && o.transport != "tcp" {
		bare, err := q.Pack()
		if err != nil {
			return nil, nil, err
		}
		n := (padBlock - (len(bare)+4)%padBlock) % padBlock // + the option's code and length
		opt.Option = append(opt.Option, &dns.EDNS0_PADDING{Padding: make([]byte, n)})
	}
	wire, err := q.Pack()
	return q, wire, err
}

// exchange times one query; c is nil in cold mode, when the dial is inside the timed span.
func exchange(o *options, c conn, r *result) (*dns.Msg, error) {
	q, wire, err := buildQuery(o)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := start.Add(o.timeout)
	defer func() { r.Ms = since(start) }()
	if c == nil {
		if c, err = dial(o, deadline, r); err != nil {
			return nil, err
		}
		defer c.Close()
	}
	ans, err := c.query(wire, deadline)
	if err != nil {
		return nil, err
	}
	return parseAnswer(q, ans)
}

func parseAnswer(q *dns.Msg, ans []byte) (*dns.Msg, error) {
	m := new(dns.Msg)
	if err := m.Unpack(ans); err != nil {
		return nil, fmt.Errorf("bad answer: %w", err)
	}
	if !m.Response || m.Id != q.Id || len(m.Question) != 1 ||
		!strings.EqualFold(m.Question[0].Name, q.Question[0].Name) || m.Question[0].Qtype != q.Question[0].Qtype {
		return nil, errors.New("answer does not match the query")
	}
	return m, nil
}

// exchangeUDP sends one datagram from a fresh socket; there is no connection to warm.
func exchangeUDP(o *options, r *result) (*dns.Msg, error) {
	q, wire, err := buildQuery(o)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := start.Add(o.timeout)
	defer func() { r.Ms = since(start) }()
	c, err := net.Dial("udp", o.server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := c.Write(wire); err != nil {
		return nil, err
	}
	buf := make([]byte, maxAnswer)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return nil, err
		}
		// A stray or spoofed datagram is not the answer: keep waiting, as a stub resolver would.
		if m, err := parseAnswer(q, buf[:n]); err == nil {
			return m, nil
		}
	}
}

// dial opens the transport's connection and, when r is set, records its TCP and TLS phases.
func dial(o *options, deadline time.Time, r *result) (conn, error) {
	if o.transport == "doq" || o.transport == "doh3" {
		return dialQUIC(o, deadline, r)
	}
	t0 := time.Now()
	d := net.Dialer{Deadline: deadline}
	raw, err := d.Dial("tcp", o.server)
	if err != nil {
		return nil, err
	}
	if r != nil {
		v := since(t0)
		r.ConnectMs = &v
	}
	if o.transport == "tcp" {
		return &streamConn{raw}, nil
	}
	t1 := time.Now()
	tc := tls.Client(raw, o.tls.Clone())
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("tls: %w", err)
	}
	if r != nil {
		v := since(t1)
		r.TLSMs = &v
	}
	switch o.transport {
	case "dot":
		return &streamConn{tc}, nil
	case "doh":
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			tc.Close()
			return nil, fmt.Errorf("server negotiated ALPN %q, not h2", p)
		}
		cc, err := (&http2.Transport{}).NewClientConn(tc)
		if err != nil {
			tc.Close()
			return nil, err
		}
		return &h2Conn{cc: cc, o: o}, nil
	default:
		return &h1Conn{c: tc, rd: bufio.NewReader(tc), o: o}, nil
	}
}

// streamConn frames queries with the 2-byte length of RFC 1035 §4.2.2 (TCP) and RFC 7858 (DoT).
type streamConn struct{ c net.Conn }

func (s *streamConn) Close() error { return s.c.Close() }

func (s *streamConn) query(wire []byte, deadline time.Time) ([]byte, error) {
	_ = s.c.SetDeadline(deadline)
	// One write, so the prefix and the message leave in one segment.
	framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(wire)), uint16(len(wire)))
	if _, err := s.c.Write(append(framed, wire...)); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(s.c, l[:]); err != nil {
		return nil, err
	}
	ans := make([]byte, binary.BigEndian.Uint16(l[:]))
	_, err := io.ReadFull(s.c, ans)
	return ans, err
}

func dohRequest(o *options, wire []byte, deadline time.Time) (*http.Request, context.CancelFunc, error) {
	host := o.sni
	if _, port, err := net.SplitHostPort(o.server); err == nil && port != "443" {
		host = net.JoinHostPort(o.sni, port)
	}
	url := "https://" + host + o.path
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	var req *http.Request
	var err error
	if o.method == "get" {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, url+"?dns="+base64.RawURLEncoding.EncodeToString(wire), nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(wire))
		if err == nil {
			req.Header.Set("Content-Type", "application/dns-message")
		}
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/dns-message")
	return req, cancel, nil
}

// dohQuery sends one DoH request over a single connection (HTTP/2 or HTTP/3) and reads its answer.
func dohQuery(cc interface {
	RoundTrip(*http.Request) (*http.Response, error)
}, o *options, wire []byte, deadline time.Time) ([]byte, error) {
	req, cancel, err := dohRequest(o, wire, deadline)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := cc.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	return dohBody(resp)
}

func dohBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("http status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/dns-message" {
		return nil, fmt.Errorf("content-type %q", ct)
	}
	return body, nil
}

// h2Conn is a single HTTP/2 connection, used directly so no pool can swap or add connections.
type h2Conn struct {
	cc *http2.ClientConn
	o  *options
}

func (h *h2Conn) Close() error { return h.cc.Close() }

func (h *h2Conn) query(wire []byte, deadline time.Time) ([]byte, error) {
	return dohQuery(h.cc, h.o, wire, deadline)
}

// h1Conn speaks HTTP/1.1 by hand on one TLS connection, relying on 1.1's default keep-alive.
type h1Conn struct {
	c      *tls.Conn
	rd     *bufio.Reader
	o      *options
	closed bool // the server sent "Connection: close"; reusing would fail, so say why
}

func (h *h1Conn) Close() error { return h.c.Close() }

func (h *h1Conn) query(wire []byte, deadline time.Time) ([]byte, error) {
	req, cancel, err := dohRequest(h.o, wire, deadline)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if h.closed {
		return nil, errors.New("server closed the HTTP/1.1 connection after the previous answer (no keep-alive)")
	}
	_ = h.c.SetDeadline(deadline)
	w := bufio.NewWriter(h.c) // one flush: headers and body in one TLS record
	if err := req.Write(w); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(h.rd, req)
	if err != nil {
		return nil, err
	}
	h.closed = resp.Close
	return dohBody(resp)
}
