package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// LeaseExtension is the outcome for one partition held under a lease.
type LeaseExtension struct {
	PartitionID uuid.UUID
	Live        bool
	ExpiresAt   pgtype.Timestamptz
}

// ExtendLease pushes the expiry of every partition held under leaseID to at least now+d; it never
// shortens a lease. No rows: the lease id is unknown.
func (s *Store) ExtendLease(ctx context.Context, leaseID uuid.UUID, d time.Duration) ([]LeaseExtension, error) {
	var out []LeaseExtension
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q("ExtendLease"), leaseID, d.Seconds())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (e LeaseExtension, err error) {
			err = r.Scan(&e.PartitionID, &e.Live, &e.ExpiresAt)
			return e, err
		})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, q("ApplyLeaseExtension"), leaseID, d.Seconds())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: extend lease %s: %w", leaseID, interpret(err))
	}
	return out, nil
}

// DeleteQueue removes a queue with its partitions, messages, cursors and dead letters; false when
// there was no such queue.
func (s *Store) DeleteQueue(ctx context.Context, name string) (bool, error) {
	n, err := s.countQuery(ctx, "DeleteQueue", name)
	return n > 0, err
}

// QueuesByNamespaceTask lists the queues matching namespace and/or task ("" matches any), highest
// priority first.
func (s *Store) QueuesByNamespaceTask(ctx context.Context, namespace, task string) ([]string, error) {
	return collect(ctx, s, "QueuesByNamespaceTask", func(r pgx.Rows) (n string, err error) {
		err = r.Scan(&n)
		return n, err
	}, text(namespace), text(task))
}

// Backlog is a queue's capacity and how many messages it holds unconsumed.
type Backlog struct {
	MaxSize int64
	Pending int64
}

// QueueBacklogs reports the backlog of those of queues that have a maxSize.
func (s *Store) QueueBacklogs(ctx context.Context, queues []string) (map[string]Backlog, error) {
	type row struct {
		name string
		b    Backlog
	}
	rows, err := collect(ctx, s, "QueueBacklog", func(r pgx.Rows) (x row, err error) {
		var max int32
		err = r.Scan(&x.name, &max, &x.b.Pending)
		x.b.MaxSize = int64(max)
		return x, err
	}, queues)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Backlog, len(rows))
	for _, r := range rows {
		out[r.name] = r.b
	}
	return out, nil
}

// ExpireWaiting moves up to limit messages that waited longer than their queue's maxWaitTimeSeconds to
// the dead letters of each group still waiting for them. It does nothing when another broker holds the
// job lock; it reports how many messages it moved.
func (s *Store) ExpireWaiting(ctx context.Context, lockKey int64, limit int) (int64, error) {
	var n int64
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var got bool
		if err := tx.QueryRow(ctx, q("TryJobLock"), lockKey).Scan(&got); err != nil || !got {
			return err
		}
		return tx.QueryRow(ctx, q("ExpireWaiting"), limit).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store: expire waiting: %w", interpret(err))
	}
	return n, nil
}

// QueueLimits returns the maxSize of each named queue that exists.
func (s *Store) QueueLimits(ctx context.Context, queues []string) (map[string]int32, error) {
	type row struct {
		name string
		max  int32
	}
	rows, err := collect(ctx, s, "QueueLimits", func(r pgx.Rows) (x row, err error) {
		err = r.Scan(&x.name, &x.max)
		return x, err
	}, queues)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(rows))
	for _, r := range rows {
		out[r.name] = r.max
	}
	return out, nil
}

// States reads shared flags of system_state in one round-trip (false for a flag never set).
func (s *Store) States(ctx context.Context, keys ...string) (map[string]bool, error) {
	type row struct {
		key string
		v   bool
	}
	rows, err := collect(ctx, s, "GetStates", func(r pgx.Rows) (x row, err error) {
		err = r.Scan(&x.key, &x.v)
		return x, err
	}, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(keys))
	for _, r := range rows {
		out[r.key] = r.v
	}
	return out, nil
}

// SetState writes a shared flag of system_state, seen by every broker on the database.
func (s *Store) SetState(ctx context.Context, key string, v bool) error {
	if _, err := s.pool.Exec(ctx, q("SetState"), key, v); err != nil {
		return fmt.Errorf("store: set state %q: %w", key, interpret(err))
	}
	return nil
}
