package faults

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbeddedDataDirLifecycle runs the broker binary with its embedded PostgreSQL: a second broker on
// the same data directory is refused with a clear error and leaves the first one's database alone;
// then a client that sends its body slowly cannot hold shutdown, and the embedded database is always
// stopped when the broker exits.
func TestEmbeddedDataDirLifecycle(t *testing.T) {
	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o755)) // PostgreSQL runs as its own user when we are root
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o755))
	dataDir := filepath.Join(parent, "data")
	env := map[string]string{"DATABASE_URL": "", "QUEEN_DATA_DIR": dataDir, "FILE_BUFFER_DIR": filepath.Join(parent, "spool"),
		"SHUTDOWN_TIMEOUT_MS": "500", "QUEEN_DB_STOP_TIMEOUT_MS": "20000"}
	first := startProc(t, env)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := getText(c, first.base+"/health")
		assert.Equal(c, http.StatusOK, code, "embedded database never became healthy: %s", body)
	}, 60*time.Second, 100*time.Millisecond)

	second := exec.Command(brokerBin, "serve")
	second.Env = append(os.Environ(), "PORT="+fmt.Sprint(freePort(t)), "HOST=127.0.0.1", "LOG_LEVEL=warn")
	for k, v := range env {
		second.Env = append(second.Env, k+"="+v)
	}
	out := &bytes.Buffer{}
	second.Stdout, second.Stderr = out, out
	require.NoError(t, second.Start())
	waited := make(chan error, 1)
	go func() { waited <- second.Wait() }()
	select {
	case err := <-waited:
		require.Error(t, err, "the second broker must refuse to start")
	case <-time.After(30 * time.Second):
		_ = second.Process.Kill()
		t.Fatalf("the second broker did not stop: %s", out)
	}
	require.Contains(t, out.String(), "is in use by another queen process", out.String())
	require.Contains(t, out.String(), "no database configured (DATABASE_URL or PG_*)", "the error says why a database was being started")
	code, body := getText(t, first.base+"/health")
	require.Equal(t, http.StatusOK, code, "the first broker's database survived: %s", body)
	code, body = pushOne(t, first.base, "still-here", 1)
	require.Equal(t, http.StatusCreated, code, body)

	// A client announces a body and never sends it.
	conn, err := net.Dial("tcp", strings.TrimPrefix(first.base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"items\":["))
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, peerRead(c, conn), "the broker's receive queue is empty")
	}, 30*time.Second, 20*time.Millisecond, "the broker never read the request head")

	start := time.Now()
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- first.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(45 * time.Second):
		t.Fatalf("the broker did not exit: %s", first.out)
	}
	t.Logf("exited %s after SIGTERM", time.Since(start))
	_, err = os.Stat(filepath.Join(dataDir, "postmaster.pid"))
	require.True(t, os.IsNotExist(err), "the embedded PostgreSQL is still running after the broker exited: %s", first.out)

	// The lock went with the process: the directory can be used again.
	again := startProc(t, env)
	require.NoError(t, again.cmd.Process.Signal(syscall.SIGTERM))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { _ = again.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("restarted broker did not exit")
	}
}

// peerRead reports whether the far end of conn (a loopback TCP connection) has read everything sent to
// it: its socket's receive queue, in /proc/net/tcp, is empty. The broker has then read the request head
// and serves the request.
func peerRead(t tester, conn net.Conn) bool {
	t.Helper()
	local := conn.LocalAddr().(*net.TCPAddr).Port
	remote := conn.RemoteAddr().(*net.TCPAddr).Port
	b, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		// The broker's socket: local address on its port, remote on ours.
		if !strings.HasSuffix(f[1], fmt.Sprintf(":%04X", remote)) || !strings.HasSuffix(f[2], fmt.Sprintf(":%04X", local)) {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		return strings.Trim(rx, "0") == ""
	}
	return false
}
