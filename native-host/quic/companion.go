// The companion's state and its request handlers: hello, open (dial a DoQ or DoH3 connection, resuming when asked),
// exchange (one query on an open connection), close, and the watcher that reports a connection the peer closed.

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

type companion struct {
	out    *out
	mu     sync.Mutex
	next   int64
	conns  map[int64]*qconn
	caches map[int64]*ticketCache
	order  []int64
	pools  map[string]*x509.CertPool
}

// Tickets are kept for this many recent connections; older ones are forgotten.
const keepTickets = 256

func (c *companion) pool(ca string) (*x509.CertPool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.pools[ca]; ok {
		return p, nil
	}
	p, err := x509.SystemCertPool()
	if err != nil || p == nil {
		p = x509.NewCertPool()
	}
	if ca != "" && !p.AppendCertsFromPEM([]byte(ca)) {
		return nil, errors.New("no certificate in the CA PEM")
	}
	c.pools[ca] = p
	return p, nil
}

func ms(d time.Duration) *float64 {
	v := float64(d.Microseconds()) / 1000
	return &v
}

func ptr[T any](v T) *T { return &v }

func (c *companion) fail(id int64, code, message string, conn *int64, w *wire, handshake *float64) {
	c.out.send(reply{ID: id, Type: "error", Code: code, Message: message, Conn: conn, Wire: w, HandshakeMs: handshake})
}

func (c *companion) hello(r request) {
	if r.CA != "" {
		if _, err := c.pool(r.CA); err != nil {
			c.fail(r.ID, codeBadRequest, err.Error(), nil, nil, nil)
			return
		}
	} else {
		_, _ = c.pool("")
	}
	qv := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				qv = d.Version
			}
		}
	}
	c.out.send(reply{ID: r.ID, Type: "hello", Version: "dnscost-quic", Protocol: protocolVersion, QuicGo: qv})
}

// checkOpen is what an open request must hold before anything is dialled: its server's address, or why not.
func checkOpen(r request) (net.IP, string) {
	if r.Transport != "doq" && r.Transport != "doh3" {
		return nil, "transport must be doq or doh3"
	}
	ip := net.ParseIP(r.Address)
	if ip == nil || r.Port < 1 || r.Port > 65535 || r.TimeoutMs < 1 {
		return nil, "need an IP address, a port and timeoutMs"
	}
	return ip, ""
}

// decodeQuery is an exchange request's query: a DNS message in base64, from a header's length to the largest answer.
func decodeQuery(s string) ([]byte, bool) {
	query, err := base64.StdEncoding.DecodeString(s)
	return query, err == nil && len(query) >= 12 && len(query) <= maxAnswer
}

func (c *companion) open(r request) {
	ip, why := checkOpen(r)
	if why != "" {
		c.fail(r.ID, codeBadRequest, why, nil, nil, nil)
		return
	}
	pool, err := c.pool(r.CA)
	if err != nil {
		c.fail(r.ID, codeBadRequest, err.Error(), nil, nil, nil)
		return
	}
	sni := r.ServerName
	if sni == "" {
		sni = r.Address
	}
	alpn := "doq" // RFC 9250 §4.1.1
	if r.Transport == "doh3" {
		alpn = http3.NextProtoH3
	}
	c.mu.Lock()
	c.next++
	id := c.next
	var cache *ticketCache
	if r.ResumeFrom != nil {
		cache = c.caches[*r.ResumeFrom]
	}
	if cache == nil {
		cache = &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	}
	c.caches[id] = cache
	c.order = append(c.order, id)
	if len(c.order) > keepTickets {
		delete(c.caches, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	resume := r.ResumeFrom != nil && cache.has()
	tlsConf := &tls.Config{
		RootCAs:    pool,
		ServerName: sni,
		NextProtos: []string{alpn},
		MinVersion: tls.VersionTLS13, // QUIC is TLS 1.3 only (RFC 9001 §4.2)
	}
	// Tickets are always collected (so a later connection may resume); they are only offered when asked to resume.
	if resume {
		tlsConf.ClientSessionCache = cache
	} else {
		tlsConf.ClientSessionCache = writeOnly{cache}
	}
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	qconf := &quic.Config{HandshakeIdleTimeout: timeout, MaxIdleTimeout: 30 * time.Second}
	server := &net.UDPAddr{IP: ip, Port: r.Port}
	header := int64(8 + 20)
	network, local := "udp4", &net.UDPAddr{IP: net.IPv4zero}
	if ip.To4() == nil {
		header = 8 + 40
		network, local = "udp6", &net.UDPAddr{IP: net.IPv6unspecified}
	}

	// The clock starts before the socket, as a cold exchange's span starts before the dial.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	udp, err := net.ListenUDP(network, local)
	if err != nil {
		code, msg := classify(err, "socket")
		c.fail(r.ID, code, msg, nil, nil, nil)
		return
	}
	pc := &countingConn{PacketConn: udp, server: server, header: header}
	tr := &quic.Transport{Conn: pc}
	var q *quic.Conn
	if resume {
		// DialEarly returns as soon as 0-RTT keys exist, so the query can go in early data (RFC 9250 §4.5).
		q, err = tr.DialEarly(ctx, server, tlsConf, qconf)
	} else {
		q, err = tr.Dial(ctx, server, tlsConf, qconf)
	}
	handshake := ms(time.Since(start))
	if err != nil {
		code, msg := classify(err, "handshake")
		w := pc.snapshot()
		_ = tr.Close()
		c.fail(r.ID, code, msg, nil, w, handshake)
		return
	}
	qc := &qconn{id: id, transport: r.Transport, req: r, pc: pc, tr: tr, conn: q, cache: cache}
	select {
	case <-q.HandshakeComplete():
	default:
		qc.early = true
	}
	if r.Transport == "doh3" {
		qc.h3 = (&http3.Transport{}).NewClientConn(q)
	}
	c.mu.Lock()
	c.conns[id] = qc
	c.mu.Unlock()
	go c.watch(qc)
	c.out.send(reply{ID: r.ID, Type: "opened", Conn: &id, HandshakeMs: handshake, Early: &qc.early, TLS: tlsStateOf(q), Wire: pc.snapshot()})
}

// watch reports a connection the peer (or an idle timeout) closed, so the host stops using it.
func (c *companion) watch(qc *qconn) {
	<-qc.conn.Context().Done()
	qc.mu.Lock()
	closing := qc.closing
	qc.mu.Unlock()
	if closing {
		return
	}
	id := qc.id
	detail := "QUIC connection closed"
	if cause := context.Cause(qc.conn.Context()); cause != nil {
		detail = cause.Error()
	}
	c.out.send(reply{ID: 0, Type: "event", Conn: &id, Event: "connection-closed", Detail: detail})
}

func (c *companion) lookup(id int64) *qconn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[id]
}

func (c *companion) exchange(r request) {
	qc := c.lookup(r.Conn)
	if qc == nil {
		c.fail(r.ID, codeClosed, fmt.Sprintf("no open connection %d", r.Conn), &r.Conn, nil, nil)
		return
	}
	query, ok := decodeQuery(r.Query)
	if !ok {
		c.fail(r.ID, codeBadRequest, "query must be a base64 DNS message", &r.Conn, nil, nil)
		return
	}
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	var answer []byte
	var err error
	if qc.transport == "doq" {
		answer, err = qc.doq(ctx, query)
	} else {
		answer, err = qc.doh3(ctx, query)
	}
	queryMs := ms(time.Since(start))
	w := qc.pc.snapshot()
	if err != nil {
		code, msg := classifyExchange(err)
		c.out.send(reply{ID: r.ID, Type: "error", Code: code, Message: msg, Conn: &r.Conn, Wire: w, QueryMs: queryMs, TLS: tlsStateOf(qc.conn)})
		return
	}
	c.out.send(reply{
		ID: r.ID, Type: "answer", Conn: &r.Conn, Answer: base64.StdEncoding.EncodeToString(answer), QueryMs: queryMs,
		TLS: tlsStateOf(qc.conn), Ticket: ptr(qc.cache.has()), Wire: w,
	})
}

func (c *companion) close(r request) {
	c.mu.Lock()
	qc := c.conns[r.Conn]
	delete(c.conns, r.Conn)
	c.mu.Unlock()
	if qc == nil {
		c.out.send(reply{ID: r.ID, Type: "closed", Conn: &r.Conn})
		return
	}
	qc.mu.Lock()
	qc.closing = true
	qc.mu.Unlock()
	// DOQ_NO_ERROR (RFC 9250 §4.3) and H3_NO_ERROR (RFC 9114 §8.1).
	if qc.h3 != nil {
		_ = qc.conn.CloseWithError(0x100, "")
	} else {
		_ = qc.conn.CloseWithError(0, "")
	}
	w := qc.pc.snapshot()
	_ = qc.tr.Close()
	c.out.send(reply{ID: r.ID, Type: "closed", Conn: &r.Conn, Wire: w})
}
