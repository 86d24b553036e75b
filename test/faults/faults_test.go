package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/pgcluster"
	"github.com/queen-go/queen/internal/testenv"
)

var brokerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "queen-faults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brokerBin = filepath.Join(dir, "queen")
	build := exec.Command("go", "build", "-o", brokerBin, "github.com/queen-go/queen/cmd/queen")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build broker:", err)
		os.Exit(1)
	}
	code := testenv.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// ownCluster starts a PostgreSQL cluster for one test (the test stops and restarts it at will).
func ownCluster(t *testing.T) *pgcluster.Cluster {
	t.Helper()
	parent, err := os.MkdirTemp("", "queen-faults-pg-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(parent, 0o755)) // PostgreSQL runs as its own user when we are root
	c, err := pgcluster.Start(t.Context(), pgcluster.Options{DataDir: filepath.Join(parent, "data")})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Stop(context.Background())
		_ = os.RemoveAll(parent)
	})
	return c
}

func post(url string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// answered is what the producers were told: per partition, the transactionIds answered 201 (queued or
// buffered), in push order.
type answered struct {
	mu     sync.Mutex
	byPart map[string][]string
	status map[string]int
}

// count is how many pushes were answered with status so far.
func (a *answered) count(status string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status[status]
}

func (a *answered) add(part, tx, status string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.byPart[part] = append(a.byPart[part], tx)
	a.status[status]++
}

// produce runs one producer pushing single-item requests into its own partition until stop closes.
// unanswered counts requests that got no answer (connection failures), which may or may not be stored.
func produce(t *testing.T, base func() string, producer int, stop <-chan struct{}, got *answered, requireAnswer bool) {
	part := fmt.Sprint("p", producer)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		tx := fmt.Sprintf("%s-%06d", part, n)
		code, body, err := post(base()+"/api/v1/push", map[string]any{"items": []map[string]any{
			{"queue": "durable", "partition": part, "payload": map[string]int{"n": n}, "transactionId": tx}}})
		if err != nil {
			if requireAnswer {
				t.Errorf("push %s: no answer: %v", tx, err)
				return
			}
			time.Sleep(20 * time.Millisecond) // the broker is down: try the next one shortly
			continue
		}
		if code != http.StatusCreated {
			t.Errorf("push %s: %d %s", tx, code, body)
			return
		}
		var res []struct{ Status string }
		if err := json.Unmarshal(body, &res); err != nil || len(res) != 1 {
			t.Errorf("push %s: bad answer %s", tx, body)
			return
		}
		if res[0].Status != "queued" && res[0].Status != "buffered" {
			t.Errorf("push %s: status %s", tx, res[0].Status)
			return
		}
		got.add(part, tx, res[0].Status)
	}
}

// stored reads every message of the durable queue, per partition in delivery order.
func stored(t *testing.T, dbURL string) map[string][]string {
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT p.name, m.transaction_id FROM queenmq.messages m
		JOIN queenmq.partitions p ON p.id = m.partition_id JOIN queenmq.queues q ON q.id = p.queue_id
		WHERE q.name = 'durable' ORDER BY p.name, m.seq`)
	require.NoError(t, err)
	out := map[string][]string{}
	for rows.Next() {
		var p, tx string
		require.NoError(t, rows.Scan(&p, &tx))
		out[p] = append(out[p], tx)
	}
	require.NoError(t, rows.Err())
	return out
}

// checkExactlyOnceInOrder: every answered push is stored exactly once and, per partition, the stored
// order is push order. Unanswered pushes may be stored too, in their place.
func checkExactlyOnceInOrder(t *testing.T, got *answered, have map[string][]string, allAnswered bool) {
	t.Helper()
	for part, want := range got.byPart {
		list := have[part]
		pos := map[string]int{}
		for i, tx := range list {
			_, dup := pos[tx]
			require.False(t, dup, "%s stored twice", tx)
			pos[tx] = i
		}
		last := -1
		for _, tx := range want {
			i, ok := pos[tx]
			require.True(t, ok, "answered push %s lost", tx)
			require.Greater(t, i, last, "%s stored out of push order", tx)
			last = i
		}
		if allAnswered {
			require.Equal(t, want, list, "partition %s holds pushes nobody was answered for", part)
		}
		require.True(t, sort.StringsAreSorted(list), "partition %s out of order: %v", part, list)
	}
}

// tester is *testing.T or, in the condition of require.EventuallyWithT (which runs off the test
// goroutine), *assert.CollectT: what the helpers that also serve in such a condition assert on.
type tester interface {
	require.TestingT
	Helper()
}

// healthy asserts that base answers /health with 200.
func healthy(c *assert.CollectT, base string) {
	resp, err := http.Get(base + "/health")
	if assert.NoError(c, err) {
		resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode, "GET %s/health", base)
	}
}

func waitSpoolEmpty(t *testing.T, base string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(base + "/api/v1/system/maintenance")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		var st struct {
			BufferedMessages int64 `json:"bufferedMessages"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		assert.Zero(c, st.BufferedMessages, "buffered messages")
	}, 90*time.Second, 50*time.Millisecond, "spool never drained")
}

// TestDatabaseOutageLosesNoAnsweredPush stops PostgreSQL while 4 producers push, then starts it again:
// every push is answered 201 (queued, or buffered to the disk spool while the database is gone), and
// afterwards each is stored exactly once, in push order per partition.
func TestDatabaseOutageLosesNoAnsweredPush(t *testing.T) {
	c := ownCluster(t)
	b := testenv.StartBroker(t, map[string]string{"DATABASE_URL": c.URL("postgres"),
		"DB_CONNECTION_TIMEOUT": "500", "FILE_BUFFER_FLUSH_MS": "50"})
	got := &answered{byPart: map[string][]string{}, status: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(t, func() string { return b.URL }, p, stop, got, true)
		}()
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.GreaterOrEqual(ct, got.count("queued"), 20, "pushes queued")
	}, 30*time.Second, 20*time.Millisecond, "no push reached PostgreSQL")
	require.NoError(t, c.Stop(t.Context()))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.GreaterOrEqual(ct, got.count("buffered"), 20, "pushes buffered")
	}, 30*time.Second, 20*time.Millisecond, "no push reached the spool")
	require.NoError(t, c.Start(t.Context()))
	// Pushes keep coming until the broker reaches PostgreSQL again, and the spool replays meanwhile.
	require.EventuallyWithT(t, func(ct *assert.CollectT) { healthy(ct, b.URL) },
		60*time.Second, 20*time.Millisecond, "the broker never reached PostgreSQL again")
	close(stop)
	wg.Wait()
	waitSpoolEmpty(t, b.URL)

	require.Positive(t, got.status["queued"])
	require.Positive(t, got.status["buffered"], "the outage never reached the spool")
	checkExactlyOnceInOrder(t, got, stored(t, c.URL("postgres")), true)
}

type brokerProc struct {
	cmd  *exec.Cmd
	base string
	out  *testenv.SyncBuffer
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startProc runs the broker binary and waits until it serves.
func startProc(t *testing.T, env map[string]string) *brokerProc {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(brokerBin, "serve")
	cmd.Env = append(os.Environ(), "PORT="+fmt.Sprint(port), "HOST=127.0.0.1", "LOG_LEVEL=warn")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	p := &brokerProc{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), out: out}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(p.base + "/livez")
		if assert.NoError(c, err) {
			resp.Body.Close()
		}
	}, 30*time.Second, 20*time.Millisecond, "broker did not start: %s", out)
	return p
}

// TestBrokerKilledLosesNoAnsweredPush kills the broker with SIGKILL while 4 producers push (half of the
// time with push maintenance on, so the spool holds answered pushes at the moment of the kill), then
// restarts it on the same spool and database: every answered push is stored exactly once, in order.
func TestBrokerKilledLosesNoAnsweredPush(t *testing.T) {
	c := ownCluster(t)
	spoolDir := t.TempDir()
	env := map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": spoolDir, "FILE_BUFFER_FLUSH_MS": "50"}
	var mu sync.Mutex
	proc := startProc(t, env)
	base := func() string { mu.Lock(); defer mu.Unlock(); return proc.base }

	got := &answered{byPart: map[string][]string{}, status: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(t, base, p, stop, got, false)
		}()
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.GreaterOrEqual(ct, got.count("queued"), 20, "pushes queued")
	}, 30*time.Second, 20*time.Millisecond, "no push reached PostgreSQL")
	code, body, err := post(base()+"/api/v1/system/maintenance", map[string]any{"enabled": true})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(body))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.GreaterOrEqual(ct, got.count("buffered"), 20, "pushes buffered")
	}, 30*time.Second, 20*time.Millisecond, "no push reached the spool")
	require.NoError(t, proc.cmd.Process.Signal(syscall.SIGKILL))
	_ = proc.cmd.Wait()

	restarted := startProc(t, env)
	mu.Lock()
	proc = restarted
	mu.Unlock()
	code, body, err = post(restarted.base+"/api/v1/system/maintenance", map[string]any{"enabled": false})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(body))
	queued := got.count("queued")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.GreaterOrEqual(ct, got.count("queued"), queued+20, "pushes queued")
	}, 60*time.Second, 20*time.Millisecond, "the restarted broker never queued a push")
	close(stop)
	wg.Wait()
	waitSpoolEmpty(t, restarted.base)

	require.Positive(t, got.status["buffered"], "no push was spooled before the kill")
	checkExactlyOnceInOrder(t, got, stored(t, c.URL("postgres")), false)
}

// TestTornSpoolReplaysUpToTheTear buffers pushes in maintenance mode, stops the broker, cuts the spool
// file at a random byte, and restarts: the intact prefix is replayed, in order, without error.
func TestTornSpoolReplaysUpToTheTear(t *testing.T) {
	c := ownCluster(t)
	spoolDir := t.TempDir()
	env := map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": spoolDir, "FILE_BUFFER_FLUSH_MS": "50"}
	first := startProc(t, env)
	code, body, err := post(first.base+"/api/v1/system/maintenance", map[string]any{"enabled": true})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(body))
	const n = 40
	for i := range n {
		code, body, err := post(first.base+"/api/v1/push", map[string]any{"items": []map[string]any{
			{"queue": "durable", "partition": "p0", "payload": i, "transactionId": fmt.Sprintf("p0-%06d", i)}}})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		require.Contains(t, string(body), `"buffered"`)
	}
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	_ = first.cmd.Wait()

	segs, err := filepath.Glob(filepath.Join(spoolDir, "spool-*.log"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	info, err := os.Stat(segs[0])
	require.NoError(t, err)
	cut := 1 + rand.Int64N(info.Size()-1)
	require.NoError(t, os.Truncate(segs[0], cut))
	t.Logf("spool cut at byte %d of %d", cut, info.Size())

	second := startProc(t, env)
	code, body, err = post(second.base+"/api/v1/system/maintenance", map[string]any{"enabled": false})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(body))
	waitSpoolEmpty(t, second.base)

	have := stored(t, c.URL("postgres"))["p0"]
	require.Less(t, len(have), n, "a cut file cannot hold every push")
	for i, tx := range have {
		require.Equal(t, fmt.Sprintf("p0-%06d", i), tx, "replay is not the intact prefix")
	}
	resp, err := http.Get(second.base + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestGracefulShutdown: on SIGTERM a parked long-poll is answered 204 and the process exits 0 within
// SHUTDOWN_TIMEOUT_MS.
func TestGracefulShutdown(t *testing.T) {
	c := ownCluster(t)
	proc := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": t.TempDir(),
		"SHUTDOWN_TIMEOUT_MS": "5000"})
	parked := make(chan int, 1)
	go func() {
		resp, err := http.Get(proc.base + "/api/v1/pop/queue/idle?wait=true&timeout=60000")
		if err != nil {
			parked <- 0
			return
		}
		resp.Body.Close()
		parked <- resp.StatusCode
	}()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Positive(ct, parkedPops(proc.base), "parked pops")
	}, 30*time.Second, 20*time.Millisecond, "the pop never parked")
	start := time.Now()
	require.NoError(t, proc.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, http.StatusNoContent, <-parked)
	err := proc.cmd.Wait()
	require.NoError(t, err, "exit status: %s", proc.out)
	require.Less(t, time.Since(start), 5*time.Second+time.Second)
}

// parkedPops is how many long-poll pops the broker holds parked (GET /metrics), 0 when unknown.
func parkedPops(base string) int {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var m struct {
		Parked int `json:"parked"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m.Parked
}
