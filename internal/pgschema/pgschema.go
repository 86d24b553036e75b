// Package pgschema is how our PostgreSQL stores keep their SQL: it loads the named queries of embedded
// .sql files (`-- name: X` blocks) and applies embedded, ordered migrations to a schema of their own,
// safely from several processes at once. The broker's store and the proxy's store both use it.
package pgschema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var bootstrapFiles embed.FS

var bootstrap = MustQueries(bootstrapFiles, "sql")

// Queries maps each `-- name: X` header of a store's .sql files to the statement below it.
type Queries map[string]string

// Get returns the named statement. An unknown name panics: names are constants in the code and
// every one is checked against the files by the stores' query tests, so a miss is a programming error.
func (qs Queries) Get(name string) string {
	s, ok := qs[name]
	if !ok {
		panic("pgschema: unknown query " + name)
	}
	return s
}

// MustQueries reads every `-- name: X` block of the .sql files in dir. Whole-line comments are left
// out (they are for readers, and some bodies go through fmt.Sprintf). A duplicate name panics: this
// runs at package initialisation, on files compiled into the binary.
func MustQueries(fsys fs.FS, dir string) Queries {
	out := Queries{}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		var name string
		var body strings.Builder
		flush := func() {
			if name != "" {
				if _, dup := out[name]; dup {
					panic("pgschema: duplicate query name " + name)
				}
				out[name] = strings.TrimSpace(body.String())
			}
			body.Reset()
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "-- name: "); ok {
				flush()
				name = strings.Fields(rest)[0]
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		flush()
	}
	return out
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %q is not named NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	if len(out) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	return out, nil
}

// DB is what Migrate needs of a pool. A *pgxpool.Pool is one; the broker's store passes its own, which
// behind a transaction pooler sets its session settings in each transaction. Migrate runs nothing
// outside a transaction and takes only transaction-scoped locks, so it works through such a pooler.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Migrate applies the pending migrations of dir to schema: one transaction per file, each under a
// transaction-scoped advisory lock (lockKey), so processes starting together apply every file exactly
// once. The pool's connections must run with search_path set to schema. It refuses a schema newer than
// the files it knows (owner names the program in that message). Errors are the driver's, wrapped.
func Migrate(ctx context.Context, pool DB, schema string, lockKey int64, fsys fs.FS, dir, owner string) error {
	ms, err := loadMigrations(fsys, dir)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, bootstrap["MigrationLock"], lockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(bootstrap["CreateSchema"], pgx.Identifier{schema}.Sanitize())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, bootstrap["CreateMigrationsTable"])
		return err
	})
	if err != nil {
		return fmt.Errorf("prepare schema %s: %w", schema, err)
	}
	for _, m := range ms {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, bootstrap["MigrationLock"], lockKey); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, bootstrap["MigrationApplied"], m.version).Scan(&done); err != nil {
				return err
			}
			if done {
				return nil
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, bootstrap["RecordMigration"], m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	var newest int
	if err := pool.QueryRow(ctx, bootstrap["SchemaVersion"]).Scan(&newest); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if known := ms[len(ms)-1].version; newest > known {
		return fmt.Errorf("schema %s is at version %d, newer than this %s knows (%d): upgrade the %s", schema, newest, owner, known, owner)
	}
	return nil
}
