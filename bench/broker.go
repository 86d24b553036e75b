package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/queen-go/queen/internal/pgcluster"
)

// localBroker is our own broker started as a child process on a private PostgreSQL cluster.
type localBroker struct {
	URL     string // http://127.0.0.1:<port>
	PGURL   string
	Durable bool
	PGPID   int // postmaster
	cmd     *exec.Cmd
	cluster *pgcluster.Cluster
	tmp     string
	exited  chan struct{}
}

// startLocalBroker builds ./cmd/queen into a temp dir, starts PostgreSQL under os.TempDir() and runs the
// broker against it. The caller must call stop, which removes everything it created.
// A non-empty bin is used as is instead of building.
func startLocalBroker(ctx context.Context, repo, bin string, durable bool, pgSettings, extraEnv []string, logw io.Writer) (_ *localBroker, err error) {
	tmp, err := os.MkdirTemp("", "queen-bench-")
	if err != nil {
		return nil, err
	}
	// The data dir's parent must be traversable by the postgres user when we run as root.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	b := &localBroker{tmp: tmp, Durable: durable, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			b.stop(context.WithoutCancel(ctx))
		}
	}()

	if bin == "" {
		bin = filepath.Join(tmp, "queen")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/queen")
		build.Dir = repo
		build.Stdout, build.Stderr = logw, logw
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("bench: go build ./cmd/queen: %w", err)
		}
	}

	dataDir := filepath.Join(tmp, "pg")
	b.cluster, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: dataDir, Durable: durable, Settings: pgSettings})
	if err != nil {
		return nil, err
	}
	b.PGURL = b.cluster.URL("postgres")
	b.PGPID = postmasterPID(dataDir)

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	workDir := filepath.Join(tmp, "work") // anything the broker writes relative to its cwd lands here
	if err := os.Mkdir(workDir, 0o755); err != nil {
		return nil, err
	}
	b.cmd = exec.Command(bin, "serve")
	b.cmd.Dir = workDir
	b.cmd.Env = append(os.Environ(), "DATABASE_URL="+b.PGURL, "PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "LOG_LEVEL=warn")
	b.cmd.Env = append(b.cmd.Env, extraEnv...)
	b.cmd.Stdout, b.cmd.Stderr = logw, logw
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start broker: %w", err)
	}
	go func() { _ = b.cmd.Wait(); close(b.exited) }()
	if err := waitHealthy(ctx, b.URL, 60*time.Second, b.exited); err != nil {
		return nil, err
	}
	return b, nil
}

// PID is the broker process id, for RSS and CPU sampling.
func (b *localBroker) PID() int { return b.cmd.Process.Pid }

func (b *localBroker) stop(ctx context.Context) {
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
		case <-time.After(15 * time.Second):
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	}
	if b.cluster != nil {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := b.cluster.Stop(sctx); err != nil {
			_ = b.cluster.Kill()
		}
		cancel()
	}
	_ = os.RemoveAll(b.tmp)
}

// waitHealthy polls GET /health until it answers 200.
func waitHealthy(ctx context.Context, base string, limit time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s/health not 200 after %v (last error %v)", base, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("bench: broker exited before becoming healthy")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
