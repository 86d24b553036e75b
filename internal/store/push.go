package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// PartitionKey names a partition by its queue and partition names.
type PartitionKey struct {
	Queue     string
	Partition string
}

// EnsurePartitions creates the missing queues and partitions among keys and returns every key's
// partition id. It runs in its own short transaction so that creation never holds locks inside a push.
func (s *Store) EnsurePartitions(ctx context.Context, keys []PartitionKey) (map[PartitionKey]uuid.UUID, error) {
	qs := make([]string, len(keys))
	ps := make([]string, len(keys))
	for i, k := range keys {
		qs[i], ps[i] = k.Queue, k.Partition
	}
	b := &pgx.Batch{}
	b.Queue(q("QueueEnsure"), qs)
	b.Queue(q("PartitionEnsure"), qs, ps)
	if err := s.sendBatch(ctx, b); err != nil {
		return nil, fmt.Errorf("store: ensure partitions: %w", err)
	}
	rows, err := s.pool.Query(ctx, q("PartitionIDs"), qs, ps)
	if err != nil {
		return nil, fmt.Errorf("store: partition ids: %w", interpret(err))
	}
	out := make(map[PartitionKey]uuid.UUID, len(keys))
	for rows.Next() {
		var k PartitionKey
		var id uuid.UUID
		if err := rows.Scan(&k.Queue, &k.Partition, &id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: partition ids: %w", interpret(err))
		}
		out[k] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: partition ids: %w", interpret(err))
	}
	return out, nil
}

// sendBatch runs a batch whose statements return no rows. A batch without explicit transaction control
// runs as one implicit transaction, in one round-trip.
func (s *Store) sendBatch(ctx context.Context, b *pgx.Batch) error {
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return interpret(c.SendBatch(ctx, b).Close())
}

// PushRow is one message to insert.
type PushRow struct {
	PartitionID   uuid.UUID
	TransactionID string
	ID            uuid.UUID
	TraceID       *uuid.UUID
	Payload       []byte // JSON; never nil
	ProducerSub   *string
	Encrypted     bool
}

// PushOutcome tells, per row, whether it was inserted, and otherwise the id of the stored message that
// already holds its transactionId in that partition.
type PushOutcome struct {
	Inserted   bool
	ExistingID uuid.UUID
}

// Push inserts rows in one transaction. Each partition's
// rows get increasing sequence numbers in slice order, after everything already committed in that
// partition. Without an explicit transaction the statements form one implicit transaction.
func (s *Store) Push(ctx context.Context, rows []PushRow) ([]PushOutcome, error) {
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release() // a connection left inside a transaction is discarded by the pool
	out, err := push(ctx, c, rows, true, s.now())
	if err != nil && !c.Conn().IsClosed() {
		_, _ = c.Exec(context.WithoutCancel(ctx), q("Rollback"))
	}
	return out, err
}

// Push inserts rows inside the transaction; see [Store.Push]. The partitions stay locked until the
// transaction ends, which is what keeps later pushes to them behind these rows.
func (t *Tx) Push(ctx context.Context, rows []PushRow) ([]PushOutcome, error) {
	return push(ctx, t.tx, rows, false, t.s.now())
}

// batcher is what push needs of a connection or a transaction.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// push runs the push statements on db; with own it opens and commits the transaction itself, inside
// its one pipelined batch (one batch per segment when the payloads exceed segmentBytes).
func push(ctx context.Context, db batcher, rows []PushRow, own bool, now pgtype.Timestamptz) ([]PushOutcome, error) {
	n := len(rows)
	idx := make([]int32, n)
	pids := make([]uuid.UUID, n)
	txids := make([]string, n)
	ids := make([]uuid.UUID, n)
	traces := make([]pgtype.UUID, n)
	payloads := make([][]byte, n)
	subs := make([]pgtype.Text, n)
	enc := make([]bool, n)
	seen := make(map[uuid.UUID]struct{})
	var lock []uuid.UUID
	for i, r := range rows {
		idx[i], pids[i], txids[i], ids[i] = int32(i), r.PartitionID, r.TransactionID, r.ID
		traces[i], payloads[i], subs[i], enc[i] = pgUUID(r.TraceID), r.Payload, pgText(r.ProducerSub), r.Encrypted
		if _, ok := seen[r.PartitionID]; !ok {
			seen[r.PartitionID] = struct{}{}
			lock = append(lock, r.PartitionID)
		}
	}
	out := make([]PushOutcome, n)
	// One MessageInsert for the whole push, or one per segment of a large push (push_segments.go).
	stmts := [][]any{{idx, pids, txids, ids, traces, payloads, subs, enc, QueueMode, now}}
	if segs := segments(rows); segs != nil {
		stmts = stmts[:0]
		for _, at := range segs {
			stmts = append(stmts, []any{at, gather(pids, at), gather(txids, at), gather(ids, at), gather(traces, at),
				gather(payloads, at), gather(subs, at), gather(enc, at), QueueMode, now})
		}
	}
	for k, args := range stmts {
		b := &pgx.Batch{}
		if k == 0 {
			if own {
				b.Queue(q("Begin"))
				b.Queue(q("HotPathSettings"), true)
			}
			b.Queue(q("PartitionLock"), lock)
		}
		b.Queue(q("MessageInsert"), args...).Query(func(rs pgx.Rows) error {
			for rs.Next() {
				var i int32
				if err := rs.Scan(&i); err != nil {
					return err
				}
				out[i].Inserted = true
			}
			return rs.Err()
		})
		if own && k == len(stmts)-1 {
			b.Queue(q("Commit"))
		}
		if err := db.SendBatch(ctx, b).Close(); err != nil {
			return nil, fmt.Errorf("store: push: %w", interpret(err))
		}
	}

	var dIdx []int32
	var dPids []uuid.UUID
	var dTx []string
	for i := range out {
		if !out[i].Inserted {
			dIdx, dPids, dTx = append(dIdx, int32(i)), append(dPids, pids[i]), append(dTx, txids[i])
		}
	}
	if len(dIdx) == 0 {
		return out, nil
	}
	rs, err := db.Query(ctx, q("MessageExistingIDs"), dIdx, dPids, dTx)
	if err != nil {
		return nil, fmt.Errorf("store: push duplicates: %w", interpret(err))
	}
	defer rs.Close()
	for rs.Next() {
		var i int32
		var id uuid.UUID
		if err := rs.Scan(&i, &id); err != nil {
			return nil, fmt.Errorf("store: push duplicates: %w", interpret(err))
		}
		out[i].ExistingID = id
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: push duplicates: %w", interpret(err))
	}
	return out, nil
}
