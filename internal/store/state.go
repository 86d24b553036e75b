package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// States reads shared flags of system_state in one round-trip (false for a flag never set).
func (s *Store) States(ctx context.Context, keys ...string) (map[string]bool, error) {
	type row struct {
		key string
		v   bool
	}
	rows, err := collect(ctx, s, "StateGet", func(r pgx.Rows) (x row, err error) {
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
	if _, err := s.pool.Exec(ctx, q("StateSet"), key, v); err != nil {
		return fmt.Errorf("store: set state %q: %w", key, interpret(err))
	}
	return nil
}
