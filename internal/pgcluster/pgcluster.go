// Package pgcluster starts and stops a private PostgreSQL server from the
// binaries installed on the machine, so that the broker's embedded mode and
// the test harness never depend on an externally managed database.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configures a cluster. Only DataDir is required.
type Options struct {
	// DataDir holds the cluster. It is created if missing; initdb runs only
	// when DataDir/PG_VERSION is absent, so a restart reuses existing data.
	DataDir string
	// BinDir holds initdb, pg_ctl and postgres; auto-detected when empty.
	BinDir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free port.
	Port int
	// Durable keeps PostgreSQL's crash-safety defaults. Tests set it to false
	// to trade durability (fsync, synchronous_commit, full_page_writes) for speed.
	Durable bool
	// Settings are extra server settings as name=value (e.g. shared_preload_libraries=pg_stat_statements).
	Settings []string
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger

	// Name identifies the server to its primary (cluster_name, which a standby's WAL receiver reports
	// as its application_name): the name SynchronousStandbys of the primary lists.
	Name string
	// Replication makes the server able to stream WAL to standbys (wal_level=replica, WAL senders,
	// hot_standby). initdb's pg_hba.conf already trusts replication connections from 127.0.0.1 for
	// the postgres superuser, which is the replication user.
	Replication bool
	// SynchronousStandbys names the standbys (their Name) a commit waits for; setting it also sets
	// synchronous_commit=on even when Durable is false, since that is what makes a commit wait.
	SynchronousStandbys []string
	// StandbyOf makes a new cluster a streaming standby of that running cluster (pg_basebackup -R
	// instead of initdb); StandbyOfAddr is the same for a primary given as host:port.
	StandbyOf     *Cluster
	StandbyOfAddr string
}

// Cluster is a PostgreSQL server owned by this process.
type Cluster struct {
	binDir    string
	dataDir   string
	socketDir string
	port      int
	durable   bool
	settings  []string
	primary   string // host:port this cluster was cloned from as a standby; "" for a primary
	log       *slog.Logger
	cred      *syscall.Credential // non-nil when running as root

	mu sync.Mutex // serialises Start/Stop/Kill so pg_ctl invocations never overlap
}

// maxSocketPath is a conservative limit for unix socket paths (sun_path is 108
// bytes on Linux and 104 on the BSDs, including the terminating NUL).
const maxSocketPath = 100

// FindBinDir locates the directory holding initdb, pg_ctl and postgres.
// It prefers pg_ctl on PATH, then `pg_config --bindir`, then the highest
// major version under /usr/lib/postgresql (Debian/Ubuntu layout, which does
// not put these binaries on PATH).
func FindBinDir() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		// Resolve symlinks so that the sibling binaries are found next to the real pg_ctl.
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, debianBinDirs()...)
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", errors.New("pgcluster: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH, via pg_config or under /usr/lib/postgresql/*/bin; install them with `apt-get install -y postgresql`")
}

func debianBinDirs() []string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(p string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(p)), 64)
		return v
	}
	sort.Slice(matches, func(i, j int) bool { return major(matches[i]) > major(matches[j]) })
	return matches
}

func hasServerBinaries(dir string) bool {
	if dir == "" {
		return false
	}
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Start prepares (initdb if needed) and starts a cluster, waiting until it
// accepts connections.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.DataDir == "" {
		return nil, errors.New("pgcluster: Options.DataDir is required")
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: resolve data dir: %w", err)
	}
	binDir := o.BinDir
	if binDir == "" {
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if !hasServerBinaries(binDir) {
		return nil, fmt.Errorf("pgcluster: %s does not contain initdb, pg_ctl and postgres; install them with `apt-get install -y postgresql`", binDir)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Cluster{
		binDir:   binDir,
		dataDir:  dataDir,
		port:     o.Port,
		durable:  o.Durable,
		settings: append(replicationSettings(o), o.Settings...),
		log:      logger,
		primary:  o.StandbyOfAddr,
	}
	if o.StandbyOf != nil {
		c.primary = o.StandbyOf.Addr()
	}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root, so they run as the
		// conventional "postgres" system user, which must own the data dir.
		if c.cred, err = postgresCredential(); err != nil {
			return nil, err
		}
	}
	if err := c.prepareDataDir(ctx); err != nil {
		return nil, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if o.Port != 0 {
		if err := c.startLocked(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	// A port picked by probing can be taken by a concurrent process (e.g.
	// another test binary) before postgres binds it, so retry with a new one.
	const attempts = 5
	for i := 1; ; i++ {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
		err = c.startLocked(ctx)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errAddrInUse) || i == attempts {
			return nil, err
		}
		c.log.Warn("pgcluster: port taken, retrying", "port", c.port)
	}
}

// URL returns a connection URL for dbname using trust authentication.
func (c *Cluster) URL(dbname string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, url.PathEscape(dbname))
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Addr returns the server's host:port.
func (c *Cluster) Addr() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// replicationSettings are the server settings the replication options imply.
func replicationSettings(o Options) []string {
	var s []string
	if o.Name != "" {
		s = append(s, "cluster_name="+o.Name)
	}
	if o.Replication || o.StandbyOf != nil || o.StandbyOfAddr != "" {
		// A standby gets the same, so that once promoted it can feed standbys of its own.
		s = append(s, "wal_level=replica", "max_wal_senders=10", "max_replication_slots=10",
			"hot_standby=on", "wal_keep_size=256MB")
	}
	if len(o.SynchronousStandbys) > 0 {
		s = append(s, "synchronous_standby_names="+strings.Join(o.SynchronousStandbys, ","), "synchronous_commit=on")
	}
	return s
}

// Promote turns a standby into a primary and returns once it accepts writes.
func (c *Cluster) Promote(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if out, err := c.run(ctx, "pg_ctl", "promote", "-w", "-t", strconv.Itoa(waitSeconds(ctx)), "-D", c.dataDir); err != nil {
		return fmt.Errorf("pgcluster: pg_ctl promote: %w\n%s", err, bytes.TrimSpace(out))
	}
	// pg_ctl -w returns when the server says it is promoted; check the way a client would see it.
	for {
		inRecovery, err := c.inRecovery(ctx)
		if err == nil && !inRecovery {
			c.primary = ""
			c.log.Info("pgcluster: promoted", "port", c.port)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgcluster: promote: still in recovery (%v): %w", err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c *Cluster) inRecovery(ctx context.Context) (bool, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var r bool
	err = conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&r)
	return r, err
}

// Start starts the server again after Stop or Kill, on the same data
// directory and port.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startLocked(ctx)
}

// Stop shuts the server down with a fast shutdown (clients are disconnected,
// a checkpoint is written). Stopping a stopped cluster is a no-op.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(ctx, "fast")
}

// Kill stops the server with an immediate shutdown, which skips the
// checkpoint so that the next start performs crash recovery. It is meant for
// fault-injection tests.
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.stopLocked(ctx, "immediate")
}

var errAddrInUse = errors.New("address already in use")

func (c *Cluster) startLocked(ctx context.Context) error {
	if err := c.clearStalePID(ctx); err != nil {
		return err
	}
	if err := c.prepareSocketDir(); err != nil {
		return err
	}
	logFile := filepath.Join(c.dataDir, "postgres.log")
	args := []string{"start", "-w", "-t", strconv.Itoa(waitSeconds(ctx)), "-D", c.dataDir, "-l", logFile, "-o", c.serverOptions()}
	out, err := c.run(ctx, "pg_ctl", args...)
	if err != nil {
		tail := logTail(logFile)
		// pg_ctl may have been killed by ctx while postgres kept starting;
		// make sure no half-started server outlives the failed call.
		c.bestEffortImmediateStop(ctx)
		c.removeSocketDir()
		err = fmt.Errorf("pgcluster: pg_ctl start (port %d) failed: %w\n%s\n--- tail of %s ---\n%s", c.port, err, bytes.TrimSpace(out), logFile, tail)
		if strings.Contains(tail, "could not bind") || strings.Contains(tail, "already in use") {
			return fmt.Errorf("%w (%w)", err, errAddrInUse)
		}
		return err
	}
	c.log.Info("pgcluster: started", "port", c.port, "data_dir", c.dataDir, "bin_dir", c.binDir)
	return nil
}

func (c *Cluster) stopLocked(ctx context.Context, mode string) error {
	if !c.pidFileExists() {
		return nil
	}
	out, err := c.run(ctx, "pg_ctl", "stop", "-w", "-t", strconv.Itoa(waitSeconds(ctx)), "-m", mode, "-D", c.dataDir)
	if err != nil {
		if !c.pidFileExists() {
			return nil // it went away on its own (or a stale pid file vanished), which is what we wanted
		}
		return fmt.Errorf("pgcluster: pg_ctl stop -m %s: %w\n%s", mode, err, bytes.TrimSpace(out))
	}
	c.removeSocketDir()
	c.log.Info("pgcluster: stopped", "mode", mode, "port", c.port)
	return nil
}

func (c *Cluster) bestEffortImmediateStop(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if c.pidFileExists() {
		_, _ = c.run(ctx, "pg_ctl", "stop", "-w", "-m", "immediate", "-D", c.dataDir)
	}
}

func (c *Cluster) serverOptions() string {
	opts := []string{
		"-p", strconv.Itoa(c.port),
		"-k", shellQuote(c.socketDir),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=200",
		"-c", "shared_buffers=128MB",
		"-c", "timezone=UTC",
		"-c", "log_timezone=UTC",
	}
	if !c.durable {
		opts = append(opts,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
		)
	}
	for _, kv := range c.settings {
		opts = append(opts, "-c", shellQuote(kv))
	}
	return strings.Join(opts, " ")
}

// prepareDataDir creates the data directory with the ownership and mode
// PostgreSQL insists on and runs initdb when the directory holds no cluster yet.
func (c *Cluster) prepareDataDir(ctx context.Context) error {
	// Parents get 0755 (not MkdirAll's inherited 0700 semantics for the leaf)
	// so that the postgres user can traverse them when we run as root.
	if err := os.MkdirAll(filepath.Dir(c.dataDir), 0o755); err != nil {
		return fmt.Errorf("pgcluster: create parent of data dir: %w", err)
	}
	if err := os.Mkdir(c.dataDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("pgcluster: create data dir: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(c.dataDir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgcluster: chown data dir to postgres: %w", err)
		}
		if err := checkTraversable(filepath.Dir(c.dataDir), c.cred.Uid, c.cred.Gid); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("pgcluster: stat PG_VERSION: %w", err)
	}
	if c.primary != "" {
		return c.cloneStandby(ctx)
	}
	args := []string{"-D", c.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
	if !c.durable {
		args = append(args, "--no-sync")
	}
	c.log.Info("pgcluster: initializing data directory", "data_dir", c.dataDir)
	if out, err := c.run(ctx, "initdb", args...); err != nil {
		return fmt.Errorf("pgcluster: initdb %s: %w\n%s", c.dataDir, err, bytes.TrimSpace(out))
	}
	return nil
}

// cloneStandby fills the empty data dir with a base backup of the primary; -R writes standby.signal
// and primary_conninfo, so the server starts as a streaming standby.
func (c *Cluster) cloneStandby(ctx context.Context) error {
	host, port, err := net.SplitHostPort(c.primary)
	if err != nil {
		return fmt.Errorf("pgcluster: standby of %q: %w", c.primary, err)
	}
	args := []string{"-h", host, "-p", port, "-U", "postgres", "-D", c.dataDir, "-R", "-X", "stream", "-c", "fast"}
	if !c.durable {
		args = append(args, "--no-sync")
	}
	c.log.Info("pgcluster: cloning standby", "primary", c.primary, "data_dir", c.dataDir)
	if out, err := c.run(ctx, "pg_basebackup", args...); err != nil {
		return fmt.Errorf("pgcluster: pg_basebackup from %s: %w\n%s", c.primary, err, bytes.TrimSpace(out))
	}
	return nil
}

func (c *Cluster) prepareSocketDir() error {
	if c.socketDir != "" {
		return nil
	}
	if len(c.dataDir)+len("/.s.PGSQL.65535.lock") <= maxSocketPath {
		c.socketDir = c.dataDir
		return nil
	}
	// The data dir path is too long for a unix socket; use a short private
	// dir, removed again when the server stops.
	dir, err := os.MkdirTemp("", "qpg")
	if err != nil {
		return fmt.Errorf("pgcluster: create socket dir: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgcluster: chown socket dir: %w", err)
		}
	}
	c.socketDir = dir
	return nil
}

// clearStalePID makes a start possible after a crash. A postmaster.pid left
// by a dead server is removed (postgres would usually do it itself, but not
// when the recorded pid has since been reused by another postgres-owned
// process). A postmaster still running on this data dir, e.g. orphaned by a
// crashed broker, is shut down so that the new start applies our options.
func (c *Cluster) clearStalePID(ctx context.Context) error {
	pidFile := filepath.Join(c.dataDir, "postmaster.pid")
	pid, err := readPIDFile(c.dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("pgcluster: read postmaster.pid: %w", err)
	}
	if pid > 0 && c.isOurPostmaster(pid) {
		c.log.Warn("pgcluster: stopping leftover postmaster on data dir", "pid", pid, "data_dir", c.dataDir)
		if out, err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", c.dataDir); err != nil {
			return fmt.Errorf("pgcluster: stop leftover postmaster (pid %d): %w\n%s", pid, err, bytes.TrimSpace(out))
		}
		return nil
	}
	c.log.Warn("pgcluster: removing stale postmaster.pid", "data_dir", c.dataDir)
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("pgcluster: remove stale postmaster.pid: %w", err)
	}
	return nil
}

// isOurPostmaster reports whether pid is a live postmaster serving this data
// dir. Without /proc it falls back to a liveness check; a false positive only
// costs a pg_ctl stop attempt.
func (c *Cluster) isOurPostmaster(pid int) bool {
	if serves, known := servesDataDir(pid, c.dataDir); known {
		return serves
	}
	return syscall.Kill(pid, 0) == nil
}

// Postmaster returns the pid of the postmaster running on dataDir, as its
// postmaster.pid names it, or 0 when none runs there (no file, a stale one, a
// pid now used by another process, or no /proc to tell). Unlike the check
// before a start, it never guesses: a caller may signal the pid it returns.
func Postmaster(dataDir string) int {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return 0
	}
	pid, err := readPIDFile(dir)
	if err != nil || pid <= 0 {
		return 0
	}
	if serves, known := servesDataDir(pid, dir); known && serves {
		return pid
	}
	return 0
}

// readPIDFile reads the pid on the first line of dataDir/postmaster.pid (0 if
// that line is not a number).
func readPIDFile(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid, nil
}

// servesDataDir reports whether pid is a postmaster serving dataDir (an
// absolute, clean path); known is false when /proc cannot tell. pg_ctl
// launches the postmaster with "-D <datadir>", and unlike backends the
// postmaster keeps its original argv, so /proc/<pid>/cmdline identifies it.
func servesDataDir(pid int, dataDir string) (serves, known bool) {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, statErr := os.Stat("/proc/self"); statErr == nil {
				return false, true // /proc works, so the process is gone
			}
		}
		return false, false
	}
	args := strings.Split(string(cmdline), "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-D" && filepath.Clean(args[i+1]) == dataDir {
			return true, true
		}
	}
	return false, true
}

// removeSocketDir deletes a private socket dir so that stopped clusters leave
// nothing behind in the temp dir; the next start creates a fresh one.
func (c *Cluster) removeSocketDir() {
	if c.socketDir != "" && c.socketDir != c.dataDir {
		_ = os.RemoveAll(c.socketDir)
		c.socketDir = ""
	}
}

func (c *Cluster) pidFileExists() bool {
	_, err := os.Stat(filepath.Join(c.dataDir, "postmaster.pid"))
	return err == nil
}

// run executes one of the PostgreSQL binaries as the postgres user when we
// are root, returning its combined output.
func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	// The caller's cwd may be unreadable for the postgres user.
	cmd.Dir = "/"
	cmd.Env = cleanEnv()
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	// pg_ctl start redirects the server's output to the -l log file, so the
	// server does not inherit these pipes and Wait does not block on it.
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// cleanEnv drops libpq/PG* variables (PGDATA, PGPORT, PGOPTIONS, ...) so the
// user's environment cannot redirect or reconfigure the private cluster.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root requires a \"postgres\" system user to own the cluster (initdb refuses root): %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: parse uid of postgres: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: parse gid of postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// checkTraversable fails early, with an actionable message, when the postgres
// user could not reach the data dir (e.g. it sits under root's 0700 home or a
// t.TempDir); otherwise initdb fails with a far less obvious error.
func checkTraversable(dir string, uid, gid uint32) error {
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgcluster: stat %s: %w", p, err)
		}
		mode := fi.Mode().Perm()
		ok := mode&0o001 != 0
		if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix {
			switch {
			case st.Uid == uid:
				ok = mode&0o100 != 0
			case st.Gid == gid:
				ok = mode&0o010 != 0
			}
		}
		if !ok {
			return fmt.Errorf("pgcluster: directory %s (mode %v) is not traversable by the postgres user; put the data dir somewhere world-searchable or chmod o+x it", p, mode)
		}
		if parent := filepath.Dir(p); parent == p {
			return nil
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: pick free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitSeconds maps the context deadline onto pg_ctl's -t, so pg_ctl gives up
// on its own rather than being killed mid-operation.
func waitSeconds(ctx context.Context) int {
	const def = 60
	dl, ok := ctx.Deadline()
	if !ok {
		return def
	}
	s := int(time.Until(dl).Seconds())
	if s < 1 {
		return 1
	}
	return min(s, def)
}

func logTail(path string) string {
	const maxBytes = 4096
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot stat log: %v)", err)
	}
	off := max(fi.Size()-maxBytes, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if off > 0 {
		// Drop the partial first line.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(bytes.TrimSpace(b))
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
