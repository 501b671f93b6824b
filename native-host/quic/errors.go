// How a failure becomes a stable error code (common/errors.ts) and a message naming the phase it happened in.

package main

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/quic-go/quic-go"
)

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
