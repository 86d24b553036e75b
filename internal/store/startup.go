package store

import "context"

// Migrate brings the schema up to date (Options.DeferMigrate). An unreachable database is an error
// wrapping ErrUnavailable; calling it again later is safe.
func (s *Store) Migrate(ctx context.Context) error { return s.migrate(ctx) }
