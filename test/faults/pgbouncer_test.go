package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/pgcluster"
	"github.com/queen-go/queen/internal/testenv"
)

// pgbouncerBin finds Debian's PgBouncer; the test fails (never skips) without it.
func pgbouncerBin(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/pgbouncer"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("pgbouncer")
	require.NoError(t, err, "pgbouncer is not installed: run scripts/ensure-ha.sh (make test does)")
	return p
}

// startPgbouncer runs PgBouncer in transaction-pooling mode in front of c, on a free port, and returns
// its URL for database db. As root it runs as the postgres user (PgBouncer refuses to run as root), as
// pgcluster runs PostgreSQL. Its settings are the ones docs/operations.md recommends: a short
// query_wait_timeout and server_login_retry, so that an unreachable server surfaces as errors.
func startPgbouncer(t *testing.T, c *pgcluster.Cluster, db string) string {
	t.Helper()
	bin := pgbouncerBin(t)
	dir, err := os.MkdirTemp("", "queen-pgbouncer-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port := freePort(t)
	ini := fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
query_wait_timeout = 2
server_login_retry = 1
pidfile = %s
`, c.Port(), port, filepath.Join(dir, "userlist.txt"), filepath.Join(dir, "pgbouncer.pid"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(`"postgres" ""`+"\n"), 0o644))
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, out.String(), "process up", "pgbouncer's output")
	}, 10*time.Second, 20*time.Millisecond, "pgbouncer did not listen")
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s", port, db)
}

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	code, out, err := post(url, json.RawMessage(body))
	require.NoError(t, err)
	return code, string(out)
}

func get(t tester, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestThroughPgbouncer runs two brokers through PgBouncer 1.18 in transaction-pooling mode
// (DATABASE_POOL_MODE=transaction, LISTEN on a direct DATABASE_LISTEN_URL): they migrate, push, pop,
// ack and deliver a delayed message; a pop long-polling on one broker is woken by a push on the other;
// with PostgreSQL stopped behind PgBouncer pops answer 503 with Retry-After (not 500) and pushes 201
// (spooled), and once it is back the spool replays and pops deliver again.
func TestThroughPgbouncer(t *testing.T) {
	c := ownCluster(t)
	bouncer := startPgbouncer(t, c, "postgres")
	env := map[string]string{"DATABASE_URL": bouncer, "DATABASE_POOL_MODE": "transaction",
		"DATABASE_LISTEN_URL": c.URL("postgres"), "DB_CONNECTION_TIMEOUT": "1000", "FILE_BUFFER_FLUSH_MS": "100"}
	withSpool := func() map[string]string {
		e := map[string]string{"FILE_BUFFER_DIR": t.TempDir()}
		for k, v := range env {
			e[k] = v
		}
		return e
	}
	a, b := startProc(t, withSpool()), startProc(t, withSpool())

	code, body := pushOne(t, a.base, "first", 1)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"queued"`)
	code, _, body = get(t, b.base+"/api/v1/pop/queue/durable?batch=10&autoAck=true")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"first"`)

	// Cross-broker wake-up: the pop parks on b, the push lands on a; b hears the NOTIFY on its direct
	// LISTEN session, long before the pop's 20 s timeout or the 30 s re-check.
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(b.base + "/api/v1/pop/queue/wake?wait=true&timeout=20000&autoAck=true")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		got <- string(out)
	}()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, parkedPops(b.base), "parked pops")
	}, 10*time.Second, 20*time.Millisecond, "the pop never parked")
	start := time.Now()
	code, body = postJSON(t, a.base+"/api/v1/push", `{"items":[{"queue":"wake","partition":"p","payload":1,"transactionId":"woken"}]}`)
	require.Equal(t, http.StatusCreated, code, body)
	select {
	case out := <-got:
		require.Contains(t, out, `"woken"`)
		require.Less(t, time.Since(start), 10*time.Second)
	case <-time.After(15 * time.Second):
		t.Fatal("the parked pop was not woken by the other broker's push")
	}

	// Delayed delivery: not before its delay, then delivered.
	code, body = postJSON(t, a.base+"/api/v1/configure", `{"queue":"later","options":{"delayedProcessing":1}}`)
	require.Equal(t, http.StatusOK, code, body)
	code, body = postJSON(t, a.base+"/api/v1/push", `{"items":[{"queue":"later","payload":1,"transactionId":"late"}]}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, _, body = get(t, b.base+"/api/v1/pop/queue/later?wait=true&timeout=5000&autoAck=true")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"late"`)

	// PostgreSQL down behind PgBouncer.
	require.NoError(t, c.Stop(t.Context()))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, _, body := get(c, a.base+"/api/v1/pop/queue/durable")
		assert.Equal(c, http.StatusServiceUnavailable, code, body)
	}, 30*time.Second, 20*time.Millisecond, "pops never answered 503")
	for range 3 {
		code, h, body := get(t, a.base+"/api/v1/pop/queue/durable")
		require.Equal(t, http.StatusServiceUnavailable, code, body)
		require.NotEmpty(t, h.Get("Retry-After"))
	}
	code, body = pushOne(t, a.base, "during", 2)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"buffered"`)

	require.NoError(t, c.Start(t.Context()))
	waitSpoolEmpty(t, a.base)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, _, body := get(c, b.base+"/api/v1/pop/queue/durable?batch=10&autoAck=true")
		if assert.Equal(c, http.StatusOK, code, body) {
			assert.Contains(c, body, `"during"`)
		}
	}, 30*time.Second, 20*time.Millisecond, "the spooled push was never delivered")
}

// TestClientSuiteThroughPgbouncer runs the Go SDK's broker-level suite (client, TestBroker*: configure,
// push, pop, ack, redelivery, groups, transactions, leases, dead letters, 10 000 messages exactly once)
// with every broker it starts reaching PostgreSQL through PgBouncer in transaction mode (testenv's
// QUEEN_TEST_POOLER_URL), LISTEN on a direct session. The suite runs as a go test of its own, since
// its harness reads the server to use from the environment.
func TestClientSuiteThroughPgbouncer(t *testing.T) {
	t.Parallel() // a child go test: overlaps the other slow tests
	c := ownCluster(t)
	bouncer := startPgbouncer(t, c, "postgres")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.CommandContext(t.Context(), goBin, "test", "-count=1", "-run", "^TestBroker", "./client")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "QUEEN_TEST_DATABASE_URL="+c.URL("postgres"), "QUEEN_TEST_POOLER_URL="+bouncer)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the client suite through PgBouncer:\n%s", out)
}
