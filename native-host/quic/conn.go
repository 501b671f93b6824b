// One QUIC connection and what it wraps: the counting socket under it (wire figures per datagram), the session
// ticket cache that makes a later connection's resumption possible, and its TLS state as the host reports it.

package main

import (
	"crypto/tls"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// countingConn counts every datagram to and from the server as it passes the socket: the figures are what went
// on the wire, QUIC padding, coalesced packets and PMTU probes included. It exposes only net.PacketConn, so
// quic-go sends one datagram per write (no GSO batching that would hide datagrams inside one call).
type countingConn struct {
	net.PacketConn
	server *net.UDPAddr
	header int64
	mu     sync.Mutex
	w      wire
	// When the last counted datagram from the server was read (µs since the Unix epoch).
	lastRead int64
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
		c.lastRead = time.Now().UnixMicro()
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
	w.ReadAt = c.lastRead
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

// writeOnly lets a full handshake store the server's tickets without offering one.
type writeOnly struct{ c tls.ClientSessionCache }

func (w writeOnly) Get(string) (*tls.ClientSessionState, bool) { return nil, false }
func (w writeOnly) Put(k string, cs *tls.ClientSessionState)   { w.c.Put(k, cs) }

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
