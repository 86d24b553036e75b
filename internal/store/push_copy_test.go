package store

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestCopySourceStreamsWholeRows reads MessageCopy's binary stream through buffers of several sizes,
// down to one byte and around the rows' own sizes: whatever the driver's buffer, the stream is the
// header, every row as appendCopyRow encodes it, and the trailer, and copyRowSize is every row's
// encoded length (Read relies on it to encode in place).
func TestCopySourceStreamsWholeRows(t *testing.T) {
	sub := "producer"
	trace := uuid.New()
	var rows []PushRow
	for i, size := range []int{0, 1, 30, 200, 70 << 10, 5, 3 << 20, 64} {
		r := PushRow{PartitionID: uuid.New(), TransactionID: strings.Repeat("t", i*3), ID: uuid.New(),
			Payload: []byte(`"` + strings.Repeat("p", size) + `"`), Encrypted: i%2 == 0}
		if i%3 == 0 {
			r.TraceID = &trace
		}
		if i%2 == 1 {
			r.ProducerSub = &sub
		}
		rows = append(rows, r)
	}
	var copied []copyRow
	want := []byte(copyHeader)
	for i := range rows {
		c := copyRow{row: &rows[i], seq: int64(i + 1), at: int64(i) * 1000}
		copied = append(copied, c)
		enc := appendCopyRow(nil, &c)
		require.Len(t, enc, copyRowSize(&c), "row %d", i)
		want = append(want, enc...)
	}
	want = binary.BigEndian.AppendUint16(want, 0xffff)

	for _, bufSize := range []int{1, 2, 7, 19, 64, 250, 4096, 65531, 4 << 20} {
		for _, n := range []int{0, 1, len(copied)} {
			src := newCopySource()
			src.rows = append(src.rows, copied[:n]...)
			var got bytes.Buffer
			p := make([]byte, bufSize)
			for {
				k, err := src.Read(p)
				got.Write(p[:k])
				if err == io.EOF {
					break
				}
				if err != nil || k == 0 { // checked without testify: this loop runs a million times
					t.Fatalf("buffer %d, %d rows: read %d bytes, error %v before the end", bufSize, n, k, err)
				}
			}
			src.release()
			exp := want
			if n < len(copied) {
				exp = []byte(copyHeader)
				for i := range n {
					exp = appendCopyRow(exp, &copied[i])
				}
				exp = binary.BigEndian.AppendUint16(exp, 0xffff)
			}
			require.True(t, bytes.Equal(exp, got.Bytes()), "buffer %d, %d rows", bufSize, n)
		}
	}
}
