package store

import (
	"context"
	"encoding/binary"
	"io"
	"sync"
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

// copySource writes rows in PostgreSQL's binary COPY format as the driver reads it, encoding each row
// straight into the driver's buffer: a row that does not fit the space left is encoded once into
// spill and handed out from there, so at most one row's encoding is held besides what the driver
// sends, and a large push is never held again as a whole (docs/decisions.md "Memory bound"). Encoding
// here rather than through the driver's generic row encoder spares a value boxed per column and a type
// lookup per value; encoding into the driver's buffer spares a buffer grown per push (a third of what
// the broker allocated per pushed message).
type copySource struct {
	rows   []copyRow
	next   int
	spill  []byte // the header, the trailer, or the encoding of one row that did not fit; reused
	buf    []byte // the part of spill not yet read
	header bool   // the header was written
	done   bool   // the trailer was written
}

// copyHeader is the binary COPY signature, flags and header extension length.
const copyHeader = "PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000"

// spillKeep and rowsKeep bound what a pooled copySource keeps between pushes: only rows over 64 KiB need
// a larger spill, and only pushes of more rows than the coalescer merges a longer row list; such a push
// pays for its own.
const (
	spillKeep = 64 << 10
	rowsKeep  = 4096
)

var copySources = sync.Pool{New: func() any { return new(copySource) }}

// newCopySource takes a source from the pool; the caller sets its rows, appending to the rows slice it
// comes with so that slice is reused too.
func newCopySource() *copySource {
	return copySources.Get().(*copySource)
}

// release returns s to the pool, without its rows' contents (their payloads must not outlive the push).
// A source too large to be worth keeping is left to the collector.
func (s *copySource) release() {
	if cap(s.spill) > spillKeep || cap(s.rows) > rowsKeep {
		return
	}
	clear(s.rows)
	*s = copySource{rows: s.rows[:0], spill: s.spill[:0]}
	copySources.Put(s)
}

func (s *copySource) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) > 0 {
			k := copy(p[n:], s.buf)
			s.buf = s.buf[k:]
			n += k
			continue
		}
		switch {
		case !s.header:
			s.buf, s.header = append(s.spill[:0], copyHeader...), true
		case s.next < len(s.rows):
			c := &s.rows[s.next]
			s.next++
			if size := copyRowSize(c); size <= len(p)-n {
				// p[n:n:len(p)] has room for the whole row, so appending writes into p in place.
				appendCopyRow(p[n:n:len(p)], c)
				n += size
				continue
			}
			s.spill = appendCopyRow(s.spill[:0], c)
			s.buf = s.spill
		case !s.done:
			s.buf, s.done = append(s.spill[:0], 0xff, 0xff), true // trailer: field count -1
		default:
			return n, io.EOF
		}
	}
	return n, nil
}

// copyRowSize is the length of appendCopyRow's encoding of c.
func copyRowSize(c *copyRow) int {
	r := c.row
	n := 2 + 9*4 + 16 + 8 + 16 + len(r.TransactionID) + 1 + len(r.Payload) + 1 + 8
	if r.TraceID != nil {
		n += 16
	}
	if r.ProducerSub != nil {
		n += len(*r.ProducerSub)
	}
	return n
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

// copyMessages runs MessageCopy on conn with the rows of src, and releases src once the driver is
// done with it. The driver does not trace a copy sent through its
// low-level connection, so the connection's tracer, when it has one, is called here as for any
// statement.
func copyMessages(ctx context.Context, conn *pgx.Conn, src *copySource) (err error) {
	sql := q("MessageCopy")
	if t := conn.Config().Tracer; t != nil {
		ctx = t.TraceQueryStart(ctx, conn, pgx.TraceQueryStartData{SQL: sql})
		defer func() { t.TraceQueryEnd(ctx, conn, pgx.TraceQueryEndData{Err: err}) }()
	}
	_, err = conn.PgConn().CopyFrom(ctx, src, sql)
	if err == nil {
		// Only a copy that succeeded is sure to have stopped reading src: on some errors the driver
		// returns while its sending goroutine may still be in Read.
		src.release()
	}
	return err
}
