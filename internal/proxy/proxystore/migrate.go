package proxystore

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey serialises migrations across proxies starting at the same time ("QProxy").
const migrationLockKey = 0x5150_726f_7879

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("proxystore: migration %q is not named NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies pending migrations, one transaction per file, each under a transaction-scoped advisory
// lock so that proxies starting together apply every file exactly once. It refuses a newer schema.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	schema := pgx.Identifier{s.schema}.Sanitize()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("MigrationLock"), int64(migrationLockKey)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(q("CreateSchema"), schema)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, q("CreateMigrationsTable"))
		return err
	})
	if err != nil {
		return fmt.Errorf("proxystore: prepare schema %s: %w", s.schema, interpret(err))
	}
	for _, m := range ms {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, q("MigrationLock"), int64(migrationLockKey)); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, q("MigrationApplied"), m.version).Scan(&done); err != nil {
				return err
			}
			if done {
				return nil
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, q("RecordMigration"), m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("proxystore: migration %s: %w", m.name, interpret(err))
		}
	}
	var newest int
	if err := s.pool.QueryRow(ctx, q("SchemaVersion")).Scan(&newest); err != nil {
		return fmt.Errorf("proxystore: read schema version: %w", interpret(err))
	}
	if known := ms[len(ms)-1].version; newest > known {
		return fmt.Errorf("proxystore: schema %s is at version %d, newer than this proxy knows (%d)", s.schema, newest, known)
	}
	return nil
}
