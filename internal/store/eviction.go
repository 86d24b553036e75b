package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ExpireWaiting moves up to limit messages that waited longer than their queue's maxWaitTimeSeconds to
// the dead letters of each group still waiting for them. It does nothing when another broker holds the
// job lock; it reports how many messages it moved.
func (s *Store) ExpireWaiting(ctx context.Context, limit int) (int64, error) {
	var n int64
	_, err := s.withJobLock(ctx, evictionJob, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, q("MessageExpireWaiting"), limit, s.now()).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store: expire waiting: %w", interpret(err))
	}
	return n, nil
}
