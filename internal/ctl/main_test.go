package ctl_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/testenv"
)

// bin is the queenctl binary, built once for the whole package: every test runs the real binary.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "queenctl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "queenctl")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/queenctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build queenctl:", err)
		os.Exit(1)
	}
	code := testenv.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs queenctl against one server with a private config file and HOME.
type cli struct {
	t      *testing.T
	server string
	env    map[string]string
}

func newCLI(t *testing.T, server string) *cli {
	home := t.TempDir()
	return &cli{t: t, server: server, env: map[string]string{
		"HOME": home, "QUEENCTL_CONFIG": filepath.Join(home, "queenctl.yaml"), "QUEEN_SERVER": server,
	}}
}

type result struct {
	out, err string
	code     int
}

func (c *cli) runIn(stdin string, args ...string) result {
	c.t.Helper()
	start := time.Now()
	r, err := c.runOff(stdin, args...)
	if os.Getenv("QUEENCTL_TEST_TIMING") != "" {
		c.t.Logf("%v %v", time.Since(start).Round(time.Millisecond), args)
	}
	if err != nil {
		c.t.Fatalf("run queenctl %v: %v", args, err)
	}
	return r
}

// runOff runs queenctl without assertions, so that it also serves in the condition of
// require.EventuallyWithT, which runs off the test goroutine.
func (c *cli) runOff(stdin string, args ...string) (result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return result{}, err
	}
	return result{out: out.String(), err: errb.String(), code: code}, nil
}

func (c *cli) run(args ...string) result { c.t.Helper(); return c.runIn("", args...) }

// ok runs a command that must exit 0 and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	require.Equal(c.t, 0, r.code, "queenctl %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.out, r.err)
	return r.out
}

func (c *cli) okIn(stdin string, args ...string) string {
	c.t.Helper()
	r := c.runIn(stdin, args...)
	require.Equal(c.t, 0, r.code, "queenctl %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.out, r.err)
	return r.out
}

// fails runs a command that must exit with code and returns its stderr.
func (c *cli) fails(code int, args ...string) result {
	c.t.Helper()
	r := c.run(args...)
	require.Equal(c.t, code, r.code, "queenctl %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.out, r.err)
	return r
}

// js runs a command with -o json and decodes its output into v (round-trip of the json format).
func (c *cli) js(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append(args, "-o", "json")...)
	require.NoError(c.t, json.Unmarshal([]byte(out), v), "output of %v: %s", args, out)
}

// try is ok for the condition of require.EventuallyWithT: it asserts on ct, not on the test, that the
// command exited 0, and returns its stdout and whether it did.
func (c *cli) try(ct *assert.CollectT, args ...string) (string, bool) {
	r, err := c.runOff("", args...)
	if !assert.NoError(ct, err, "run queenctl %v", args) {
		return "", false
	}
	return r.out, assert.Equal(ct, 0, r.code, "queenctl %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.out, r.err)
}

// tryJS is js for the condition of require.EventuallyWithT; it says whether v was decoded.
func (c *cli) tryJS(ct *assert.CollectT, v any, args ...string) bool {
	out, ok := c.try(ct, append(args, "-o", "json")...)
	return ok && assert.NoError(ct, json.Unmarshal([]byte(out), v), "output of %v: %s", args, out)
}

// tester is *testing.T or, in the condition of require.EventuallyWithT, *assert.CollectT.
type tester interface {
	require.TestingT
	Helper()
}

// ndjson decodes one JSON object per line.
func ndjson(t tester, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		out = append(out, m)
	}
	return out
}

func lines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

var brokerEnv = map[string]string{"STATS_INTERVAL_MS": "200"}

func startBroker(t *testing.T, extra map[string]string) string {
	return startRunning(t, extra, broker.Options{}).URL
}

// startRunning is startBroker for tests that watch the broker itself or give it options (a test
// clock).
func startRunning(t *testing.T, extra map[string]string, opt broker.Options) *testenv.RunningBroker {
	env := map[string]string{}
	for k, v := range brokerEnv {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	return testenv.StartBrokerWith(t, env, opt)
}

// waitParked waits until rb holds a parked long-poll pop: the command started in the background is
// waiting for messages.
func waitParked(t *testing.T, rb *testenv.RunningBroker) {
	t.Helper()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Positive(ct, rb.Broker.Parked(), "parked pops")
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for a parked pop")
}

func uniq(t *testing.T, base string) string {
	return fmt.Sprintf("%s-%d", base, time.Now().UnixNano()%1_000_000_000)
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
