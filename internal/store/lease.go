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
	ExpiresAt   *time.Time
}

// ExtendLease pushes the expiry of every partition held under leaseID to at least now+d; it never
// shortens a lease. No rows: the lease id is unknown.
func (s *Store) ExtendLease(ctx context.Context, leaseID uuid.UUID, d time.Duration) ([]LeaseExtension, error) {
	var out []LeaseExtension
	now := s.now() // one instant for the read and the update
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var err error
		if out, err = leaseHeld(ctx, tx, leaseID, d, now); err != nil {
			return err
		}
		parts := make([]uuid.UUID, len(out))
		for i, e := range out {
			parts[i] = e.PartitionID
		}
		_, err = tx.Exec(ctx, q("LeaseExtensionApply"), leaseID, d.Seconds(), now, parts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: extend lease %s: %w", leaseID, interpret(err))
	}
	return out, nil
}

// ReleaseLease ends every partition lease still running under leaseID, for a pop whose answer never
// reached its consumer: the partitions are claimable again at once instead of at the lease's expiry.
// It returns the partitions released; none when the lease had already ended or is unknown.
func (s *Store) ReleaseLease(ctx context.Context, leaseID uuid.UUID) ([]uuid.UUID, error) {
	var out []uuid.UUID
	now := s.now()
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		held, err := leaseHeld(ctx, tx, leaseID, 0, now)
		if err != nil {
			return err
		}
		parts := make([]uuid.UUID, 0, len(held))
		for _, e := range held {
			if e.Live {
				parts = append(parts, e.PartitionID)
			}
		}
		if len(parts) == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, q("LeaseReleaseApply"), leaseID, now, parts)
		if err != nil {
			return err
		}
		out, err = collectRows(rows, func(r pgx.Rows) (id uuid.UUID, err error) {
			err = r.Scan(&id)
			return id, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: release lease %s: %w", leaseID, interpret(err))
	}
	return out, nil
}

// leaseHeld locks and returns, by LeaseExtend, the partitions held under leaseID, with the expiry an
// extension by d from now would give the live ones.
func leaseHeld(ctx context.Context, tx pgx.Tx, leaseID uuid.UUID, d time.Duration, now pgtype.Timestamptz) ([]LeaseExtension, error) {
	rows, err := tx.Query(ctx, q("LeaseExtend"), leaseID, d.Seconds(), now)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.Rows) (e LeaseExtension, err error) {
		err = r.Scan(&e.PartitionID, &e.Live, &e.ExpiresAt)
		return e, err
	})
}
