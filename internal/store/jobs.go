package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Advisory lock keys of the background jobs: one broker runs each pass, the others skip it.
const (
	statsLockKey     int64 = 737002
	retentionLockKey int64 = 737001 // the original's retention key
)

// errSkipped ends a job transaction whose lock another broker holds.
var errSkipped = fmt.Errorf("store: skipped: another broker holds the lock")

// withJobLock runs fn in a transaction holding the advisory lock key; ran is false (and fn not called)
// when another broker holds it.
func (s *Store) withJobLock(ctx context.Context, key int64, fn func(pgx.Tx) error) (ran bool, err error) {
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, q("JobTryLock"), key).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return errSkipped
		}
		return fn(tx)
	})
	if err == errSkipped {
		return false, nil
	}
	return err == nil, interpret(err)
}
