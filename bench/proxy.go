package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchProxy is a queen-proxy the bench runs in front of its local broker (-via-proxy): one plan with
// limits far above any bench load, one cluster whose host is 127.0.0.1 (what the bench's requests carry)
// forwarding to the broker, and one admin key the bench's clients send.
type benchProxy struct {
	URL    string
	Key    string
	cmd    *exec.Cmd
	exited chan struct{}
	tmp    string
}

// proxyBrokerEnv is what the broker needs to accept the proxy's tokens.
func proxyBrokerEnv(secret string) []string {
	return []string{"JWT_ENABLED=true", "JWT_ALGORITHM=HS256", "JWT_SECRET=" + secret}
}

func randomSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startProxy builds ./cmd/queen-proxy, provisions it in pgURL's database (schema queen_proxy) and runs
// it in front of brokerURL. Rate limits run in shadow mode and the plan's quotas are far out of reach,
// so the proxy's whole request path runs and refuses nothing.
func startProxy(ctx context.Context, repo, pgURL, brokerURL, secret string, extraEnv []string, logw io.Writer) (_ *benchProxy, err error) {
	tmp, err := os.MkdirTemp("", "queen-bench-proxy-")
	if err != nil {
		return nil, err
	}
	p := &benchProxy{tmp: tmp, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	bin := filepath.Join(tmp, "queen-proxy")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/queen-proxy")
	build.Dir, build.Stdout, build.Stderr = repo, logw, logw
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/queen-proxy: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "QUEEN_PROXY_DATABASE_URL="+pgURL, "QUEEN_PROXY_JWT_SECRET="+secret,
		"QUEEN_PROXY_HOST=127.0.0.1", "QUEEN_PROXY_PORT="+strconv.Itoa(port), "QUEEN_PROXY_RATE_MODE=shadow", "QUEEN_PROXY_LOG_LEVEL=error")
	env = append(env, extraEnv...)
	admin := func(args ...string) (string, error) {
		c := exec.CommandContext(ctx, bin, args...)
		c.Env = env
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			return "", fmt.Errorf("queen-proxy %s: %w: %s", strings.Join(args[:2], " "), err, errb.String())
		}
		return out.String(), nil
	}
	if _, err := admin("plan", "create", "--name", "bench", "--max-batch-items", "100000", "--request-rate", "1000000",
		"--message-rate", "100000000", "--parked-slots", "1000000", "--monthly-messages", "1000000000000000", "--storage-bytes", "1000000000000000000"); err != nil {
		return nil, err
	}
	if _, err := admin("cluster", "create", "--name", "bench", "--host", "127.0.0.1", "--upstream", brokerURL, "--plan", "bench"); err != nil {
		return nil, err
	}
	out, err := admin("key", "create", "--cluster", "bench", "--roles", "admin", "--name", "bench")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "key="); ok {
			p.Key = k
		}
	}
	if p.Key == "" {
		return nil, fmt.Errorf("queen-proxy key create printed no key")
	}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Env, p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = env, tmp, logw, logw
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	p.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	// The broker's /health through the proxy: the whole path (host, key, token) works.
	c := newClient([]string{p.URL}, 1)
	c.auth = "Bearer " + p.Key
	defer c.close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := c.do(ctx, "GET", "/health", nil, nil)
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("proxy %s/health: %w", p.URL, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.exited:
			return nil, fmt.Errorf("queen-proxy exited before answering")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// PID is the proxy process's, for its CPU.
func (p *benchProxy) PID() int { return p.cmd.Process.Pid }

func (p *benchProxy) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	_ = os.RemoveAll(p.tmp)
}
