package faults

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/config"
)

// peakRSS reads the high-water mark of a process's resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// bigPush is a push body of about n bytes: items of 1 MiB string payloads plus one object payload
// full of small numbers and strings, so both the string and the number paths are measured.
func bigPush(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	chunk := strings.Repeat("x", 1<<20)
	i := 0
	for b.Len() < n-(2<<20) {
		fmt.Fprintf(&b, `{"queue":"mem","partition":"p%d","payload":"%s"},`, i%4, chunk)
		i++
	}
	b.WriteString(`{"queue":"mem","payload":[`)
	for b.Len() < n-16 {
		b.WriteString(`12345.678,"ab",`)
	}
	b.WriteString(`0]}]}`)
	return b.Bytes()
}

// TestPushMemoryIsBounded measures the broker process (a child process) while it takes large pushes.
// One body of N bytes peaks within 4·N + 64 MB (docs/decisions.md "Memory bound"); three such bodies
// at once are admitted one after another by the body budget, so they peak within one body's bound
// (before the budget, three at once peaked at three times one); and a body that is one single payload,
// which the store cannot insert in segments, stays within the bound too.
func TestPushMemoryIsBounded(t *testing.T) {
	t.Parallel() // measures its own child process's peak, which other tests do not touch
	c := ownCluster(t)
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": t.TempDir()})
	const n = 48 << 20
	body := bigPush(n)
	post := func(body []byte) (int, string) {
		resp, err := http.Post(p.base+"/api/v1/push", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out[:min(len(out), 300)])
	}
	code, out := post(body)
	require.Equal(t, http.StatusCreated, code, out)
	one := peakRSS(t, p.cmd.Process.Pid)
	limit := int64(4*len(body) + 64<<20)
	t.Logf("one %d MB body: peak RSS %d MB (bound %d MB)", len(body)>>20, one>>20, limit>>20)
	require.LessOrEqual(t, one, limit)

	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := post(body)
			assert.Equal(t, http.StatusCreated, code, out)
		}()
	}
	wg.Wait()
	three := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("three concurrent %d MB bodies: peak RSS %d MB", len(body)>>20, three>>20)
	require.LessOrEqual(t, three, limit)

	// One payload of the whole size cannot be split into statements: the driver's copies of it are
	// alive next to it, and the bound must still hold.
	whole := []byte(`{"items":[{"queue":"mem","payload":"` + strings.Repeat("y", len(body)-40) + `"}]}`)
	code, out = post(whole)
	require.Equal(t, http.StatusCreated, code, out)
	single := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("one %d MB payload: peak RSS %d MB", len(whole)>>20, single>>20)
	require.LessOrEqual(t, single, int64(4*len(whole)+64<<20))
}

// tinyItems is a body of about n bytes of one array field of the smallest entries each route takes:
// the shape whose memory the body budget alone does not bound (an entry costs hundreds of bytes of
// decoded structure however few bytes of text it is).
func tinyItems(prefix, entry string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(prefix)
	for b.Len() < n-len(entry)-4 {
		b.WriteString(entry)
		b.WriteByte(',')
	}
	b.WriteString(entry + `]}`)
	return b.Bytes()
}

// nestedItems is a push of items whose payloads are nested as deep as the input limits allow.
func nestedItems(items, depth, width int) []byte {
	payload := strings.Repeat("[", depth) + strings.TrimSuffix(strings.Repeat("1,", width), ",") + strings.Repeat("]", depth)
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"queue":"mem","partition":"p%d","payload":%s}`, i%8, payload)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestManySmallItemsMemoryIsBounded measures the broker process while it takes bodies of many small
// entries: the peak stays within 4·N + 64 MB for a body of N bytes whatever its shape. A body at the
// item cap (QUEEN_MAX_BATCH_ITEMS) is taken; a larger one is refused with 413 naming the cap before
// its entries are decoded, for pushes, ack batches and transactions alike. The bodies go from the
// smallest bound to the largest, since the peak (VmHWM) only grows.
func TestManySmallItemsMemoryIsBounded(t *testing.T) {
	t.Parallel() // measures its own child process's peak, which other tests do not touch
	c := ownCluster(t)
	// The largest cap the broker accepts: the bound must hold for every setting.
	limit := config.MaxBatchItemsCeiling
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": t.TempDir(),
		"QUEEN_MAX_BATCH_ITEMS": strconv.Itoa(limit)})
	capText := fmt.Sprintf("exceeds QUEEN_MAX_BATCH_ITEMS (%d)", limit)
	send := func(path string, body []byte) (int, string) {
		resp, err := http.Post(p.base+path, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out[:min(len(out), 300)])
	}
	atCap := func(b []byte) []byte { // the first limit items of a body of tiny ones
		i := 0
		for n := 0; n < limit; n++ {
			i += bytes.IndexByte(b[i:], '}') + 1
		}
		return append(b[:i:i], ']', '}')
	}
	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		text       string
	}{
		{"push of tiny items at the cap", "/api/v1/push", atCap(tinyItems(`{"items":[`, `{"queue":"mem"}`, 1<<20)), http.StatusCreated, ""},
		{"push of 4 MB of tiny items (fast reader)", "/api/v1/push", tinyItems(`{"items":[`, `{"queue":"mem"}`, 4<<20), http.StatusRequestEntityTooLarge, capText},
		{"push of items nested 99 deep at the cap", "/api/v1/push", nestedItems(limit, 97, 100), http.StatusCreated, ""},
		{"ack batch of 16 MB of tiny acks", "/api/v1/ack/batch", tinyItems(`{"acknowledgments":[`, `{"transactionId":"t","partitionId":"p"}`, 16<<20), http.StatusRequestEntityTooLarge, capText},
		{"transaction of 16 MB of tiny operations", "/api/v1/transaction", tinyItems(`{"operations":[`, `{"type":"push","queue":"mem"}`, 16<<20), http.StatusRequestEntityTooLarge, capText},
		{"push of 18 MB of tiny items", "/api/v1/push", tinyItems(`{"items":[`, `{"queue":"mem"}`, 18<<20), http.StatusRequestEntityTooLarge, capText},
		{"push of 63 MB of tiny items", "/api/v1/push", tinyItems(`{"items":[`, `{"queue":"mem"}`, 63<<20), http.StatusRequestEntityTooLarge, capText},
		{"push of mid-size items at the cap", "/api/v1/push", bigPushOf(limit, 3000), http.StatusCreated, ""},
	} {
		code, out := send(tc.path, tc.body)
		require.Equal(t, tc.status, code, "%s: %s", tc.name, out)
		require.Contains(t, out, tc.text, tc.name)
		peak := peakRSS(t, p.cmd.Process.Pid)
		bound := int64(4*len(tc.body) + 64<<20)
		t.Logf("%s: %d bytes, peak RSS %d MB (bound %d MB)", tc.name, len(tc.body), peak>>20, bound>>20)
		require.LessOrEqual(t, peak, bound, tc.name)
	}
}

// bigPushOf is a push of items whose string payloads are size bytes each.
func bigPushOf(items, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	payload := strings.Repeat("z", size)
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"queue":"mem","partition":"p%d","payload":"%s"}`, i%8, payload)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
