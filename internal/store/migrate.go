package store

import (
	"context"
	"embed"
	"fmt"

	"github.com/queen-go/queen/internal/pgschema"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey serialises migrations across brokers starting at the same time.
const migrationLockKey = 0x5175_6565_6e4d_51 // "QueenMQ"

// migrate applies the pending migrations (several brokers may start at once).
func (s *Store) migrate(ctx context.Context) error {
	if err := pgschema.Migrate(ctx, s.pool, s.schema, migrationLockKey, migrationFiles, "migrations", "broker"); err != nil {
		return fmt.Errorf("store: %w", interpret(err))
	}
	return nil
}
