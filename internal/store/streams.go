package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// StreamQuery is a stream query registration request.
type StreamQuery struct {
	Name, SourceQueue, SinkQueue, ConfigHash string
	Reset                                    bool
}

// StreamRegistration is what a registration did. Mismatch means the stored hash differs and no reset
// was asked for: nothing was changed.
type StreamRegistration struct {
	ID       uuid.UUID
	Fresh    bool
	Reset    bool
	Mismatch bool
}

// RegisterStreamQuery inserts or updates the query named sq.Name in one transaction. A changed config
// hash is only accepted with Reset, and then every state row of the query is deleted with it.
func (ss Streams) RegisterStreamQuery(ctx context.Context, sq StreamQuery) (StreamRegistration, error) {
	s := ss.s
	var out StreamRegistration
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		out = StreamRegistration{}
		if _, err := tx.Exec(ctx, q("StreamsLockQueryName"), sq.Name); err != nil {
			return err
		}
		var stored string
		err := tx.QueryRow(ctx, q("StreamsQueryByName"), sq.Name).Scan(&out.ID, &stored)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			out.Fresh = true
			return tx.QueryRow(ctx, q("StreamsInsertQuery"), sq.Name, sq.SourceQueue, sq.SinkQueue, sq.ConfigHash).Scan(&out.ID)
		case err != nil:
			return err
		}
		if stored != sq.ConfigHash {
			if !sq.Reset {
				out.Mismatch = true
				return nil
			}
			if _, err := tx.Exec(ctx, q("StreamsWipeState"), out.ID); err != nil {
				return err
			}
			out.Reset = true
		}
		_, err = tx.Exec(ctx, q("StreamsUpdateQuery"), out.ID, sq.SourceQueue, sq.SinkQueue, sq.ConfigHash)
		return err
	})
	if err != nil {
		return StreamRegistration{}, fmt.Errorf("store: register stream query: %w", interpret(err))
	}
	return out, nil
}

// StateFilter selects state rows of one shard; the filters are ANDed.
type StateFilter struct {
	QueryID, PartitionID uuid.UUID
	Keys                 []string // empty: every key
	KeyPrefix            string   // "": no prefix filter
	RipeAtOrBefore       *float64 // only rows whose numeric value.windowEnd is at or before it
}

// StateRow is one state row as the state read route returns it.
type StateRow struct {
	Key       string
	Value     json.RawMessage
	UpdatedAt time.Time
}

// StreamState reads the state rows of one shard, ordered by key.
func (ss Streams) StreamState(ctx context.Context, f StateFilter) ([]StateRow, error) {
	s := ss.s
	keys := f.Keys
	if keys == nil {
		keys = []string{}
	}
	rows, err := s.pool.Query(ctx, q("StreamsGetState"), f.QueryID, f.PartitionID, keys, f.KeyPrefix, f.RipeAtOrBefore)
	if err != nil {
		return nil, fmt.Errorf("store: stream state: %w", interpret(err))
	}
	out, err := collectRows(rows, func(r pgx.Rows) (StateRow, error) {
		var sr StateRow
		var v []byte
		err := r.Scan(&sr.Key, &v, &sr.UpdatedAt)
		sr.Value = v
		return sr, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: stream state: %w", interpret(err))
	}
	return out, nil
}

// StateOp is one state change of a cycle: an upsert of Value (JSON) or a delete of Key. With Check,
// the row must still be as the writer read it: absent (ExpectAbsent) or stored at ExpectUpdatedAt.
// With MustExist, a delete that finds no row is a conflict: the writer read a row that is gone.
type StateOp struct {
	Delete          bool
	Key             string
	Value           json.RawMessage
	Check           bool
	ExpectAbsent    bool
	ExpectUpdatedAt time.Time
	MustExist       bool
}

// StateConflictError means a checked state op found its row changed since the writer read it.
type StateConflictError struct{ Key string }

func (e *StateConflictError) Error() string {
	return fmt.Sprintf("state conflict: key %q changed since it was read", e.Key)
}

// LockStreamShard takes the transaction-scoped lock of one (query, source partition) shard.
func (t *Tx) LockStreamShard(ctx context.Context, queryID, partitionID uuid.UUID) error {
	if _, err := t.tx.Exec(ctx, q("StreamsLockShard"), queryID.String(), partitionID.String()); err != nil {
		return fmt.Errorf("store: lock stream shard: %w", interpret(err))
	}
	return nil
}

// StreamSourceQueue names the queue of a source partition, "" when no such partition exists.
func (t *Tx) StreamSourceQueue(ctx context.Context, partitionID uuid.UUID) (string, error) {
	rows, err := t.tx.Query(ctx, q("StreamsSourceQueue"), partitionID)
	if err != nil {
		return "", fmt.Errorf("store: stream source queue: %w", interpret(err))
	}
	names, err := collectRows(rows, scanOne[string])
	if err != nil {
		return "", fmt.Errorf("store: stream source queue: %w", interpret(err))
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// ApplyStateOps applies ops in order to the shard, pipelined in one round-trip.
func (t *Tx) ApplyStateOps(ctx context.Context, queryID, partitionID uuid.UUID, ops []StateOp) error {
	if len(ops) == 0 {
		return nil
	}
	if err := t.checkStateVersions(ctx, queryID, partitionID, ops); err != nil {
		return err // a *StateConflictError, or wrapped already
	}
	b := &pgx.Batch{}
	for _, op := range ops {
		if op.Delete {
			b.Queue(q("StreamsDeleteState"), queryID, partitionID, op.Key)
			continue
		}
		b.Queue(q("StreamsUpsertState"), queryID, partitionID, op.Key, []byte(op.Value))
	}
	br := t.tx.SendBatch(ctx, b)
	for _, op := range ops {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return fmt.Errorf("store: apply state ops: %w", interpret(err))
		}
		if op.Delete && op.MustExist && tag.RowsAffected() == 0 {
			_ = br.Close()
			return &StateConflictError{Key: op.Key}
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("store: apply state ops: %w", interpret(err))
	}
	return nil
}

// RecordStreamCycle records a cycle id of the shard for keep in the transaction; false means the id
// is recorded already, by a committed cycle this one repeats. A fresh record also forgets the shard's
// expired ids.
func (t *Tx) RecordStreamCycle(ctx context.Context, queryID, partitionID uuid.UUID, cycleID string, keep time.Duration) (bool, error) {
	rows, err := t.tx.Query(ctx, q("StreamsRecordCycle"), queryID, partitionID, cycleID, keep.Seconds())
	if err != nil {
		return false, fmt.Errorf("store: record stream cycle: %w", interpret(err))
	}
	n, err := collectRows(rows, scanOne[int32])
	if err != nil {
		return false, fmt.Errorf("store: record stream cycle: %w", interpret(err))
	}
	if len(n) == 0 {
		return false, nil
	}
	if _, err := t.tx.Exec(ctx, q("StreamsForgetCycles"), queryID, partitionID); err != nil {
		return false, fmt.Errorf("store: forget stream cycles: %w", interpret(err))
	}
	return true, nil
}

// StreamSourceLeased locks the consumer row of (source partition, group) until the transaction ends
// and says whether its lease is live; a pop of the partition waits for the lock.
func (t *Tx) StreamSourceLeased(ctx context.Context, partitionID uuid.UUID, group string) (bool, error) {
	rows, err := t.tx.Query(ctx, q("StreamsSourceLeased"), partitionID, group, t.s.now())
	if err != nil {
		return false, fmt.Errorf("store: stream source lease: %w", interpret(err))
	}
	live, err := collectRows(rows, scanOne[bool])
	if err != nil {
		return false, fmt.Errorf("store: stream source lease: %w", interpret(err))
	}
	return len(live) > 0 && live[0], nil
}

// checkStateVersions compares the first checked op of every key with the stored row. The shard lock
// is held, so nothing can change a row between this read and the writes that follow.
func (t *Tx) checkStateVersions(ctx context.Context, queryID, partitionID uuid.UUID, ops []StateOp) error {
	want := map[string]StateOp{}
	var keys []string
	for _, op := range ops {
		if _, seen := want[op.Key]; seen || !op.Check {
			if !seen {
				want[op.Key] = StateOp{} // an unchecked first op: later ops on the key are ours
			}
			continue
		}
		want[op.Key] = op
		keys = append(keys, op.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	rows, err := t.tx.Query(ctx, q("StreamsStateVersions"), queryID, partitionID, keys)
	if err != nil {
		return fmt.Errorf("store: state versions: %w", interpret(err))
	}
	stored := map[string]time.Time{}
	err = eachRow(rows, func(r pgx.Rows) error {
		var k string
		var at time.Time
		if err := r.Scan(&k, &at); err != nil {
			return err
		}
		stored[k] = at
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: state versions: %w", interpret(err))
	}
	for _, k := range keys {
		op := want[k]
		at, ok := stored[k]
		if op.ExpectAbsent && ok || !op.ExpectAbsent && (!ok || !at.Equal(op.ExpectUpdatedAt)) {
			return &StateConflictError{Key: k}
		}
	}
	return nil
}
