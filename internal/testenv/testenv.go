// Package testenv gives tests an isolated PostgreSQL database each (or one
// shared by the tests that ask for the same key): either on the server named by
// QUEEN_TEST_DATABASE_URL or on one private cluster started lazily per test
// binary.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/queen-go/queen/internal/pgcluster"
)

// EnvDatabaseURL names an existing server to create test databases on,
// instead of starting a private cluster.
const EnvDatabaseURL = "QUEEN_TEST_DATABASE_URL"

const dirPrefix = "queen-testenv-"

var (
	clusterOnce sync.Once
	cluster     *pgcluster.Cluster
	clusterDir  string
	clusterErr  error
)

// Main is used from TestMain: os.Exit(testenv.Main(m)). It runs the tests,
// then stops the private cluster if one was started and removes its files, and
// finally fails the run if a goroutine the tests started is still running.
func Main(m *testing.M) int {
	before := goleak.IgnoreCurrent()
	code := m.Run()
	if err := dropShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	// Claim the Once so that nothing can start a cluster after teardown.
	clusterOnce.Do(func() { clusterErr = errors.New("testenv: tests already finished") })
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	if clusterDir != "" {
		_ = os.RemoveAll(clusterDir)
	}
	if code == 0 {
		if err := goleak.Find(before); err != nil {
			fmt.Fprintln(os.Stderr, "testenv: goroutines outlived the tests:", err)
			code = 1
		}
	}
	return code
}

// NewDatabase creates a fresh, empty database for this test and returns its
// URL. The database is dropped WITH (FORCE) in t.Cleanup.
func NewDatabase(t testing.TB) string {
	t.Helper()
	dbURL, drop := createDatabase(t)
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dbURL
}

// createDatabase creates an empty database on the test server and returns its URL and its drop.
func createDatabase(t testing.TB) (string, func() error) {
	t.Helper()
	adminURL := serverURL(t)
	name := "queen_test_" + randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// template0 never has connections, so concurrent CREATE DATABASE calls
	// cannot fail with "source database is being accessed by other users",
	// and the new database is guaranteed empty.
	if err := adminExec(ctx, adminURL, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dbURL, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("testenv: drop database %s: %w", name, err)
		}
		return nil
	}
}

var shared struct {
	sync.Mutex
	urls  map[string]string // by key
	drops []func() error
	done  bool
}

// SharedDatabase returns the database shared by every test of this binary that asks for the same key:
// created, empty, on first use and dropped by Main once all tests have run. It saves a database per
// test where the tests keep apart by the names they use; a test that counts across the whole database
// wants NewDatabase.
func SharedDatabase(t testing.TB, key string) string {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.done {
		t.Fatalf("testenv: shared database %q asked for after the tests", key)
	}
	if u, ok := shared.urls[key]; ok {
		return u
	}
	dbURL, drop := createDatabase(t)
	shared.drops = append(shared.drops, drop)
	if shared.urls == nil {
		shared.urls = map[string]string{}
	}
	shared.urls[key] = dbURL
	return dbURL
}

// dropShared drops the shared databases, once every test is done with them.
func dropShared() error {
	shared.Lock()
	defer shared.Unlock()
	shared.done = true
	var errs []error
	for _, drop := range shared.drops {
		errs = append(errs, drop())
	}
	return errors.Join(errs...)
}

// PrivateCluster returns the private cluster of this test binary, starting it
// if needed. Fault tests use it to stop and restart PostgreSQL, so it fails
// the test when QUEEN_TEST_DATABASE_URL points at a server the test does not own.
func PrivateCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	if os.Getenv(EnvDatabaseURL) != "" {
		t.Fatalf("testenv: this test stops and restarts PostgreSQL, so it needs the private cluster; unset %s to run it", EnvDatabaseURL)
	}
	c, err := privateCluster()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func serverURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvDatabaseURL); u != "" {
		return u
	}
	c, err := privateCluster()
	if err != nil {
		t.Fatal(err)
	}
	return c.URL("postgres")
}

func privateCluster() (*pgcluster.Cluster, error) {
	clusterOnce.Do(func() {
		cluster, clusterDir, clusterErr = startPrivateCluster()
	})
	return cluster, clusterErr
}

func startPrivateCluster() (*pgcluster.Cluster, string, error) {
	if _, err := pgcluster.FindBinDir(); err != nil {
		// Never skip: a silently skipped database test suite looks green.
		if os.Getenv("CI") == "true" {
			return nil, "", fmt.Errorf("testenv: CI=true but PostgreSQL is not installed on this runner (or set %s): %w", EnvDatabaseURL, err)
		}
		return nil, "", fmt.Errorf("testenv: database tests need PostgreSQL; run `apt-get install -y postgresql` or set %s: %w", EnvDatabaseURL, err)
	}
	// 0711: when running as root the cluster runs as the postgres user, which must be able to
	// traverse into the dir.
	dir, err := OwnedTempDir(dirPrefix, 0o711)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(dir, "data")})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", fmt.Errorf("testenv: start private PostgreSQL: %w", err)
	}
	return c, dir, nil
}

// OwnedTempDir makes a temp dir named prefix* with mode perm, holding owner.pid (this process), after
// deleting the prefix* dirs of test binaries that died without reaching their teardown (e.g. killed
// by -timeout). Deleting a data dir is enough to stop an orphaned postmaster: it notices its lock file
// is gone within about a minute and shuts itself down.
func OwnedTempDir(prefix string, perm os.FileMode) (string, error) {
	removeAbandonedDirs(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", fmt.Errorf("testenv: create temp dir: %w", err)
	}
	// MkdirTemp makes the dir 0700.
	if err := os.Chmod(dir, perm); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("testenv: chmod temp dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("testenv: write owner.pid: %w", err)
	}
	return dir, nil
}

func removeAbandonedDirs(prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
		if err != nil {
			// Possibly a concurrent binary between MkdirTemp and writing owner.pid.
			if fi, statErr := os.Stat(dir); statErr == nil && time.Since(fi.ModTime()) > 10*time.Minute {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(dir)
		}
	}
}

func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return err
	}
	return nil
}

// withDatabase points a connection string at dbname. Both URL and
// keyword/value forms are accepted since QUEEN_TEST_DATABASE_URL may be either.
func withDatabase(connString, dbname string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", EnvDatabaseURL, err)
		}
		u.Path = "/" + dbname
		u.RawPath = ""
		return u.String(), nil
	}
	// Later keywords win in keyword/value strings.
	return connString + " dbname=" + dbname, nil
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testenv: random name: %v", err)
	}
	return hex.EncodeToString(b)
}
