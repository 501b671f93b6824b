// The protocol with the host (native-host/src/transports/quic-protocol.ts): request and reply frames, the stable
// error codes, the wire counters a reply carries, and the length-prefixed JSON framing on stdin and stdout.

package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
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
	// When the last datagram counted as received was read (same clock; 0 before any): a datagram a capture stamps
	// after it and before At was still in the socket's queue when the counters were read.
	ReadAt int64 `json:"readAt"`
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
