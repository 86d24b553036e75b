package store

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// A push of a few rows spent more on its round trips than on its rows: the batch of locks and bump,
// then COPY (its query, the data, its completion, with the driver's sending goroutine), then the
// commit, each a write and a wake-up of the broker and of PostgreSQL. Such a push, when it is the
// broker's own transaction and looks nothing up first, sends its rows as MessageInsert parameters in
// the same batch as the bump and the commit: one round trip. Larger pushes keep COPY, which costs
// PostgreSQL less per row and never holds a push's rows encoded twice (docs/decisions.md "Memory bound").
const (
	defaultInlineRows = 16       // rows of a push sent inline at most (Store.inlineRows; tests set 0)
	inlineBytesMax    = 64 << 10 // payload bytes of a push sent inline at most
)

// inlineable reports whether the rows kept of a push are at most max and small enough to go inline.
func inlineable(rows []PushRow, keep []int32, max int) bool {
	if len(keep) > max {
		return false
	}
	n := 0
	for _, i := range keep {
		if n += len(rows[i].Payload); n > inlineBytesMax {
			return false
		}
	}
	return true
}

// queueInline queues MessageInsert for the kept rows: their partition and ordinal (ords), and each
// partition's count as PartitionBump got it (lock, counts), from which the statement numbers them.
func queueInline(b *pgx.Batch, rows []PushRow, keep, ords []int32, lock []uuid.UUID, counts []int32) {
	n := len(keep)
	parts, ids, traces := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]pgtype.UUID, n)
	ks, enc := make([]int32, n), make([]bool, n)
	txs, payloads, subs := make([]string, n), make([]string, n), make([]*string, n)
	for j, i := range keep {
		r := &rows[i]
		parts[j], ks[j], ids[j], txs[j] = r.PartitionID, ords[i], r.ID, r.TransactionID
		if r.TraceID != nil {
			traces[j] = pgtype.UUID{Bytes: *r.TraceID, Valid: true}
		}
		payloads[j], subs[j], enc[j] = string(r.Payload), r.ProducerSub, r.Encrypted
	}
	b.Queue(q("MessageInsert"), parts, ks, ids, txs, traces, payloads, subs, enc, lock, counts)
}
