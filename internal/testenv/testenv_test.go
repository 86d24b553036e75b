package testenv_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestNewDatabase(t *testing.T) {
	urls := make(chan string, 2)
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				u := testenv.NewDatabase(t)
				urls <- u
				conn, err := pgx.Connect(ctx, u)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				// The database must be empty, and writable by the test.
				var n int
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 0 {
					t.Fatalf("fresh database has %d tables (%v)", n, err)
				}
				if _, err := conn.Exec(ctx, "CREATE TABLE t (v int)"); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
	close(urls)
	a, b := <-urls, <-urls
	if a == b {
		t.Fatalf("parallel tests got the same database %s", a)
	}
	// Cleanup of the subtests must have dropped both databases.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, u := range []string{a, b} {
		if conn, err := pgx.Connect(ctx, u); err == nil {
			conn.Close(ctx)
			t.Errorf("database %s still exists after cleanup", u)
		}
	}
}

func TestPrivateClusterRestart(t *testing.T) {
	if os.Getenv(testenv.EnvDatabaseURL) != "" {
		t.Skip("needs the private cluster") // PrivateCluster would t.Fatal by design
	}
	c := testenv.PrivateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	u := testenv.NewDatabase(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
}

// TestSharedDatabase: one database per key, the same for every test that asks for it.
func TestSharedDatabase(t *testing.T) {
	var a1, a2 string
	t.Run("first", func(t *testing.T) {
		a1 = testenv.SharedDatabase(t, "a")
		conn, err := pgx.Connect(t.Context(), a1)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(t.Context())
		if _, err := conn.Exec(t.Context(), "CREATE TABLE left_behind (v int)"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("second", func(t *testing.T) {
		a2 = testenv.SharedDatabase(t, "a")
		conn, err := pgx.Connect(t.Context(), a2)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(t.Context())
		// Still there after the first test ended: Main drops it, not the test.
		if _, err := conn.Exec(t.Context(), "SELECT * FROM left_behind"); err != nil {
			t.Fatal(err)
		}
	})
	if a1 != a2 {
		t.Fatalf("same key, two databases: %s, %s", a1, a2)
	}
	if b := testenv.SharedDatabase(t, "b"); b == a1 {
		t.Fatal("two keys, one database")
	}
}
