package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
		rows, err := tx.Query(ctx, q("LeaseExtend"), leaseID, d.Seconds(), now)
		if err != nil {
			return err
		}
		out, err = collectRows(rows, func(r pgx.Rows) (e LeaseExtension, err error) {
			err = r.Scan(&e.PartitionID, &e.Live, &e.ExpiresAt)
			return e, err
		})
		if err != nil {
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
