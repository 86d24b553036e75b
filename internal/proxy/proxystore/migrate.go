package proxystore

import (
	"context"
	"embed"
	"fmt"

	"github.com/queen-go/queen/internal/pgschema"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey serialises migrations across proxies starting at the same time ("QProxy").
const migrationLockKey = 0x5150_726f_7879

// migrate applies pending migrations (several proxies may start at once); it refuses a newer schema.
func (s *Store) migrate(ctx context.Context) error {
	if err := pgschema.Migrate(ctx, s.pool, s.schema, migrationLockKey, migrationFiles, "migrations", "proxy"); err != nil {
		return fmt.Errorf("proxystore: %w", interpret(err))
	}
	return nil
}
