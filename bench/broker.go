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

// localBroker is our own broker started as child processes on a private PostgreSQL cluster: one, or
// several sharing the database (-brokers), as stateless brokers behind a load balancer run.
type localBroker struct {
	URL     string // the first broker's http://127.0.0.1:<port>
	PGURL   string
	Durable bool
	PGPID   int // postmaster
	procs   []*brokerProc
	cluster *pgcluster.Cluster
	tmp     string
}

// brokerProc is one broker process.
type brokerProc struct {
	URL    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// brokerSpec says which broker processes to run: bin (empty: build ./cmd/queen) n times, each with env
// added to the defaults, and the first also with firstEnv (a listener only one process can bind).
type brokerSpec struct {
	bin           string
	n             int
	env, firstEnv []string
}

// startLocalBroker builds ./cmd/queen into a temp dir (unless spec.bin is set), starts PostgreSQL under
// os.TempDir() and runs the brokers against it. The caller must call stop, which removes everything it
// created.
func startLocalBroker(ctx context.Context, repo string, spec brokerSpec, durable bool, pgSettings []string, logw io.Writer) (_ *localBroker, err error) {
	reapLeftovers(os.TempDir(), logw)
	tmp, err := os.MkdirTemp("", "queen-bench-")
	if err != nil {
		return nil, err
	}
	// The data dir's parent must be traversable by the postgres user when we run as root.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	b := &localBroker{tmp: tmp, Durable: durable}
	defer func() {
		if err != nil {
			b.stop(context.WithoutCancel(ctx))
		}
	}()

	bin := spec.bin
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
	b.PGPID = pgcluster.Postmaster(dataDir)

	for i := range max(1, spec.n) {
		env := spec.env
		if i == 0 {
			env = append(append([]string(nil), env...), spec.firstEnv...)
		}
		// Each broker works in a directory of its own: anything it writes relative to its cwd (its
		// spool, for one) is its own.
		p, err := startBrokerProc(ctx, bin, filepath.Join(tmp, "work"+strconv.Itoa(i)), b.PGURL, env, logw)
		if p != nil {
			b.procs = append(b.procs, p)
		}
		if err != nil {
			return nil, err
		}
	}
	b.URL = b.procs[0].URL
	return b, nil
}

// startBrokerProc runs one broker on a free port against pgURL and waits until it is healthy. A process
// that started is returned with any error, for stop to end it.
func startBrokerProc(ctx context.Context, bin, workDir, pgURL string, extraEnv []string, logw io.Writer) (*brokerProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(workDir, 0o755); err != nil {
		return nil, err
	}
	p := &brokerProc{URL: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Dir = workDir
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+pgURL, "PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "LOG_LEVEL=warn")
	p.cmd.Env = append(p.cmd.Env, extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = logw, logw
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start broker: %w", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, waitHealthy(ctx, p.URL, 60*time.Second, p.exited)
}

// URLs are the brokers' base URLs, the first broker's first.
func (b *localBroker) URLs() []string {
	urls := make([]string, len(b.procs))
	for i, p := range b.procs {
		urls[i] = p.URL
	}
	return urls
}

// PIDs are the broker process ids, for RSS and CPU sampling.
func (b *localBroker) PIDs() []int {
	pids := make([]int, len(b.procs))
	for i, p := range b.procs {
		pids[i] = p.cmd.Process.Pid
	}
	return pids
}

func (b *localBroker) stop(ctx context.Context) {
	for _, p := range b.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range b.procs {
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
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
