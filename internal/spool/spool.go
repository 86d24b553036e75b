package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const (
	// DefaultSegmentBytes is the segment size used when Options.SegmentBytes is 0.
	DefaultSegmentBytes = 8 << 20
	// DefaultMaxRecordBytes is the record size limit used when
	// Options.MaxRecordBytes is 0.
	DefaultMaxRecordBytes = 64 << 20

	segPrefix    = "spool-"
	segSuffix    = ".log"
	segSeqDigits = 20
)

var (
	// ErrClosed is returned by Append and Replay after Close.
	ErrClosed = errors.New("spool: closed")
	// ErrReplayInProgress is returned by Replay while another Replay runs.
	ErrReplayInProgress = errors.New("spool: replay already in progress")
	// ErrEmptyRecord is returned by Append for a zero-length record.
	ErrEmptyRecord = errors.New("spool: empty record")
	// ErrRecordTooLarge is returned by Append for a record above
	// Options.MaxRecordBytes.
	ErrRecordTooLarge = errors.New("spool: record too large")
)

// Options configures a Spool. The zero value is usable.
type Options struct {
	// SegmentBytes is the size above which the active segment is sealed and
	// a new one started. Default DefaultSegmentBytes. A single Append larger
	// than this still goes into one segment.
	SegmentBytes int64
	// MaxRecordBytes limits the size of one record. Readers treat longer
	// frames as corruption, so never lower it on a spool that may hold
	// larger records. Default DefaultMaxRecordBytes.
	MaxRecordBytes int
	// Logger receives warnings about torn segments and failed rollbacks.
	// Default slog.Default().
	Logger *slog.Logger
}

// segmentFile is the part of *os.File the writer uses; it exists so tests can
// inject write and fsync failures.
type segmentFile interface {
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
}

// segment is a sealed segment waiting for replay.
type segment struct {
	seq   uint64
	off   int64 // everything before off was acknowledged by Replay
	count int64 // records at or after off
}

type appendReq struct {
	buf  []byte
	n    int64
	done chan error
}

// Spool is a durable, ordered, append-only record queue in a directory.
// All methods are safe for concurrent use.
type Spool struct {
	dir string
	max int
	seg int64
	log *slog.Logger

	// createFile opens a new segment file; replaced in tests.
	createFile func(path string) (segmentFile, error)

	// lead is a one-slot semaphore. Its holder is the only goroutine doing
	// I/O on the active segment, so the fields below need no other lock.
	lead        chan struct{}
	active      segmentFile // nil until the first Append after a seal
	activeSeq   uint64
	activeSize  int64 // bytes known to be written and synced
	activeCount int64
	nextSeq     uint64

	mu     sync.Mutex   // protects queue, segs and closed; a leaf (taken inside the spool only)
	queue  []*appendReq // Appends waiting for a group commit
	segs   []*segment   // sealed segments, ascending seq
	closed bool

	// replaying guards Replay so checkpoints are written by one goroutine.
	replaying atomic.Bool

	pending atomic.Int64
	failed  atomic.Int64
}

// Open opens (creating if needed) the spool in dir. Segments left behind by
// a previous process are scanned and become pending; their torn tails are
// logged and ignored. Appends always go to a new segment.
func Open(dir string, opts Options) (*Spool, error) {
	if dir == "" {
		return nil, errors.New("spool: empty directory")
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool: create dir: %w", err)
	}
	s := &Spool{
		dir:  dir,
		max:  opts.MaxRecordBytes,
		seg:  opts.SegmentBytes,
		log:  opts.Logger.With("component", "spool", "dir", dir),
		lead: make(chan struct{}, 1),
		createFile: func(path string) (segmentFile, error) {
			// O_EXCL: a name collision would mean appending after somebody
			// else's data, possibly after a torn tail.
			return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		},
	}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

// recover rebuilds the in-memory state from the directory.
func (s *Spool) recover() error {
	// A leftover temp file is an unfinished checkpoint; the old one is valid.
	if err := os.Remove(filepath.Join(s.dir, checkpointTmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: remove stale checkpoint: %w", err)
	}
	ck, err := readCheckpoint(s.dir)
	if errors.Is(err, errBadCheckpoint) {
		s.log.Warn("spool: ignoring corrupt checkpoint, replaying all segments again")
		ck = checkpoint{}
	} else if err != nil {
		return err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("spool: list dir: %w", err)
	}
	var seqs []uint64
	for _, e := range entries {
		if seq, ok := parseSegName(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)

	maxSeq, removed := ck.seq, false
	for _, seq := range seqs {
		maxSeq = max(maxSeq, seq)
		if seq < ck.seq {
			// Fully replayed; the process died before deleting it.
			if err := os.Remove(s.segPath(seq)); err != nil {
				return fmt.Errorf("spool: remove consumed segment: %w", err)
			}
			removed = true
			continue
		}
		var off int64
		if seq == ck.seq {
			off = ck.off
		}
		count, err := s.scan(seq, off)
		if err != nil {
			return err
		}
		s.segs = append(s.segs, &segment{seq: seq, off: off, count: count})
		s.pending.Add(count)
	}
	if removed {
		if err := syncDir(s.dir); err != nil {
			return err
		}
	}
	// Never reuse a sequence: a new segment numbered like the checkpoint
	// would have its first ck.off bytes skipped by Replay.
	s.nextSeq = maxSeq + 1
	return nil
}

// openSegment opens a segment for reading and tells its size; errors keep fs.ErrNotExist visible.
func openSegment(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("spool: open segment: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("spool: stat segment: %w", err)
	}
	return f, fi.Size(), nil
}

// scan counts the intact records of segment seq from offset off.
func (s *Spool) scan(seq uint64, off int64) (int64, error) {
	path := s.segPath(seq)
	f, size, err := openSegment(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if off > size {
		s.log.Warn("spool: segment shorter than its checkpoint, treating it as consumed",
			"segment", path, "size", size, "checkpoint", off)
		return 0, nil
	}
	fr := newFrameReader(io.NewSectionReader(f, off, size-off), off, size, s.max)
	fr.reuse = true
	var n int64
	for {
		_, err := fr.next()
		switch {
		case err == nil:
			n++
			continue
		case errors.Is(err, io.EOF):
		case errors.Is(err, errTorn):
			s.log.Warn("spool: torn segment tail, records after it are ignored",
				"segment", path, "records", n, "err", err)
		default:
			return 0, err
		}
		return n, nil
	}
}

func (s *Spool) segPath(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%0*d%s", segPrefix, segSeqDigits, seq, segSuffix))
}

func parseSegName(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, segPrefix)
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, segSuffix)
	if !ok || len(digits) != segSeqDigits {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	return seq, err == nil
}

// Append durably stores recs, in order, after everything appended before.
// It returns nil only once all of recs are written and fsynced. On error
// none of recs will be replayed (unless even the rollback failed, which is
// logged). Once a call got past its argument checks it waits for the
// outcome of its write regardless of ctx, so that its result is truthful.
func (s *Spool) Append(ctx context.Context, recs [][]byte) error {
	if len(recs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("spool: append: %w", err)
	}
	size := 0
	for i, r := range recs {
		if len(r) == 0 {
			return fmt.Errorf("spool: append record %d: %w", i, ErrEmptyRecord)
		}
		if len(r) > s.max {
			return fmt.Errorf("spool: append record %d (%d bytes, limit %d): %w", i, len(r), s.max, ErrRecordTooLarge)
		}
		size += frameHeaderSize + len(r)
	}
	buf := make([]byte, 0, size)
	for _, r := range recs {
		buf = appendFrame(buf, r)
	}
	req := &appendReq{buf: buf, n: int64(len(recs)), done: make(chan error, 1)}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.queue = append(s.queue, req)
	s.mu.Unlock()

	// Group commit: either a leader writes our request together with
	// others, or we become the leader and write everything queued so far.
	select {
	case err := <-req.done:
		return err
	case s.lead <- struct{}{}:
	}
	select {
	case err := <-req.done:
		// The previous leader took our request before handing over.
		<-s.lead
		return err
	default:
	}
	// A leader completes every request it takes before releasing lead, so
	// ours is still queued and the batch below contains it.
	s.mu.Lock()
	batch, closed := s.queue, s.closed
	s.queue = nil
	s.mu.Unlock()
	s.commit(batch, closed)
	<-s.lead
	return <-req.done
}

// commit writes batch as one write plus one fsync. Must hold lead.
func (s *Spool) commit(batch []*appendReq, closed bool) {
	var err error
	if closed {
		err = ErrClosed
	} else {
		buf, n := batch[0].buf, batch[0].n
		if len(batch) > 1 {
			size := 0
			for _, r := range batch {
				size += len(r.buf)
			}
			buf, n = make([]byte, 0, size), 0
			for _, r := range batch {
				buf = append(buf, r.buf...)
				n += r.n
			}
		}
		err = s.write(buf, n)
	}
	for _, r := range batch {
		r.done <- err
	}
}

// write appends n encoded records to the active segment. Must hold lead.
func (s *Spool) write(buf []byte, n int64) error {
	if s.active != nil && s.activeSize > 0 && s.activeSize+int64(len(buf)) > s.seg {
		s.sealActive()
	}
	if s.active == nil {
		if err := s.openActive(); err != nil {
			return err
		}
	}
	path := s.segPath(s.activeSeq)
	if _, err := s.active.WriteAt(buf, s.activeSize); err != nil {
		s.abandonActive()
		return fmt.Errorf("spool: write %s: %w", path, err)
	}
	if err := s.active.Sync(); err != nil {
		s.abandonActive()
		return fmt.Errorf("spool: sync %s: %w", path, err)
	}
	s.activeSize += int64(len(buf))
	s.activeCount += n
	s.pending.Add(n)
	return nil
}

// openActive creates the next segment. Must hold lead.
func (s *Spool) openActive() error {
	seq := s.nextSeq
	// Advance even on failure so a leftover file cannot block the spool.
	s.nextSeq++
	path := s.segPath(seq)
	f, err := s.createFile(path)
	if err != nil {
		return fmt.Errorf("spool: create segment: %w", err)
	}
	// Without this the file's directory entry may not survive a crash even
	// though its contents were fsynced.
	if err := syncDir(s.dir); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return err
	}
	s.active, s.activeSeq, s.activeSize, s.activeCount = f, seq, 0, 0
	return nil
}

// abandonActive rolls the active segment back to its last synced size after
// a failed write or fsync and seals it. It is not reused because after a
// failed fsync the page cache may claim data is clean that never reached the
// disk, so a later fsync could succeed without saving anything.
func (s *Spool) abandonActive() {
	err := s.active.Truncate(s.activeSize)
	if err == nil {
		err = s.active.Sync()
	}
	if err != nil {
		s.log.Error("spool: could not roll back failed append; records of the failed call may be replayed",
			"segment", s.segPath(s.activeSeq), "offset", s.activeSize, "err", err)
	}
	s.sealActive()
}

// sealActive closes the active segment and hands it to Replay. Must hold lead.
func (s *Spool) sealActive() {
	path := s.segPath(s.activeSeq)
	if err := s.active.Close(); err != nil {
		// Everything counted in activeCount was fsynced already, so a close
		// error cannot lose acknowledged data.
		s.log.Warn("spool: close segment", "segment", path, "err", err)
	}
	s.active = nil
	if s.activeCount == 0 {
		// Nothing acknowledged lives here, only possibly bytes of failed
		// appends: delete instead of keeping an empty segment around.
		if err := os.Remove(path); err == nil {
			if err := syncDir(s.dir); err == nil {
				return
			}
		}
	}
	s.mu.Lock()
	s.segs = append(s.segs, &segment{seq: s.activeSeq, count: s.activeCount})
	s.mu.Unlock()
}

// Replay delivers pending records to fn, oldest first, in batches of at most
// maxBatch. Once fn returns nil for a batch that progress is checkpointed, so
// a crash re-delivers at most the batch in flight. If fn returns an error,
// Replay stops and returns it (wrapped); the batch stays pending. Records
// appended while Replay runs are left for the next call. Replay returns the
// number of records acknowledged by fn. Concurrent calls are refused with
// ErrReplayInProgress instead of waiting, because a second caller could not
// make any progress of its own.
func (s *Spool) Replay(ctx context.Context, maxBatch int, fn func(ctx context.Context, recs [][]byte) error) (int, error) {
	if maxBatch <= 0 {
		return 0, fmt.Errorf("spool: replay: maxBatch %d must be positive", maxBatch)
	}
	if fn == nil {
		return 0, errors.New("spool: replay: nil callback")
	}
	if !s.replaying.CompareAndSwap(false, true) {
		return 0, ErrReplayInProgress
	}
	defer s.replaying.Store(false)

	if err := s.sealForReplay(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	segs := slices.Clone(s.segs)
	s.mu.Unlock()

	total := 0
	for _, seg := range segs {
		n, err := s.replaySegment(ctx, seg, maxBatch, fn)
		total += n
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				s.failed.Add(1)
			}
			return total, err
		}
	}
	return total, nil
}

// sealForReplay seals the active segment if it holds records, so Replay
// only ever reads files nobody writes to.
func (s *Spool) sealForReplay() error {
	s.lead <- struct{}{}
	defer func() { <-s.lead }()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if s.active != nil && s.activeCount > 0 {
		s.sealActive()
	}
	return nil
}

func (s *Spool) replaySegment(ctx context.Context, seg *segment, maxBatch int, fn func(context.Context, [][]byte) error) (int, error) {
	path := s.segPath(seg.seq)
	f, size, err := openSegment(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Only an earlier Replay that failed to sync the directory removes
		// segments without forgetting them.
		if seg.count > 0 {
			s.log.Warn("spool: pending segment vanished", "segment", path, "records", seg.count)
		}
		s.forget(seg)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size = max(size, seg.off)
	fr := newFrameReader(io.NewSectionReader(f, seg.off, size-seg.off), seg.off, size, s.max)

	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("spool: replay: %w", err)
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return total, ErrClosed
		}

		var batch [][]byte
		var end error
		for len(batch) < maxBatch {
			rec, err := fr.next()
			if err != nil {
				end = err
				break
			}
			batch = append(batch, rec)
		}
		if end != nil && !errors.Is(end, io.EOF) && !errors.Is(end, errTorn) {
			return total, end
		}
		if len(batch) > 0 {
			if err := fn(ctx, batch); err != nil {
				return total, fmt.Errorf("spool: replay %s: %w", path, err)
			}
			ck := checkpoint{seq: seg.seq, off: fr.off}
			if err := writeCheckpoint(s.dir, ck); err != nil {
				// The batch stays pending and is delivered again.
				return total, err
			}
			s.mu.Lock()
			seg.off = fr.off
			seg.count -= int64(len(batch))
			s.mu.Unlock()
			s.pending.Add(-int64(len(batch)))
			total += len(batch)
		}
		if end == nil {
			continue
		}
		if errors.Is(end, errTorn) {
			s.log.Warn("spool: torn segment tail, records after it are ignored",
				"segment", path, "err", end)
		}
		if err := os.Remove(path); err != nil {
			return total, fmt.Errorf("spool: remove consumed segment: %w", err)
		}
		if err := syncDir(s.dir); err != nil {
			return total, err
		}
		s.forget(seg)
		return total, nil
	}
}

// forget drops a consumed segment from the pending set.
func (s *Spool) forget(seg *segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segs = slices.DeleteFunc(s.segs, func(x *segment) bool { return x == seg })
	// Normally 0; non-zero if the file lost records since it was counted.
	s.pending.Add(-seg.count)
	seg.count = 0
}

// Pending returns the number of records not yet acknowledged by Replay.
func (s *Spool) Pending() int64 { return s.pending.Load() }

// Failed returns how many Replay calls ended with an error.
func (s *Spool) Failed() int64 { return s.failed.Load() }

// Empty reports whether no records are pending.
func (s *Spool) Empty() bool { return s.Pending() == 0 }

// Close waits for an in-flight group commit, then closes the active
// segment. Later Appends and Replays fail with ErrClosed; pending records
// stay on disk for the next Open. A Replay running concurrently stops before
// its next batch.
func (s *Spool) Close() error {
	s.lead <- struct{}{}
	defer func() { <-s.lead }()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.active == nil {
		return nil
	}
	path := s.segPath(s.activeSeq)
	err := s.active.Close()
	s.active = nil
	if err != nil {
		return fmt.Errorf("spool: close %s: %w", path, err)
	}
	if s.activeCount == 0 {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("spool: remove empty segment: %w", err)
		}
		return syncDir(s.dir)
	}
	return nil
}
