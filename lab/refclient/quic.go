package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// dialQUIC opens a QUIC connection (DoQ: ALPN "doq", RFC 9250; DoH3: ALPN "h3") from a fresh UDP socket, with a
// full handshake (no session cache, so never 0-RTT); when r is set the handshake is its TLS phase.
func dialQUIC(o *options, deadline time.Time, r *result) (conn, error) {
	t0 := time.Now()
	addr, err := net.ResolveUDPAddr("udp", o.server)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	tr := &quic.Transport{Conn: udp}
	c, err := tr.Dial(ctx, addr, o.tls.Clone(), &quic.Config{HandshakeIdleTimeout: time.Until(deadline), MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		tr.Close()
		return nil, fmt.Errorf("quic: %w", err)
	}
	if r != nil {
		v := since(t0)
		r.TLSMs = &v
	}
	if o.transport == "doq" {
		return &doqConn{c: c, tr: tr}, nil
	}
	return &h3Conn{c: c, tr: tr, cc: (&http3.Transport{}).NewClientConn(c), o: o}, nil
}

// doqConn sends each query on its own stream with a 2-byte length and FIN (RFC 9250 §4.2).
type doqConn struct {
	c  *quic.Conn
	tr *quic.Transport
}

func (d *doqConn) Close() error {
	_ = d.c.CloseWithError(0, "")
	return d.tr.Close()
}

func (d *doqConn) query(wire []byte, deadline time.Time) ([]byte, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	s, err := d.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	_ = s.SetDeadline(deadline)
	framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(wire)), uint16(len(wire)))
	if _, err := s.Write(append(framed, wire...)); err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(s, l[:]); err != nil {
		return nil, err
	}
	ans := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(s, ans); err != nil {
		return nil, err
	}
	return ans, nil
}

// h3Conn is one HTTP/3 connection used directly, so no pool can swap or add connections.
type h3Conn struct {
	c  *quic.Conn
	tr *quic.Transport
	cc *http3.ClientConn
	o  *options
}

func (h *h3Conn) Close() error {
	_ = h.c.CloseWithError(0x100, "")
	return h.tr.Close()
}

func (h *h3Conn) query(wire []byte, deadline time.Time) ([]byte, error) {
	return dohQuery(h.cc, h.o, wire, deadline)
}
