// Fuzzing the companion's boundaries (issue 26 item 7), with Go's native fuzzing: the host's frames on stdin (framing,
// JSON, the request checks an open or exchange passes before anything is dialled, a CA in PEM), and a DoQ answer as
// it arrives on a stream. Nothing here opens a socket. `go test` runs the seeds; the recorded runs:
//
//	go test -run '^$' -fuzz '^FuzzFrames$' -fuzztime 1000000x .
//	go test -run '^$' -fuzz '^FuzzDoQAnswer$' -fuzztime 1000000x .

package main

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"
)

func frame(body string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// The replies in buf, each a frame holding a JSON reply with a type; false when one is not.
func repliesOK(t *testing.T, buf []byte) bool {
	r := bytes.NewReader(buf)
	for r.Len() > 0 {
		body, err := readFrame(r)
		if err != nil {
			t.Errorf("a reply frame that does not read back: %v", err)
			return false
		}
		var rep reply
		if err := json.Unmarshal(body, &rep); err != nil || rep.Type == "" {
			t.Errorf("a reply that is not one: %q", body)
			return false
		}
		// Refused for what it is, or (an exchange) for the connection it names, which is not open here.
		if rep.Type == "error" && rep.Code != codeBadRequest && rep.Code != codeClosed {
			t.Errorf("a request refused with %q", rep.Code)
			return false
		}
	}
	return true
}

func FuzzFrames(f *testing.F) {
	query := base64.StdEncoding.EncodeToString(make([]byte, 12))
	for _, seed := range [][]byte{
		frame(`{"id":1,"type":"hello"}`),
		append(frame(`{"id":2,"type":"open","transport":"doq","address":"192.0.2.1","port":853,"timeoutMs":500}`), frame(`{"id":3,"type":"exchange","conn":9,"query":"`+query+`"}`)...),
		frame(`{"id":4,"type":"open","transport":"doh3","address":"::1","port":443,"ca":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n","timeoutMs":1}`),
		frame(`{"id":5,"type":"what"}`),
		frame(`{"id":`),
		{0, 0, 0, 200, '{'},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var buf bytes.Buffer
		c := &companion{out: &out{w: &buf}, conns: map[int64]*qconn{}, caches: map[int64]*ticketCache{}, pools: map[string]*x509.CertPool{}}
		in := bytes.NewReader(data)
		for frames := 0; frames < 64; frames++ {
			body, err := readFrame(in)
			if err != nil {
				if len(body) > maxFrame {
					t.Fatalf("a frame of %d bytes read past the limit", len(body))
				}
				break
			}
			r, ok := c.decode(body)
			if !ok {
				continue
			}
			// What each request is checked for before a socket would open: the hello's CA, an open's server and CA, an
			// exchange's query and connection (none is open here).
			switch r.Type {
			case "hello":
				c.hello(r)
			case "open":
				if ip, why := checkOpen(r); why == "" {
					if ip == nil {
						t.Fatalf("an open request passed with no address: %+v", r)
					}
					if _, err := c.pool(r.CA); err != nil && r.CA == "" {
						t.Fatalf("no CA, yet the pool failed: %v", err)
					}
				}
			case "exchange":
				if q, ok := decodeQuery(r.Query); ok && (len(q) < 12 || len(q) > maxAnswer) {
					t.Fatalf("a query of %d bytes passed", len(q))
				}
				c.exchange(r)
			case "close":
				c.close(r)
			}
		}
		repliesOK(t, buf.Bytes())
	})
}

func FuzzDoQAnswer(f *testing.F) {
	for _, seed := range [][]byte{{0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {0, 40, 1}, {0}, {}, {0xff, 0xff}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		answer, err := readDoQAnswer(bytes.NewReader(data))
		if err != nil {
			var c *coded
			if !errors.As(err, &c) || c.code != codeClosed {
				t.Fatalf("an uncoded error: %v", err)
			}
			return
		}
		if len(data) < 2 || len(answer) != int(binary.BigEndian.Uint16(data)) || len(answer) > len(data)-2 {
			t.Fatalf("an answer of %d bytes from %d bytes", len(answer), len(data))
		}
		if !bytes.Equal(answer, data[2:2+len(answer)]) {
			t.Fatal("the answer is not the stream's bytes")
		}
	})
}
