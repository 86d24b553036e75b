package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queen-go/queen/internal/pgcluster"
)

// ownerFile names, inside a run's temp dir, the pid of the bench that made it. Its brokers die with
// the bench (Pdeathsig), but its PostgreSQL does not: pg_ctl starts the postmaster detached, so a bench
// killed outright (SIGKILL, a crash) leaves it running, with its data dir. The next local run stops
// and removes what such a run left (reapLeftovers).
const ownerFile = "bench.pid"

// reapLeftovers stops the PostgreSQL of every temp dir under root whose bench is gone and removes the
// dir. A dir whose bench still runs, or that names none (not ours, or made before the owner file
// existed), is left alone.
func reapLeftovers(root string, logw io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(root, "queen-bench-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || owner <= 0 || processAlive(owner) {
			continue
		}
		if pid := pgcluster.Postmaster(filepath.Join(dir, "pg")); pid > 0 {
			// SIGQUIT is PostgreSQL's immediate shutdown: the data dir is removed next, so there
			// is nothing to keep consistent.
			_ = syscall.Kill(pid, syscall.SIGQUIT)
			for deadline := time.Now().Add(10 * time.Second); processAlive(pid) && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			fmt.Fprintf(logw, "bench: stopped the PostgreSQL (pid %d) an earlier run left in %s\n", pid, dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(logw, "bench: remove %s: %v\n", dir, err)
		}
	}
}

// processAlive reports whether pid runs (as any user's process). A zombie does not: a postmaster
// that pg_ctl detached is reaped by whatever adopted it, possibly late.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
