package pgcluster_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/pgcluster"
)

// testDir returns a directory the postgres user can traverse when the tests
// run as root; t.TempDir is 0700 and owned by root, so initdb could not use it.
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func selectOne(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 = %d, %v", n, err)
	}
	var tz string
	if err := conn.QueryRow(ctx, "SHOW timezone").Scan(&tz); err != nil || tz != "UTC" {
		t.Fatalf("timezone = %q, %v", tz, err)
	}
}

func startCluster(t *testing.T, ctx context.Context, o pgcluster.Options) *pgcluster.Cluster {
	t.Helper()
	c, err := pgcluster.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := filepath.Join(testDir(t), "data")

	c := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir})
	if c.Port() == 0 {
		t.Fatal("port not assigned")
	}
	selectOne(t, ctx, c.URL("postgres"))

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("second Stop must be a no-op: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	selectOne(t, ctx, c.URL("postgres"))

	// Crash and recover on the same port.
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	selectOne(t, ctx, c.URL("postgres"))
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// Embedded mode restarts the broker on an existing data dir, possibly after a
// crash that left postmaster.pid behind.
func TestReuseDataDirWithStalePID(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := filepath.Join(testDir(t), "data")

	c := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir, Durable: true})
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A pid that is certainly not a postmaster for this data dir: our own.
	stale := []byte(strings.Join([]string{strconv.Itoa(os.Getpid()), dataDir, "0", "0", ""}, "\n"))
	if err := os.WriteFile(filepath.Join(dataDir, "postmaster.pid"), stale, 0o600); err != nil {
		t.Fatal(err)
	}

	c2 := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir, Durable: true})
	conn, err = pgx.Connect(ctx, c2.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("data not kept across restart: %d, %v", v, err)
	}
}

// Unix socket paths are limited to ~100 bytes; a deep data dir must still work.
func TestLongDataDirPath(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := filepath.Join(testDir(t), strings.Repeat("d", 60), strings.Repeat("e", 60), "data")
	c := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir})
	selectOne(t, ctx, c.URL("postgres"))
}

func TestFindBinDir(t *testing.T) {
	dir, err := pgcluster.FindBinDir()
	if err != nil {
		if !strings.Contains(err.Error(), "apt-get install -y postgresql") {
			t.Fatalf("error lacks install hint: %v", err)
		}
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// If the broker crashes, the postmaster started by pg_ctl outlives it; the
// next Start on that data dir must take over instead of failing.
func TestStartReplacesOrphanedServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := filepath.Join(testDir(t), "data")
	orphan := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir})
	first := pgcluster.Postmaster(dataDir)
	if first <= 0 {
		t.Fatalf("Postmaster(%s) = %d with a server running", dataDir, first)
	}
	c := startCluster(t, ctx, pgcluster.Options{DataDir: dataDir})
	selectOne(t, ctx, c.URL("postgres"))
	if got := pgcluster.Postmaster(dataDir); got <= 0 || got == first {
		t.Fatalf("Postmaster(%s) = %d after the takeover, first server was %d", dataDir, got, first)
	}
	if orphan.Port() != c.Port() {
		if conn, err := pgx.Connect(ctx, orphan.URL("postgres")); err == nil {
			conn.Close(ctx)
			t.Fatal("orphaned server still running")
		}
	}
}

func TestStartFailureIncludesLogTail(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dataDir := filepath.Join(testDir(t), "data")
	_, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: dataDir, Port: l.Addr().(*net.TCPAddr).Port})
	if err == nil {
		t.Fatal("Start succeeded on a taken port")
	}
	if !strings.Contains(err.Error(), "postgres.log") || !strings.Contains(err.Error(), "could not") {
		t.Fatalf("error lacks the server log tail: %v", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
}

// TestSynchronousStandbyPromote clones a synchronous standby from a primary, kills the primary with an
// immediate shutdown and promotes the standby: every commit the primary acknowledged is on the new
// primary, which accepts writes.
func TestSynchronousStandbyPromote(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := testDir(t)
	primary := startCluster(t, ctx, pgcluster.Options{DataDir: filepath.Join(dir, "primary"), Name: "primary",
		Replication: true, SynchronousStandbys: []string{"standby"}})
	standby := startCluster(t, ctx, pgcluster.Options{DataDir: filepath.Join(dir, "standby"), Name: "standby",
		StandbyOf: primary})

	conn, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var state string
		err := conn.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'").Scan(&state)
		if assert.NoError(c, err) {
			assert.Equal(c, "sync", state, "sync_state")
		}
	}, 30*time.Second, 20*time.Millisecond, "standby never became synchronous")
	var commit string
	if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&commit); err != nil || commit != "on" {
		t.Fatalf("synchronous_commit = %q, %v", commit, err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 100)"); err != nil {
		t.Fatal(err)
	}
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	sc, err := pgx.Connect(ctx, standby.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close(context.Background())
	var n int
	if _, err := sc.Exec(ctx, "INSERT INTO t VALUES (101)"); err != nil {
		t.Fatalf("promoted standby refuses writes: %v", err)
	}
	if err := sc.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 101 {
		t.Fatalf("count = %d, %v", n, err)
	}
}
