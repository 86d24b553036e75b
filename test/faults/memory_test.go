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
