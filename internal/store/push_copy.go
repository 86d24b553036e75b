package store

import (
	"context"
	"encoding/binary"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// copyRow is one numbered row of MessageCopy.
type copyRow struct {
	row *PushRow
	seq int64
	at  int64 // created_at in PostgreSQL's binary form: microseconds since 2000-01-01 UTC
}

// pgEpochMicros converts t to the binary timestamptz of PostgreSQL.
func pgEpochMicros(t time.Time) int64 {
	const unixToPG = 946684800 // seconds from 1970-01-01 to 2000-01-01
	return (t.Unix()-unixToPG)*1_000_000 + int64(t.Nanosecond()/1000)
}

// copySource writes rows in PostgreSQL's binary COPY format as the driver reads it, one row at a time:
// at most one row's encoding is held besides what the driver sends, so a large push is never held
// again as a whole (docs/decisions.md "Memory bound"). Encoding here rather than through the driver's
// generic row encoder spares a value boxed per column and a type lookup per value.
type copySource struct {
	rows []copyRow
	next int
	mem  []byte // backing array of buf, reused by every fill
	buf  []byte // the encoded rest not yet read
	done bool   // the trailer is in buf
}

func newCopySource(rows []copyRow) *copySource {
	// Signature, flags, header extension length.
	s := &copySource{rows: rows, mem: make([]byte, 0, 4096)}
	s.buf = append(s.mem, "PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000"...)
	return s
}

func (s *copySource) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			if s.done {
				return n, io.EOF
			}
			s.fill(len(p) - n)
		}
		k := copy(p[n:], s.buf)
		s.buf = s.buf[k:]
		n += k
	}
	return n, nil
}

// fill encodes rows until about want bytes are ready, or the trailer after the last row.
func (s *copySource) fill(want int) {
	b := s.mem[:0]
	for len(b) < want && s.next < len(s.rows) {
		b = appendCopyRow(b, &s.rows[s.next])
		s.next++
	}
	if s.next == len(s.rows) && len(b) < want {
		b = binary.BigEndian.AppendUint16(b, 0xffff) // trailer: field count -1
		s.done = true
	}
	s.mem, s.buf = b, b
}

// appendCopyRow encodes the columns of MessageCopy in their order.
func appendCopyRow(b []byte, c *copyRow) []byte {
	r := c.row
	b = binary.BigEndian.AppendUint16(b, 9)
	b = appendField(b, r.PartitionID[:])
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint64(b, uint64(c.seq))
	b = appendField(b, r.ID[:])
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.TransactionID)))
	b = append(b, r.TransactionID...)
	if r.TraceID != nil {
		b = appendField(b, r.TraceID[:])
	} else {
		b = binary.BigEndian.AppendUint32(b, 0xffffffff) // NULL
	}
	b = binary.BigEndian.AppendUint32(b, uint32(1+len(r.Payload)))
	b = append(b, 1) // jsonb binary format version
	b = append(b, r.Payload...)
	if r.ProducerSub != nil {
		b = binary.BigEndian.AppendUint32(b, uint32(len(*r.ProducerSub)))
		b = append(b, *r.ProducerSub...)
	} else {
		b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	b = binary.BigEndian.AppendUint32(b, 1)
	if r.Encrypted {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(c.at))
}

func appendField(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// copyMessages runs MessageCopy on conn with rows. The driver does not trace a copy sent through its
// low-level connection, so the connection's tracer, when it has one, is called here as for any
// statement.
func copyMessages(ctx context.Context, conn *pgx.Conn, rows []copyRow) (err error) {
	sql := q("MessageCopy")
	if t := conn.Config().Tracer; t != nil {
		ctx = t.TraceQueryStart(ctx, conn, pgx.TraceQueryStartData{SQL: sql})
		defer func() { t.TraceQueryEnd(ctx, conn, pgx.TraceQueryEndData{Err: err}) }()
	}
	_, err = conn.PgConn().CopyFrom(ctx, newCopySource(rows), sql)
	return err
}
