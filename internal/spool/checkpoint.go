package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	checkpointName = "spool.ckpt"
	checkpointTmp  = checkpointName + ".tmp"
	checkpointSize = 20
)

// errBadCheckpoint is returned for a checkpoint file that does not decode.
// Rename makes that impossible short of disk corruption; the caller then
// replays everything, which dedup makes harmless.
var errBadCheckpoint = errors.New("spool: corrupt checkpoint")

// checkpoint records replay progress: every record of segments below seq,
// and every record of segment seq before byte offset off, was acknowledged
// by the replay callback.
type checkpoint struct {
	seq uint64
	off int64
}

func (c checkpoint) encode() []byte {
	b := make([]byte, 0, checkpointSize)
	b = binary.LittleEndian.AppendUint64(b, c.seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(c.off))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// readCheckpoint returns the zero checkpoint if none was written yet.
func readCheckpoint(dir string) (checkpoint, error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointName))
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint{}, nil
	}
	if err != nil {
		return checkpoint{}, fmt.Errorf("spool: read checkpoint: %w", err)
	}
	if len(b) != checkpointSize || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return checkpoint{}, errBadCheckpoint
	}
	c := checkpoint{
		seq: binary.LittleEndian.Uint64(b[0:8]),
		off: int64(binary.LittleEndian.Uint64(b[8:16])),
	}
	if c.off < 0 {
		return checkpoint{}, errBadCheckpoint
	}
	return c, nil
}

// writeCheckpoint replaces the checkpoint atomically: a crash leaves either
// the old or the new one, never a mix, so acknowledged progress is never
// rolled back further than the previous checkpoint.
func writeCheckpoint(dir string, c checkpoint) error {
	tmp := filepath.Join(dir, checkpointTmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("spool: write checkpoint: %w", err)
	}
	if _, err := f.Write(c.encode()); err != nil {
		_ = f.Close()
		return fmt.Errorf("spool: write checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("spool: sync checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("spool: close checkpoint: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, checkpointName)); err != nil {
		return fmt.Errorf("spool: rename checkpoint: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes creations, renames and removals in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("spool: open dir for sync: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spool: sync dir: %w", err)
	}
	return nil
}
