package store_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if code == 0 && wholePackageRan() {
		if missing := store.UnexercisedQueries(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "store: %d named queries have no store test (none of the package's tests ran them): %s\n",
				len(missing), strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

// wholePackageRan tells whether this run included every test, so that the named queries it did not
// execute are missing tests rather than tests left out by -run or -skip.
func wholePackageRan() bool {
	for _, f := range []string{"test.run", "test.skip", "test.list"} {
		if fl := flag.Lookup(f); fl != nil && fl.Value.String() != "" {
			return false
		}
	}
	return true
}

// TestQueries prepares every named query against the migrated schema, and fails on a query no Go code
// uses or a name the code uses that no .sql file defines (style rule 3).
func TestQueries(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)

	var src strings.Builder
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	// A query is used where its name appears as a string literal: q("X"), collect(ctx, s, "X", ...).
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([A-Z]\w+)"`).FindAllStringSubmatch(src.String(), -1) {
		used[m[1]] = true
	}
	conn, err := store.PoolOf(st).Acquire(t.Context())
	require.NoError(t, err)
	defer conn.Release()
	for name, sql := range store.Queries {
		require.True(t, used[name], "query %s is not used", name)
		if strings.Contains(sql, "%s") {
			sql = fmt.Sprintf(sql, pgx.Identifier{"x"}.Sanitize())
		}
		switch name {
		case "Begin", "Commit", "Rollback", "Listen":
			continue // transaction control and LISTEN are not preparable statements
		case "PoolTxSettings":
			continue // its %s is a list of calls, not an identifier: TestTransactionPooling runs it
		}
		_, err := conn.Conn().Prepare(t.Context(), "", sql)
		require.NoError(t, err, "query %s", name)
	}
	for _, m := range regexp.MustCompile(`q\("(\w+)"\)`).FindAllStringSubmatch(src.String(), -1) {
		_, ok := store.Queries[m[1]]
		require.True(t, ok, "Go code uses unknown query %s", m[1])
	}
}

// TestMigrateConcurrently starts several stores on one empty database at once: each migration is
// applied exactly once and every store opens.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := testenv.NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			st, err := store.Open(t.Context(), store.Options{URL: url})
			if err == nil {
				st.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var n, distinct int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*), count(DISTINCT version) FROM queenmq.schema_migrations").Scan(&n, &distinct))
	require.Equal(t, distinct, n)
	require.Positive(t, n)
}

// TestQueriesHaveTests: every queries/X.sql has its X_test.go, with a test or subtest named after each
// of its queries ("A+B" and "A/case" name A). That the tests do run each query, TestMain checks.
func TestQueriesHaveTests(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("queries/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	named := regexp.MustCompile(`(?m)^-- name: (\w+)`)
	runs := regexp.MustCompile(`t\.Run\("([^"]+)"`)
	for _, f := range files {
		sql, err := os.ReadFile(f)
		require.NoError(t, err)
		domain := strings.TrimSuffix(filepath.Base(f), ".sql")
		src, err := os.ReadFile(domain + "_test.go")
		require.NoError(t, err, "queries/%s.sql has no %s_test.go", domain, domain)
		tested := map[string]bool{}
		for _, m := range runs.FindAllStringSubmatch(string(src), -1) {
			for _, part := range strings.FieldsFunc(m[1], func(r rune) bool { return r == '+' || r == '/' }) {
				tested[part] = true
			}
		}
		for _, m := range named.FindAllStringSubmatch(string(sql), -1) {
			require.True(t, tested[m[1]], "query %s of queries/%s.sql has no subtest named after it in %s_test.go", m[1], domain, domain)
		}
	}
}
