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
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// version of this program's protocol with the host; bump on an incompatible change.
const protocolVersion = 1

const maxFrame = 1 << 20
const maxAnswer = 65535

// Stable error codes, spelled as in common/errors.ts.
const (
	codeTimeout         = "timeout"
	codeConnectRefused  = "connect-refused"
	codeConnectFailed   = "connect-failed"
	codeReset           = "connection-reset"
	codeClosed          = "connection-closed"
	codeTLSHandshake    = "tls-handshake"
	codeTLSAlert        = "tls-alert"
	codeCertExpired     = "tls-cert-expired"
	codeCertName        = "tls-cert-name"
	codeCertUntrusted   = "tls-cert-untrusted"
	codeHTTPStatus      = "http-status"
	codeHTTPContentType = "http-content-type"
	codeMalformed       = "malformed-answer"
	codeBadRequest      = "bad-request"
	codeInternal        = "internal"
)

type pair struct {
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
}

type wire struct {
	Bytes   pair `json:"bytes"`
	Packets pair `json:"packets"`
	Payload pair `json:"payload"`
	DNS     pair `json:"dns"`
	// When the counters were read, in µs since the Unix epoch (the clock packet captures stamp frames with).
	At int64 `json:"at"`
}

type tlsInfo struct {
	Version   *string `json:"version"`
	ALPN      *string `json:"alpn"`
	Cipher    *string `json:"cipher"`
	Resumed   bool    `json:"resumed"`
	EarlyData bool    `json:"earlyData"`
	Complete  bool    `json:"complete"`
}

type request struct {
	ID         int64  `json:"id"`
	Type       string `json:"type"`
	Transport  string `json:"transport"`
	Address    string `json:"address"`
	Port       int    `json:"port"`
	ServerName string `json:"serverName"`
	Path       string `json:"path"`
	Method     string `json:"method"`
	CA         string `json:"ca"`
	TimeoutMs  int    `json:"timeoutMs"`
	ResumeFrom *int64 `json:"resumeFrom"`
	Conn       int64  `json:"conn"`
	Query      string `json:"query"`
}

type reply struct {
	ID          int64    `json:"id"`
	Type        string   `json:"type"`
	Conn        *int64   `json:"conn,omitempty"`
	Version     string   `json:"version,omitempty"`
	Protocol    int      `json:"protocol,omitempty"`
	QuicGo      string   `json:"quicGo,omitempty"`
	HandshakeMs *float64 `json:"handshakeMs,omitempty"`
	Early       *bool    `json:"early,omitempty"`
	QueryMs     *float64 `json:"queryMs,omitempty"`
	Answer      string   `json:"answer,omitempty"`
	TLS         *tlsInfo `json:"tls,omitempty"`
	Ticket      *bool    `json:"ticket,omitempty"`
	Wire        *wire    `json:"wire,omitempty"`
	Code        string   `json:"code,omitempty"`
	Message     string   `json:"message,omitempty"`
	Event       string   `json:"event,omitempty"`
	Detail      string   `json:"detail,omitempty"`
}

// out serialises frames to stdout: one write per frame.
type out struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *out) send(r reply) {
	body, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dnscost-quic: encode:", err)
		return
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	frame = append(frame, body...)
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.w.Write(frame); err != nil {
		os.Exit(0) // the host is gone
	}
}

// countingConn counts every datagram to and from the server as it passes the socket: the figures are what went
// on the wire, QUIC padding, coalesced packets and PMTU probes included. It exposes only net.PacketConn, so
// quic-go sends one datagram per write (no GSO batching that would hide datagrams inside one call).
type countingConn struct {
	net.PacketConn
	server *net.UDPAddr
	header int64
	mu     sync.Mutex
	w      wire
}

func (c *countingConn) fromServer(a net.Addr) bool {
	u, ok := a.(*net.UDPAddr)
	return ok && u.Port == c.server.Port && u.IP.Equal(c.server.IP)
}

func (c *countingConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		n, a, err := c.PacketConn.ReadFrom(p)
		if err != nil {
			return n, a, err
		}
		// Only the server's address and port can answer; anything else is neither counted nor handed to QUIC.
		if !c.fromServer(a) {
			continue
		}
		c.mu.Lock()
		c.w.Packets.Received++
		c.w.Payload.Received += int64(n)
		c.w.Bytes.Received += int64(n) + c.header
		c.mu.Unlock()
		return n, a, nil
	}
}

// WriteTo holds the lock across the send, so a snapshot never falls between a datagram leaving and being counted:
// what a capture stamps before a snapshot's `at` is in it, what it stamps after is not.
func (c *countingConn) WriteTo(p []byte, a net.Addr) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.PacketConn.WriteTo(p, a)
	if err == nil {
		c.w.Packets.Sent++
		c.w.Payload.Sent += int64(n)
		c.w.Bytes.Sent += int64(n) + c.header
	}
	return n, err
}

func (c *countingConn) addDNS(sent, received int64) {
	c.mu.Lock()
	c.w.DNS.Sent += sent
	c.w.DNS.Received += received
	c.mu.Unlock()
}

func (c *countingConn) snapshot() *wire {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.w
	w.At = time.Now().UnixMicro()
	return &w
}

// ticketCache remembers whether the server sent a session ticket, so the host knows a resumption is possible.
type ticketCache struct {
	tls.ClientSessionCache
	mu  sync.Mutex
	got bool
}

func (t *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	t.ClientSessionCache.Put(key, cs)
	if cs != nil {
		t.mu.Lock()
		t.got = true
		t.mu.Unlock()
	}
}

func (t *ticketCache) has() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got
}

type qconn struct {
	id        int64
	transport string
	req       request
	pc        *countingConn
	tr        *quic.Transport
	conn      *quic.Conn
	h3        *http3.ClientConn
	early     bool
	cache     *ticketCache
	mu        sync.Mutex
	closing   bool
}

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

func tlsStateOf(q *quic.Conn) *tlsInfo {
	st := q.ConnectionState()
	info := &tlsInfo{Resumed: st.TLS.DidResume, EarlyData: st.Used0RTT, Complete: st.TLS.HandshakeComplete}
	if st.TLS.HandshakeComplete {
		v := "TLSv1.3"
		if st.TLS.Version != tls.VersionTLS13 {
			v = tls.VersionName(st.TLS.Version)
		}
		info.Version = &v
		info.Cipher = ptr(tls.CipherSuiteName(st.TLS.CipherSuite))
		if st.TLS.NegotiatedProtocol != "" {
			info.ALPN = ptr(st.TLS.NegotiatedProtocol)
		}
	}
	return info
}

// classify maps an error to a stable code; phase names where it happened.
func classify(err error, phase string) (string, string) {
	msg := phase + ": " + err.Error()
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var te *quic.TransportError
	var ae *quic.ApplicationError
	var se *quic.StreamError
	var idle *quic.IdleTimeoutError
	var hs *quic.HandshakeTimeoutError
	var sr *quic.StatelessResetError
	var ne net.Error
	switch {
	case errors.As(err, &hostErr):
		return codeCertName, msg
	case errors.As(err, &authErr):
		return codeCertUntrusted, msg
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return codeCertExpired, msg
		}
		return codeCertUntrusted, msg
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &idle), errors.As(err, &hs):
		return codeTimeout, msg
	case errors.Is(err, syscall.ECONNREFUSED):
		return codeConnectRefused, msg
	case errors.As(err, &te):
		if te.ErrorCode.IsCryptoError() {
			if te.Remote {
				return codeTLSAlert, msg
			}
			return codeTLSHandshake, msg
		}
		if phase == "handshake" {
			return codeConnectFailed, msg
		}
		return codeClosed, msg
	case errors.As(err, &ae), errors.As(err, &sr):
		if phase == "handshake" {
			return codeConnectFailed, msg
		}
		return codeClosed, msg
	case errors.As(err, &se):
		return codeReset, msg
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return codeClosed, msg
	case errors.As(err, &ne) && ne.Timeout():
		return codeTimeout, msg
	}
	if phase == "handshake" {
		return codeConnectFailed, msg
	}
	return codeInternal, msg
}

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

func (c *companion) open(r request) {
	if r.Transport != "doq" && r.Transport != "doh3" {
		c.fail(r.ID, codeBadRequest, "transport must be doq or doh3", nil, nil, nil)
		return
	}
	ip := net.ParseIP(r.Address)
	if ip == nil || r.Port < 1 || r.Port > 65535 || r.TimeoutMs < 1 {
		c.fail(r.ID, codeBadRequest, "need an IP address, a port and timeoutMs", nil, nil, nil)
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

// writeOnly lets a full handshake store the server's tickets without offering one.
type writeOnly struct{ c tls.ClientSessionCache }

func (w writeOnly) Get(string) (*tls.ClientSessionState, bool) { return nil, false }
func (w writeOnly) Put(k string, cs *tls.ClientSessionState)   { w.c.Put(k, cs) }

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
	query, err := base64.StdEncoding.DecodeString(r.Query)
	if err != nil || len(query) < 12 || len(query) > maxAnswer {
		c.fail(r.ID, codeBadRequest, "query must be a base64 DNS message", &r.Conn, nil, nil)
		return
	}
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	var answer []byte
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

// coded is an error that already knows its stable code.
type coded struct{ code, msg string }

func (e *coded) Error() string { return e.msg }

func classifyExchange(err error) (string, string) {
	var ce *coded
	if errors.As(err, &ce) {
		return ce.code, ce.msg
	}
	return classify(err, "query")
}

// doq sends one query on a new bidirectional stream: 2-byte length prefix, FIN after the query (RFC 9250 §4.2).
func (qc *qconn) doq(ctx context.Context, query []byte) ([]byte, error) {
	str, err := qc.conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = str.SetDeadline(dl)
	}
	framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(query)), uint16(len(query)))
	framed = append(framed, query...)
	if _, err := str.Write(framed); err != nil {
		str.CancelRead(0)
		return nil, err
	}
	qc.pc.addDNS(int64(len(framed)), 0)
	if err := str.Close(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(str)
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		str.CancelRead(0)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &coded{codeClosed, "query: the stream ended before an answer"}
		}
		return nil, err
	}
	answer := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, answer); err != nil {
		str.CancelRead(0)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &coded{codeClosed, fmt.Sprintf("query: the stream ended mid-answer (%d bytes announced)", len(answer))}
		}
		return nil, err
	}
	qc.pc.addDNS(0, int64(2+len(answer)))
	return answer, nil
}

// doh3 sends one RFC 8484 request on the HTTP/3 connection; GET in 0-RTT when the connection is early.
func (qc *qconn) doh3(ctx context.Context, query []byte) ([]byte, error) {
	r := qc.req
	host := r.ServerName
	if host == "" {
		host = r.Address
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	path := r.Path
	if path == "" {
		path = "/dns-query"
	}
	url := "https://" + host + ":" + strconv.Itoa(r.Port) + path
	var req *http.Request
	var err error
	if r.Method == "GET" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		method := http.MethodGet
		select {
		case <-qc.conn.HandshakeComplete():
		default:
			// Only a safe method may travel in 0-RTT (RFC 8470; quic-go's GET_0RTT).
			method = http3.MethodGet0RTT
		}
		req, err = http.NewRequestWithContext(ctx, method, url+sep+"dns="+base64.RawURLEncoding.EncodeToString(query), nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(query)))
		if err == nil {
			req.Header.Set("Content-Type", "application/dns-message")
			req.ContentLength = int64(len(query))
		}
	}
	if err != nil {
		return nil, &coded{codeInternal, err.Error()}
	}
	req.Header.Set("Accept", "application/dns-message")
	qc.pc.addDNS(int64(len(query)), 0)
	resp, err := qc.h3.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, err
	}
	qc.pc.addDNS(0, int64(len(body)))
	if resp.StatusCode != http.StatusOK {
		return nil, &coded{codeHTTPStatus, fmt.Sprintf("HTTP status %d", resp.StatusCode)}
	}
	if ct := strings.ToLower(strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0])); ct != "application/dns-message" {
		return nil, &coded{codeHTTPContentType, fmt.Sprintf("content-type %q is not application/dns-message", resp.Header.Get("Content-Type"))}
	}
	if len(body) > maxAnswer {
		return nil, &coded{codeMalformed, fmt.Sprintf("body longer than %d bytes", maxAnswer)}
	}
	return body, nil
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

func readFrame(r io.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes is over %d", n, maxFrame)
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

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
		var r request
		if err := json.Unmarshal(body, &r); err != nil {
			c.fail(0, codeBadRequest, "bad JSON: "+err.Error(), nil, nil, nil)
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
		default:
			c.fail(r.ID, codeBadRequest, fmt.Sprintf("unknown type %q", r.Type), nil, nil, nil)
		}
	}
}
