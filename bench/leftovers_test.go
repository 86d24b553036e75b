package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/pgcluster"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func runDir(t *testing.T, root, name string, owner int) string {
	t.Helper()
	dir := filepath.Join(root, "queen-bench-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if owner != 0 {
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestReapLeftovers: a run whose bench is gone has its PostgreSQL stopped and its dir removed; a run
// whose bench lives, a dir naming no bench, and a process that only happens to hold a recorded pid
// are left alone.
func TestReapLeftovers(t *testing.T) {
	// Not t.TempDir: its parent is private, and as root the cluster runs as the postgres user, who
	// must reach the data dir (the bench's own temp dirs are made the same way).
	root, err := os.MkdirTemp("", "bench-reap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	live := runDir(t, root, "live", os.Getpid())
	unowned := runDir(t, root, "unowned", 0)
	orphan := runDir(t, root, "orphan", deadPID(t))

	// A leftover whose postmaster.pid names a process that is no postmaster of it.
	stranger := exec.Command("sleep", "30")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stranger.Process.Kill(); _ = stranger.Wait() })
	reused := runDir(t, root, "reused", deadPID(t))
	if err := os.MkdirAll(filepath.Join(reused, "pg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reused, "pg", "postmaster.pid"), []byte(strconv.Itoa(stranger.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A leftover with its PostgreSQL still running, as a bench killed outright leaves it.
	withPG := runDir(t, root, "pg", deadPID(t))
	var cl *pgcluster.Cluster
	cl, err = pgcluster.Start(t.Context(), pgcluster.Options{DataDir: filepath.Join(withPG, "pg")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Kill() })
	pgPID := pgcluster.Postmaster(filepath.Join(withPG, "pg"))
	if pgPID <= 0 || !processAlive(pgPID) {
		t.Fatalf("postmaster pid %d not running", pgPID)
	}

	reapLeftovers(root, io.Discard)

	for _, d := range []string{live, unowned} {
		if !exists(d) {
			t.Errorf("%s removed", d)
		}
	}
	for _, d := range []string{orphan, reused, withPG} {
		if exists(d) {
			t.Errorf("%s left", d)
		}
	}
	if !processAlive(stranger.Process.Pid) {
		t.Error("a process that is no postmaster of the dir was signalled")
	}
	require.Eventually(t, func() bool { return !processAlive(pgPID) }, 10*time.Second, 50*time.Millisecond,
		"the leftover PostgreSQL (pid %d) still runs", pgPID)
}
