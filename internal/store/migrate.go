package store

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

// migrationLockKey serialises migrations across brokers starting at the same time.
const migrationLockKey = 0x5175_6565_6e4d_51 // "QueenMQ"

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
			return nil, fmt.Errorf("store: migration %q is not named NNNN_name.sql", e.Name())
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

// migrate applies the pending migrations, one transaction per file, each under a transaction-scoped
// advisory lock so several brokers starting together apply every file exactly once.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	schema := pgx.Identifier{s.schema}.Sanitize()
	err = s.withTx(ctx, func(tx pgx.Tx) error {
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
		return fmt.Errorf("store: prepare schema %s: %w", s.schema, interpret(err))
	}
	for _, m := range ms {
		err := s.withTx(ctx, func(tx pgx.Tx) error {
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
			return fmt.Errorf("store: migration %s: %w", m.name, interpret(err))
		}
	}
	var newest int
	if err := s.pool.QueryRow(ctx, q("SchemaVersion")).Scan(&newest); err != nil {
		return fmt.Errorf("store: read schema version: %w", interpret(err))
	}
	if known := ms[len(ms)-1].version; newest > known {
		return fmt.Errorf("store: schema %s is at version %d, newer than this broker knows (%d): upgrade the broker", s.schema, newest, known)
	}
	return nil
}
