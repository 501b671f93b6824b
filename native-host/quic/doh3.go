// DNS over HTTPS over HTTP/3 (RFC 8484 over RFC 9114): one request per query on the connection's HTTP/3 client.

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/quic-go/quic-go/http3"
)

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
