package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/pgcluster"
	"github.com/queen-go/queen/internal/testenv"
)

// The Patroni harness: one etcd and two Patroni nodes from the machine's packages (Debian's patroni and
// etcd-server, which `make test` installs through scripts/ensure-ha.sh), each node with its own data
// directory, PostgreSQL port and REST API port, in one temp dir that the test removes.

const patroniDirPrefix = "queen-patroni-"

// patroniCluster is etcd plus two Patroni-managed PostgreSQL nodes, started for one test.
type patroniCluster struct {
	dir   string
	scope string
	etcd  *daemon
	nodes []*patroniNode
}

// patroniNode is one Patroni process and the PostgreSQL server it manages.
type patroniNode struct {
	name    string
	pgPort  int
	apiPort int
	dataDir string
	config  string // path of its patroni.yml, which patronictl reads too
	proc    *daemon
}

// daemon is a long-running child process with its output kept for the failure report.
type daemon struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{} // closed once Wait has returned
}

// clusterMember is one row of Patroni's GET /cluster.
type clusterMember struct {
	Name  string `json:"name"`
	Role  string `json:"role"`  // leader, sync_standby, replica
	State string `json:"state"` // running, streaming (newer Patroni), starting, stopped...
	Port  int    `json:"port"`
	Lag   any    `json:"lag"`
}

// patroniTimings are the DCS settings the test runs with. Patroni's defaults (ttl 30, loop_wait 10,
// retry_timeout 10) suit a network; on one machine a loop every second notices a dead primary at once,
// and ttl 10 still leaves loop_wait + 2*retry_timeout < ttl, the rule Patroni's docs give for a leader
// that must not lose its key during a single slow etcd call.
var patroniTimings = map[string]any{"ttl": 10, "loop_wait": 1, "retry_timeout": 4}

// startPatroni starts etcd and two Patroni nodes with synchronous replication and waits until one node
// leads and the other is a streaming synchronous standby.
func startPatroni(t *testing.T) *patroniCluster {
	t.Helper()
	for _, bin := range []string{"patroni", "patronictl", "etcd"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("the Patroni test needs %s (Debian packages patroni and etcd-server); run `bash scripts/ensure-ha.sh`: %v", bin, err)
		}
	}
	binDir, err := pgcluster.FindBinDir()
	require.NoError(t, err)
	cred := postgresUser(t)

	dir, err := testenv.OwnedTempDir(patroniDirPrefix, 0o755) // the postgres user reaches its node dirs through it
	require.NoError(t, err)
	pc := &patroniCluster{dir: dir, scope: "queen-" + filepath.Base(dir)[len(patroniDirPrefix):]}
	t.Cleanup(func() {
		pc.stop(t)
		_ = os.RemoveAll(dir)
	})

	var etcdHost string
	pc.etcd, etcdHost = startEtcd(t, dir)

	for i := 1; i <= 2; i++ {
		n := &patroniNode{name: fmt.Sprint("node", i), pgPort: freePort(t), apiPort: freePort(t)}
		nodeDir := filepath.Join(dir, n.name)
		require.NoError(t, os.Mkdir(nodeDir, 0o700))
		n.dataDir = filepath.Join(nodeDir, "data")
		n.config = filepath.Join(nodeDir, "patroni.yml")
		// JSON is YAML, so the configuration needs no YAML writer.
		b, err := json.MarshalIndent(patroniConfig(pc.scope, n, nodeDir, binDir, etcdHost), "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(n.config, b, 0o600))
		if cred != nil {
			for _, p := range []string{nodeDir, n.config} {
				require.NoError(t, os.Chown(p, int(cred.Uid), int(cred.Gid)))
			}
		}
		pc.nodes = append(pc.nodes, n)
	}
	for _, n := range pc.nodes {
		cmd := exec.Command("patroni", n.config)
		cmd.Dir = filepath.Dir(n.config)
		cmd.Env = append(envWithoutPG(), "HOME="+filepath.Dir(n.config))
		n.proc = startDaemon(t, cmd, cred)
	}
	pc.waitHealthy(t, 120*time.Second)
	return pc
}

// patroniConfig is one node's patroni.yml. synchronous_mode makes every commit wait for the standby,
// so a failover to it loses no acknowledged write; primary_start_timeout 0 makes Patroni fail over when
// the primary's postmaster dies instead of restarting it in place (the default waits 300 s for a
// restart first).
func patroniConfig(scope string, n *patroniNode, nodeDir, binDir, etcdHost string) map[string]any {
	dcs := map[string]any{
		"synchronous_mode":        true,
		"primary_start_timeout":   0,
		"maximum_lag_on_failover": 1 << 20,
		"postgresql": map[string]any{
			"use_pg_rewind": true,
			"use_slots":     true,
			// A fast checkpoint starts the standby's base backup at once rather than spread over minutes.
			"basebackup": []any{map[string]any{"checkpoint": "fast"}},
			"parameters": map[string]any{
				"wal_log_hints":      "on",
				"max_connections":    200,
				"synchronous_commit": "on",
			},
		},
	}
	for k, v := range patroniTimings {
		dcs[k] = v
	}
	api := fmt.Sprintf("127.0.0.1:%d", n.apiPort)
	pg := fmt.Sprintf("127.0.0.1:%d", n.pgPort)
	return map[string]any{
		"scope":   scope,
		"name":    n.name,
		"log":     map[string]any{"level": "INFO"},
		"restapi": map[string]any{"listen": api, "connect_address": api},
		"etcd3":   map[string]any{"hosts": etcdHost},
		"bootstrap": map[string]any{
			"dcs":    dcs,
			"initdb": []any{map[string]any{"encoding": "UTF8"}, map[string]any{"locale": "C"}, map[string]any{"auth": "trust"}},
			"pg_hba": []string{
				"local all all trust",
				"host replication replicator 127.0.0.1/32 trust",
				"host all all 127.0.0.1/32 trust",
			},
		},
		"postgresql": map[string]any{
			"listen":          pg,
			"connect_address": pg,
			"data_dir":        n.dataDir,
			"bin_dir":         binDir,
			"pgpass":          filepath.Join(nodeDir, "pgpass"),
			"authentication": map[string]any{
				"replication": map[string]any{"username": "replicator", "password": "replicator"},
				"superuser":   map[string]any{"username": "postgres", "password": "postgres"},
			},
			"parameters": map[string]any{"unix_socket_directories": nodeDir, "timezone": "UTC"},
		},
	}
}

// startEtcd runs a one-member etcd on free loopback ports and returns it with its client host:port.
func startEtcd(t *testing.T, dir string) (*daemon, string) {
	t.Helper()
	host := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	client := "http://" + host
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	cmd := exec.Command("etcd")
	cmd.Dir = dir
	cmd.Env = append(envWithoutPG(),
		"ETCD_NAME=queen",
		"ETCD_DATA_DIR="+filepath.Join(dir, "etcd"),
		"ETCD_LISTEN_PEER_URLS="+peer,
		"ETCD_INITIAL_ADVERTISE_PEER_URLS="+peer,
		"ETCD_INITIAL_CLUSTER=queen="+peer,
		"ETCD_LISTEN_CLIENT_URLS="+client,
		"ETCD_ADVERTISE_CLIENT_URLS="+client,
	)
	d := startDaemon(t, cmd, nil)
	require.EventuallyWithT(t, func(c *assert.CollectT) { healthy(c, client) }, 30*time.Second, 20*time.Millisecond, "etcd never served")
	return d, host
}

// startDaemon starts cmd in its own process group, as cred when given. Pdeathsig stops it should the
// test binary die before its cleanup: Patroni then shuts its PostgreSQL down itself.
func startDaemon(t *testing.T, cmd *exec.Cmd, cred *syscall.Credential) *daemon {
	t.Helper()
	d := &daemon{cmd: cmd, out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = d.out, d.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM, Credential: cred}
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	return d
}

// stop sends SIGTERM and waits up to grace, then kills the whole process group.
func (d *daemon) stop(grace time.Duration) {
	if d == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(grace):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

// stop shuts every node down (Patroni stops its PostgreSQL), then etcd; on failure it logs what each
// process said.
func (pc *patroniCluster) stop(t *testing.T) {
	for _, n := range pc.nodes {
		if n.proc != nil && t.Failed() {
			t.Logf("--- %s (Patroni) ---\n%s", n.name, tail(n.proc.out.String(), 6000))
		}
	}
	// All nodes at once: stopped one by one, the last standing would first take the leader key.
	var wg sync.WaitGroup
	for _, n := range pc.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.proc.stop(30 * time.Second)
			// A postmaster whose Patroni had to be killed would outlive it.
			if pid := pgcluster.Postmaster(n.dataDir); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}()
	}
	wg.Wait()
	if pc.etcd != nil && t.Failed() {
		t.Logf("--- etcd ---\n%s", tail(pc.etcd.out.String(), 3000))
	}
	pc.etcd.stop(10 * time.Second)
}

// members reads GET /cluster from the first node whose REST API answers.
func (pc *patroniCluster) members() ([]clusterMember, error) {
	var errs []error
	for _, n := range pc.nodes {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/cluster", n.apiPort))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var c struct {
			Members []clusterMember `json:"members"`
		}
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return c.Members, nil
	}
	return nil, errors.Join(errs...)
}

// roles is the cluster's state in one line, for logs and failure messages.
func (pc *patroniCluster) roles() string {
	ms, err := pc.members()
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", m.Name, m.Role, m.State))
	}
	return strings.Join(parts, " ")
}

// healthy returns the leader and the synchronous standby when the cluster has both, running.
func (pc *patroniCluster) healthy() (leader, standby *patroniNode, ok bool) {
	ms, err := pc.members()
	if err != nil {
		return nil, nil, false
	}
	for _, m := range ms {
		up := m.State == "running" || m.State == "streaming"
		switch {
		case m.Role == "leader" && up:
			leader = pc.node(m.Name)
		case m.Role == "sync_standby" && up:
			standby = pc.node(m.Name)
		}
	}
	return leader, standby, leader != nil && standby != nil
}

func (pc *patroniCluster) node(name string) *patroniNode {
	for _, n := range pc.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// waitHealthy waits for a leader and a synchronous standby and returns them.
func (pc *patroniCluster) waitHealthy(t *testing.T, timeout time.Duration) (leader, standby *patroniNode) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var ok bool
		leader, standby, ok = pc.healthy()
		assert.True(c, ok, "no leader with a synchronous standby within %s: %s", timeout, pc.roles())
	}, timeout, 200*time.Millisecond)
	return leader, standby
}

// databaseURL names both nodes: libpq's (and pgx's) multi-host form, which tries the hosts in order and
// keeps the first that accepts writes.
func (pc *patroniCluster) databaseURL(db string) string {
	var hosts []string
	for _, n := range pc.nodes {
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", n.pgPort))
	}
	return fmt.Sprintf("postgres://postgres:postgres@%s/%s?sslmode=disable&target_session_attrs=read-write",
		strings.Join(hosts, ","), db)
}

// nodeURL connects to one node only.
func (n *patroniNode) nodeURL(db string) string {
	return fmt.Sprintf("postgres://postgres:postgres@127.0.0.1:%d/%s?sslmode=disable", n.pgPort, db)
}

// patronictl runs patronictl against the cluster (through the first node's configuration) and returns
// its output.
func (pc *patroniCluster) patronictl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "patronictl", append([]string{"-c", pc.nodes[0].config}, args...)...)
	cmd.Env = envWithoutPG()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("patronictl %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// killPostmaster sends SIGKILL to the node's postmaster, as a crash would.
func (n *patroniNode) killPostmaster(t *testing.T) {
	t.Helper()
	pid := pgcluster.Postmaster(n.dataDir)
	require.Positive(t, pid, "no postmaster runs on %s", n.dataDir)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
}

// postgresUser is the credential Patroni runs with when the test runs as root, since PostgreSQL refuses
// to run as root; nil otherwise.
func postgresUser(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	require.NoError(t, err, "running as root needs a postgres system user for PostgreSQL")
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	require.NoError(t, err)
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	require.NoError(t, err)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// envWithoutPG is the environment minus PG* variables, which would redirect Patroni's own libpq
// connections.
func envWithoutPG() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
