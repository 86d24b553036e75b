package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func testLogger(t *testing.T) (*slog.Logger, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

func openSpool(t *testing.T, dir string, opts Options) *Spool {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger, _ = testLogger(t)
	}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func rec(i int) []byte { return fmt.Appendf(nil, `{"transactionId":"tx-%05d"}`, i) }

func recs(from, to int) [][]byte {
	var out [][]byte
	for i := from; i < to; i++ {
		out = append(out, rec(i))
	}
	return out
}

// replayAll drains the spool and checks every batch respects maxBatch.
func replayAll(t *testing.T, s *Spool, maxBatch int) [][]byte {
	t.Helper()
	var got [][]byte
	n, err := s.Replay(context.Background(), maxBatch, func(_ context.Context, b [][]byte) error {
		require.LessOrEqual(t, len(b), maxBatch)
		require.NotEmpty(t, b)
		got = append(got, b...)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(got), n)
	return got
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "spool-*.log"))
	require.NoError(t, err)
	return m
}

func TestAppendReplayOrderAcrossRotations(t *testing.T) {
	dir := t.TempDir()
	s := openSpool(t, dir, Options{SegmentBytes: 256})
	ctx := context.Background()
	i := 0
	for size := 1; i < 300; size = size%5 + 1 {
		end := min(i+size, 300)
		require.NoError(t, s.Append(ctx, recs(i, end)))
		i = end
	}
	require.Equal(t, int64(300), s.Pending())
	require.False(t, s.Empty())
	require.Greater(t, len(segmentFiles(t, dir)), 10, "small SegmentBytes must rotate")
	for _, p := range segmentFiles(t, dir) {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		// A segment only exceeds the limit by the last call's frames.
		require.LessOrEqual(t, fi.Size(), int64(256))
	}

	require.Equal(t, recs(0, 300), replayAll(t, s, 7))
	require.Equal(t, int64(0), s.Pending())
	require.True(t, s.Empty())
	require.Empty(t, segmentFiles(t, dir), "consumed segments are deleted")

	// Nothing left: replay is a no-op.
	require.Empty(t, replayAll(t, s, 7))

	// Records appended after a replay go to a new segment and keep order.
	require.NoError(t, s.Append(ctx, recs(300, 305)))
	require.Equal(t, recs(300, 305), replayAll(t, s, 2))
}

func TestReplayErrorKeepsRecords(t *testing.T) {
	s := openSpool(t, t.TempDir(), Options{SegmentBytes: 200})
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, recs(0, 20)))
	require.NoError(t, s.Append(ctx, recs(20, 30)))

	boom := errors.New("postgres still down")
	calls := 0
	var got [][]byte
	n, err := s.Replay(ctx, 4, func(_ context.Context, b [][]byte) error {
		calls++
		if calls == 3 {
			return boom
		}
		got = append(got, b...)
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "spool: ")
	require.Equal(t, 8, n)
	require.Equal(t, recs(0, 8), got)
	require.Equal(t, int64(22), s.Pending())
	require.Equal(t, int64(1), s.Failed())

	// The failed batch and everything after it come again, in order.
	require.Equal(t, recs(8, 30), replayAll(t, s, 4))
	require.Equal(t, int64(1), s.Failed())
	require.True(t, s.Empty())
}

func TestReopenKeepsPending(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, Options{SegmentBytes: 300})
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, recs(0, 25)))
	require.NoError(t, s.Append(ctx, recs(25, 40)))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	require.ErrorIs(t, s.Append(ctx, recs(0, 1)), ErrClosed)
	_, err = s.Replay(ctx, 1, func(context.Context, [][]byte) error { return nil })
	require.ErrorIs(t, err, ErrClosed)

	s2 := openSpool(t, dir, Options{SegmentBytes: 300})
	require.Equal(t, int64(40), s2.Pending())
	// New appends never go into an old segment and come after it.
	require.NoError(t, s2.Append(ctx, recs(40, 45)))
	require.Equal(t, int64(45), s2.Pending())
	require.Equal(t, recs(0, 45), replayAll(t, s2, 10))
}

func TestReopenWithoutCloseKeepsPending(t *testing.T) {
	// Simulates a crash: the first Spool is never closed.
	dir := t.TempDir()
	s := openSpool(t, dir, Options{})
	require.NoError(t, s.Append(context.Background(), recs(0, 10)))
	s2 := openSpool(t, dir, Options{})
	require.Equal(t, int64(10), s2.Pending())
	require.Equal(t, recs(0, 10), replayAll(t, s2, 3))
}

func TestCheckpointSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, Options{SegmentBytes: 150})
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, recs(0, 30)))
	require.NoError(t, s.Append(ctx, recs(30, 40)))

	calls := 0
	n, err := s.Replay(ctx, 5, func(context.Context, [][]byte) error {
		calls++
		if calls > 3 {
			return errors.New("crash")
		}
		return nil
	})
	require.Error(t, err)
	require.Equal(t, 15, n)
	require.NoError(t, s.Close())

	s2, err := Open(dir, Options{SegmentBytes: 150})
	require.NoError(t, err)
	require.Equal(t, int64(25), s2.Pending(), "acknowledged batches are not pending after reopen")
	require.Equal(t, recs(15, 40), replayAll(t, s2, 5))
	require.NoError(t, s2.Close())

	// Everything consumed: the checkpoint now names a deleted segment. A new
	// segment must get a higher sequence, or its head would be skipped.
	s3, err := Open(dir, Options{SegmentBytes: 150})
	require.NoError(t, err)
	require.Equal(t, int64(0), s3.Pending())
	require.NoError(t, s3.Append(ctx, recs(100, 103)))
	require.NoError(t, s3.Close())

	s4 := openSpool(t, dir, Options{SegmentBytes: 150})
	require.Equal(t, int64(3), s4.Pending())
	require.Equal(t, recs(100, 103), replayAll(t, s4, 5))
}

func TestCheckpointMidSegmentAndLeftoverConsumedSegment(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, recs(0, 10)))
	require.NoError(t, s.Close())

	// Pretend a crash happened after acknowledging 4 records of segment 2,
	// with segment 1 fully consumed but not yet deleted.
	seg1 := filepath.Join(dir, "spool-00000000000000000001.log")
	data, err := os.ReadFile(seg1)
	require.NoError(t, err)
	seg2 := filepath.Join(dir, "spool-00000000000000000002.log")
	require.NoError(t, os.WriteFile(seg2, data, 0o644))
	off := int64(len(encodeFrames(recs(0, 4)...)))
	require.NoError(t, writeCheckpoint(dir, checkpoint{seq: 2, off: off}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, checkpointTmp), []byte("junk"), 0o644))

	s2 := openSpool(t, dir, Options{})
	require.Equal(t, int64(6), s2.Pending())
	require.NoFileExists(t, seg1)
	require.NoFileExists(t, filepath.Join(dir, checkpointTmp))
	require.Equal(t, recs(4, 10), replayAll(t, s2, 100))
}

func TestCorruptCheckpointReplaysEverything(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.Append(context.Background(), recs(0, 5)))
	require.NoError(t, s.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, checkpointName), []byte("garbage"), 0o644))

	log, buf := testLogger(t)
	s2 := openSpool(t, dir, Options{Logger: log})
	require.Contains(t, buf.String(), "corrupt checkpoint")
	require.Equal(t, recs(0, 5), replayAll(t, s2, 2))
}

// writeSegment builds a single-segment spool holding rs and returns the
// segment bytes and the end offset of every frame.
func writeSegment(t *testing.T, rs [][]byte) ([]byte, []int) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.Append(context.Background(), rs))
	require.NoError(t, s.Close())
	files := segmentFiles(t, dir)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var ends []int
	end := 0
	for _, r := range rs {
		end += frameHeaderSize + len(r)
		ends = append(ends, end)
	}
	require.Equal(t, end, len(data))
	return data, ends
}

// checkTruncated opens a spool whose only segment is data[:cut] and checks
// that exactly the intact frames are replayed, followed by new appends.
func checkTruncated(t *testing.T, rs [][]byte, data []byte, ends []int, cut int) {
	t.Helper()
	intact := 0
	for intact < len(ends) && ends[intact] <= cut {
		intact++
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "spool-00000000000000000001.log"), data[:cut], 0o644))
	log, buf := testLogger(t)
	s := openSpool(t, dir, Options{Logger: log})
	require.Equal(t, int64(intact), s.Pending(), "cut at %d", cut)
	onBoundary := cut == 0 || (intact > 0 && ends[intact-1] == cut)
	if onBoundary {
		require.NotContains(t, buf.String(), "torn", "cut at %d", cut)
	} else {
		require.Contains(t, buf.String(), "level=WARN", "cut at %d", cut)
		require.Contains(t, buf.String(), "torn", "cut at %d", cut)
	}
	require.NoError(t, s.Append(context.Background(), [][]byte{[]byte("after")}))
	want := append(append([][]byte{}, rs[:intact]...), []byte("after"))
	require.Equal(t, want, replayAll(t, s, 3), "cut at %d", cut)
	require.True(t, s.Empty())
}

func TestTruncatedSegmentEveryOffset(t *testing.T) {
	rs := [][]byte{rec(0), rec(1), []byte("x"), rec(3), bytes.Repeat([]byte("y"), 40), rec(5), []byte("zz"), rec(7)}
	data, ends := writeSegment(t, rs)
	// Every byte offset across the last three frames, both boundaries included.
	for cut := ends[len(ends)-4]; cut <= len(data); cut++ {
		checkTruncated(t, rs, data, ends, cut)
	}
}

func TestTruncatedSegmentRandomOffset(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var rs [][]byte
	for range 50 {
		r := make([]byte, 1+rng.IntN(300))
		for i := range r {
			r[i] = byte(rng.Uint32())
		}
		rs = append(rs, r)
	}
	data, ends := writeSegment(t, rs)
	for range 20 {
		checkTruncated(t, rs, data, ends, rng.IntN(len(data)+1))
	}
}

func TestBitFlipStopsSegmentAtFlip(t *testing.T) {
	rs := recs(0, 10)
	data, ends := writeSegment(t, rs)
	// Flip each bit position class in every byte of the middle frame:
	// length, checksum and payload corruption must all stop at frame 5.
	for pos := ends[4]; pos < ends[5]; pos++ {
		for _, bit := range []byte{0x01, 0x80} {
			dir := t.TempDir()
			bad := bytes.Clone(data)
			bad[pos] ^= bit
			require.NoError(t, os.WriteFile(filepath.Join(dir, "spool-00000000000000000001.log"), bad, 0o644))
			s := openSpool(t, dir, Options{})
			require.Equal(t, int64(5), s.Pending(), "flip at %d", pos)
			// A later segment is unaffected by the earlier segment's damage.
			require.NoError(t, s.Append(context.Background(), recs(10, 12)))
			want := append(recs(0, 5), recs(10, 12)...)
			require.Equal(t, want, replayAll(t, s, 4), "flip at %d bit %#x", pos, bit)
		}
	}
}

func TestConcurrentAppends(t *testing.T) {
	const writers, calls = 8, 60
	s := openSpool(t, t.TempDir(), Options{SegmentBytes: 512})
	ctx := context.Background()

	var (
		mu  sync.Mutex
		got [][]byte
	)
	collect := func(_ context.Context, b [][]byte) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, b...)
		return nil
	}

	// Replay concurrently with the writers to exercise sealing the active
	// segment while appends continue.
	stop := make(chan struct{})
	replayDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				_, err := s.Replay(ctx, 16, collect)
				replayDone <- err
				return
			default:
			}
			if _, err := s.Replay(ctx, 16, collect); err != nil {
				replayDone <- err
				return
			}
			runtime.Gosched()
		}
	}()

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			seq := 0
			for c := range calls {
				var batch [][]byte
				for range c%3 + 1 {
					batch = append(batch, fmt.Appendf(nil, "w%d-%d", w, seq))
					seq++
				}
				if err := s.Append(ctx, batch); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	require.NoError(t, <-replayDone)

	perWriter := make([]int, writers)
	for _, r := range got {
		var w, n int
		_, err := fmt.Sscanf(string(r), "w%d-%d", &w, &n)
		require.NoError(t, err)
		require.Equal(t, perWriter[w], n, "writer %d out of order or duplicated", w)
		perWriter[w]++
	}
	for w, n := range perWriter {
		// calls 0..59 append 1,2,3,1,2,3... records: 20*(1+2+3).
		require.Equal(t, 120, n, "writer %d", w)
	}
	require.True(t, s.Empty())
}

// hookFile wraps a segment file to inject faults.
type hookFile struct {
	*os.File
	write func(f *os.File, p []byte, off int64) (int, error)
	sync  func(f *os.File) error
}

func (h *hookFile) WriteAt(p []byte, off int64) (int, error) {
	if h.write != nil {
		return h.write(h.File, p, off)
	}
	return h.File.WriteAt(p, off)
}

func (h *hookFile) Sync() error {
	if h.sync != nil {
		return h.sync(h.File)
	}
	return h.File.Sync()
}

func hookCreate(s *Spool, mk func(f *os.File) *hookFile) {
	s.createFile = func(path string) (segmentFile, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		return mk(f), nil
	}
}

func TestGroupCommitSharesFsync(t *testing.T) {
	s := openSpool(t, t.TempDir(), Options{})
	var syncs atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	hookCreate(s, func(f *os.File) *hookFile {
		return &hookFile{File: f, sync: func(f *os.File) error {
			if syncs.Add(1) == 1 {
				close(entered)
				<-release
			}
			return f.Sync()
		}}
	})
	ctx := context.Background()
	errs := make(chan error, 4)
	go func() { errs <- s.Append(ctx, [][]byte{[]byte("leader")}) }()
	<-entered
	for i := range 3 {
		go func() { errs <- s.Append(ctx, [][]byte{fmt.Appendf(nil, "follower-%d", i)}) }()
	}
	// Wait until the three followers are queued behind the blocked fsync.
	for {
		s.mu.Lock()
		n := len(s.queue)
		s.mu.Unlock()
		if n == 3 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	for range 4 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, int32(2), syncs.Load(), "the three queued appends share one fsync")
	got := replayAll(t, s, 10)
	require.Len(t, got, 4)
	require.Equal(t, []byte("leader"), got[0])
}

var errInjected = errors.New("injected I/O error")

func TestFailedWriteIsRolledBack(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	ctx := context.Background()
	var fail atomic.Bool
	hookCreate(s, func(f *os.File) *hookFile {
		return &hookFile{File: f, write: func(f *os.File, p []byte, off int64) (int, error) {
			if fail.Load() {
				// Half the frames reach the file before the error, the worst case.
				n, _ := f.WriteAt(p[:len(p)/2+frameHeaderSize], off)
				return n, errInjected
			}
			return f.WriteAt(p, off)
		}}
	})
	require.NoError(t, s.Append(ctx, recs(0, 3)))
	fail.Store(true)
	err = s.Append(ctx, recs(100, 110))
	require.ErrorIs(t, err, errInjected)
	require.Contains(t, err.Error(), "spool: ")
	fail.Store(false)
	require.NoError(t, s.Append(ctx, recs(3, 5)))
	require.Equal(t, int64(5), s.Pending())
	require.NoError(t, s.Close())

	// Check the on-disk state, not just the in-memory counters.
	s2 := openSpool(t, dir, Options{})
	require.Equal(t, int64(5), s2.Pending())
	require.Equal(t, recs(0, 5), replayAll(t, s2, 10))
}

func TestFailedSyncIsRolledBack(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	ctx := context.Background()
	var fail atomic.Bool
	created := 0
	hookCreate(s, func(f *os.File) *hookFile {
		created++
		return &hookFile{File: f, sync: func(f *os.File) error {
			if fail.Load() {
				return errInjected
			}
			return f.Sync()
		}}
	})
	require.NoError(t, s.Append(ctx, recs(0, 2)))
	fail.Store(true)
	require.ErrorIs(t, s.Append(ctx, recs(100, 103)), errInjected)
	fail.Store(false)
	require.NoError(t, s.Append(ctx, recs(2, 4)))
	require.Equal(t, 2, created, "a segment whose fsync failed is not appended to again")
	require.NoError(t, s.Close())

	s2 := openSpool(t, dir, Options{})
	require.Equal(t, recs(0, 4), replayAll(t, s2, 10))
}

func TestReplayIsExclusive(t *testing.T) {
	s := openSpool(t, t.TempDir(), Options{})
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, recs(0, 3)))
	var inner error
	n, err := s.Replay(ctx, 10, func(ctx context.Context, b [][]byte) error {
		_, inner = s.Replay(ctx, 10, func(context.Context, [][]byte) error { return nil })
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.ErrorIs(t, inner, ErrReplayInProgress)
	require.Equal(t, int64(0), s.Failed())
}

func TestAppendRejectsBadRecords(t *testing.T) {
	s := openSpool(t, t.TempDir(), Options{MaxRecordBytes: 10})
	ctx := context.Background()
	require.ErrorIs(t, s.Append(ctx, [][]byte{[]byte("ok"), {}}), ErrEmptyRecord)
	require.ErrorIs(t, s.Append(ctx, [][]byte{make([]byte, 11)}), ErrRecordTooLarge)
	require.NoError(t, s.Append(ctx, nil))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Append(canceled, recs(0, 1)), context.Canceled)
	require.True(t, s.Empty())
	_, err := s.Replay(ctx, 0, func(context.Context, [][]byte) error { return nil })
	require.Error(t, err)
}
