// DNS over QUIC (RFC 9250): one query per bidirectional stream.

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

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
	answer, err := readDoQAnswer(bufio.NewReader(str))
	if err != nil {
		str.CancelRead(0)
		return nil, err
	}
	qc.pc.addDNS(0, int64(2+len(answer)))
	return answer, nil
}

// readDoQAnswer reads one answer from a DoQ stream: a 2-byte length, then that many bytes (RFC 9250 §4.2); a stream
// that ends before it is whole is a coded error.
func readDoQAnswer(r io.Reader) ([]byte, error) {
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &coded{codeClosed, "query: the stream ended before an answer"}
		}
		return nil, err
	}
	answer := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, answer); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &coded{codeClosed, fmt.Sprintf("query: the stream ended mid-answer (%d bytes announced)", len(answer))}
		}
		return nil, err
	}
	return answer, nil
}
