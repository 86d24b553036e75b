package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive lock next to the embedded PostgreSQL's data directory (dir + ".lock";
// inside it would break initdb, which wants an empty directory). A second broker on the same
// directory gets a clear error instead of stopping the first one's database as a stale server. The
// kernel drops the lock when the process dies, so a crash never leaves it behind.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Clean(dir) + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another queen process (lock %s is held); "+
				"stop it first or set QUEEN_DATA_DIR to another directory", dir, path)
		}
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return f, nil
}
