package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DLQFilter selects dead letters; zero fields do not filter.
type DLQFilter struct {
	Queue, Group, Partition string
	From, To                time.Time
	Limit, Offset           int
}

// DeadLetterRow is a dead letter with its message.
type DeadLetterRow struct {
	MessageID     uuid.UUID
	TransactionID string
	PartitionID   uuid.UUID
	Queue         string
	Partition     string
	Group         string
	Error         *string
	RetryCount    int32
	Payload       []byte
	Encrypted     *bool
	ProducerSub   *string
	TraceID       *uuid.UUID
	CreatedAt     time.Time
	FailedAt      time.Time
}

func scanDeadLetter(r pgx.Rows, total *int64) (d DeadLetterRow, err error) {
	err = r.Scan(&d.MessageID, &d.TransactionID, &d.PartitionID, &d.Queue, &d.Partition, &d.Group, &d.Error,
		&d.RetryCount, &d.Payload, &d.Encrypted, &d.ProducerSub, &d.TraceID, &d.CreatedAt, &d.FailedAt, total)
	return d, err
}

// ListDeadLetters returns one page of dead letters, newest failure first, and the filtered total, both
// read from one snapshot.
func (d DeadLetters) ListDeadLetters(ctx context.Context, f DLQFilter) ([]DeadLetterRow, int64, error) {
	s := d.s
	args := []any{nullText(f.Queue), nullText(f.Group), nullText(f.Partition), nullTime(f.From), nullTime(f.To)}
	var out []DeadLetterRow
	var total int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q("DeadLetterList"), append(args, f.Limit, f.Offset)...)
		if err != nil {
			return err
		}
		var ignored int64
		out, err = collectRows(rows, func(r pgx.Rows) (DeadLetterRow, error) { return scanDeadLetter(r, &ignored) })
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("DeadLetterCount"), args...).Scan(&total)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list dead letters: %w", interpret(err))
	}
	return out, total, nil
}

// GetDeadLetters returns the dead letters of one message (one per group; only group's when given).
func (d DeadLetters) GetDeadLetters(ctx context.Context, partitionID uuid.UUID, txID, group string) ([]DeadLetterRow, error) {
	s := d.s
	var ignored int64
	return collect(ctx, s, "DeadLetterGet", func(r pgx.Rows) (DeadLetterRow, error) { return scanDeadLetter(r, &ignored) },
		partitionID, txID, nullText(group))
}

// DeleteDeadLetters removes the dead letters of one message and reports how many there were.
func (d DeadLetters) DeleteDeadLetters(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	s := d.s
	s.changed.notePartition(partitionID)
	return s.countQuery(ctx, "DeadLetterDelete", partitionID, txID, nullText(group))
}

// RetryDeadLetters serves the message again to each group it was dead-lettered for and removes the
// dead letters; it reports how many there were.
func (d DeadLetters) RetryDeadLetters(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	s := d.s
	s.changed.notePartition(partitionID)
	return s.countQuery(ctx, "DeadLetterRetry", partitionID, txID, nullText(group), s.now())
}

func (s *Store) countQuery(ctx context.Context, name string, args ...any) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, q(name), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	return n, nil
}

// DLQByQueue counts dead-letter rows per queue name.
func (d DeadLetters) DLQByQueue(ctx context.Context) (map[string]int64, error) {
	s := d.s
	rows, err := s.pool.Query(ctx, q("DeadLetterCountByQueue"))
	if err != nil {
		return nil, fmt.Errorf("store: dlq by queue: %w", interpret(err))
	}
	out := map[string]int64{}
	err = eachRow(rows, func(r pgx.Rows) error {
		var name string
		var n int64
		if err := r.Scan(&name, &n); err != nil {
			return err
		}
		out[name] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: dlq by queue: %w", interpret(err))
	}
	return out, nil
}
