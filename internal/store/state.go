package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// States reads shared flags of system_state in one round-trip (false for a flag never set).
func (s *Store) States(ctx context.Context, keys ...string) (map[string]bool, error) {
	return collectMap(ctx, s, "StateGet", func(r pgx.Rows) (key string, v bool, err error) {
		err = r.Scan(&key, &v)
		return key, v, err
	}, keys)
}

// SetState writes a shared flag of system_state, seen by every broker on the database.
func (s *Store) SetState(ctx context.Context, key string, v bool) error {
	if _, err := s.pool.Exec(ctx, q("StateSet"), key, v); err != nil {
		return fmt.Errorf("store: set state %q: %w", key, interpret(err))
	}
	return nil
}
