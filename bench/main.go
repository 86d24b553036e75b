// Command bench is Queen's load generator. It drives any Queen-compatible broker over HTTP (-url) or,
// without -url, builds ./cmd/queen and runs it on a private, durable PostgreSQL; it measures push,
// pop+ack, fan-out, many-partition and transactional pipeline throughput and latency, the broker's RSS
// and the CPU split between broker and PostgreSQL, compares pushes with plain INSERTs into the same
// database, optionally runs every scenario against a second broker (-compare) and prints the ratio, and
// verifies that every message answered "queued" was consumed exactly once per group.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queen-go/queen/internal/setting"
)

type options struct {
	url, pgURL, jsonOut, scenarios   string
	brokerPID                        int
	brokers                          int
	failoverAt                       time.Duration
	affinity                         bool
	fast, verifyPush, baseline       bool
	checkpoint                       bool
	keep                             bool
	producers, consumers, conns      int
	pushBatches                      []int
	partitionCounts, groupCounts     []int
	popBatch, concBatch, drainBatch  int
	msgSize, partitions              int
	groupConsumers                   int
	prefill, backlog                 int
	duration, baselineDuration       time.Duration
	popWait, drainIdle, drainTimeout time.Duration
	idleConsumers                    int           // idle scenario: parked consumers, one partition each
	idleWindow                       time.Duration // idle scenario: the quiet window measured
	backgroundPartitions             int           // background scenario: partitions held idle
	backgroundSettle                 time.Duration // background scenario: wait before the window
	backgroundWindow                 time.Duration // background scenario: the quiet window measured
	lease                            time.Duration
	repo, brokerBin                  string
	compareURL, comparePGURL         string
	compareBin                       string
	comparePID                       int
	pprofDir                         string
	pgStats, explain, pushSQL        bool
	vacuumBetween                    bool
	skipLocked                       bool          // pop-ack and fanout: also the SKIP LOCKED table-queue baseline
	loadRate, loadFraction           float64       // xmin-hold, soak: offered msg/s (0: loadFraction of the measured capacity)
	xminHold, xminPhase              time.Duration // xmin-hold: how long the horizon is held; the phases before and after
	soak, soakWindow, soakChurn      time.Duration // soak: total length (0: not asked for), window, queue churn interval
	soakRetention                    time.Duration // soak: completedRetentionSeconds of its two queues (0: none)
	deletePartitions, deleteMessages int           // delete-then-run: the queue deleted
	deleteVacuum                     bool          // delete-then-run: VACUUM ANALYZE instead of waiting for autovacuum
	deleteWait                       time.Duration // delete-then-run: the longest wait for autovacuum
	viaProxy                         bool          // local broker mode: every request through a queen-proxy the bench starts
	compareViaProxy                  bool          // -compare local: the second broker's requests through a queen-proxy, the first's direct
	pushSQLDuration                  time.Duration
	pushSQLOnly                      string
	schema                           string
	brokerEnv, compareEnv, proxyEnv  []string
	pgSettings                       []string
}

func intList(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mult := 1
		if strings.HasSuffix(f, "k") {
			mult, f = 1000, strings.TrimSuffix(f, "k")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s: bad count %q", flagName, f)
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-%s: empty list", flagName)
	}
	return out, nil
}

func parseFlags() (options, error) {
	var o options
	var batches, pcounts, gcounts, env, cenv, penv string
	flag.StringVar(&o.url, "url", "", "broker base URL (e.g. http://127.0.0.1:6632); empty = build and start ./cmd/queen on a private PostgreSQL")
	flag.StringVar(&o.pgURL, "pg-url", "", "with -url: PostgreSQL URL for the INSERT baseline and settings (optional)")
	flag.IntVar(&o.brokerPID, "broker-pid", 0, "with -url: pid of the broker, to sample its RSS and CPU (optional; the first one's when -url lists several)")
	flag.IntVar(&o.brokers, "brokers", 1, "local broker mode: run this many brokers on the one database (with -compare local, on each side), as stateless brokers behind a load balancer; -url may list several, comma-separated")
	flag.BoolVar(&o.affinity, "affinity", false, "with several brokers: each producer and consumer loop sends to one broker (session affinity); without it each request goes to the next broker, so a pop and its ack usually meet different brokers")
	flag.BoolVar(&o.fast, "fast", false, "local PostgreSQL without crash safety (fsync, synchronous_commit, full_page_writes off); the default is durable, like production")
	flag.StringVar(&o.scenarios, "scenarios", "all", "comma list of: "+strings.Join(scenarioNames(false), ", ")+", push-bN (one push batch size), or all (every one but streams)")
	flag.StringVar(&o.jsonOut, "json", "", "append every result to this file as one JSON line")
	flag.IntVar(&o.producers, "producers", 16, "concurrent producers (each one request in flight)")
	flag.IntVar(&o.consumers, "consumers", 16, "concurrent consumers (queue-mode scenarios; pipeline splits them stage/sink)")
	flag.IntVar(&o.conns, "conns", 16, "max HTTP connections to the broker per role (producers' and consumers' transports each)")
	flag.StringVar(&batches, "push-batches", "1,10,100", "push scenario batch sizes")
	flag.StringVar(&pcounts, "partition-counts", "10,1k,10k,100k", "partitions scenario: the partition counts of the sweep")
	flag.StringVar(&gcounts, "group-counts", "1,5,10", "fanout scenario: the consumer-group counts of the sweep")
	flag.IntVar(&o.popBatch, "pop-batch", 10, "pop batch size of consumers")
	flag.IntVar(&o.concBatch, "batch", 10, "push batch size of producers in fanout, partitions and pipeline")
	flag.IntVar(&o.drainBatch, "drain-batch", 100, "pop batch size when draining after a push scenario")
	flag.IntVar(&o.msgSize, "msg-size", 28, "payload size in bytes (a JSON string)")
	flag.IntVar(&o.partitions, "partitions", 10, "partitions per queue (push, pop-ack, fanout, pipeline)")
	flag.IntVar(&o.groupConsumers, "group-consumers", 1, "consumers per group in the fanout scenario")
	flag.IntVar(&o.prefill, "prefill", 60000, "messages pre-filled for pop-ack")
	flag.IntVar(&o.backlog, "backlog", 1000, "concurrent scenarios: producers pause while the slowest group lags this many messages")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured window per scenario")
	flag.DurationVar(&o.baselineDuration, "baseline-duration", 5*time.Second, "duration of each INSERT baseline")
	flag.BoolVar(&o.baseline, "baseline", true, "measure plain INSERTs into the same PostgreSQL after each push scenario")
	flag.BoolVar(&o.skipLocked, "skip-locked", true, "after pop-ack and each fanout window: the same load on plain tables consumed with SELECT … FOR UPDATE SKIP LOCKED + DELETE (one table per group), same PostgreSQL, workers and window; prints our rate as a ratio of it")
	flag.Float64Var(&o.loadRate, "load-rate", 0, "xmin-hold and soak: messages a second the paced producers offer; 0 = -load-fraction of the capacity measured first (unpaced, -duration)")
	flag.Float64Var(&o.loadFraction, "load-fraction", 0.7, "xmin-hold and soak: the fraction of the measured capacity offered when -load-rate is 0")
	flag.DurationVar(&o.xminHold, "xmin-hold", 60*time.Second, "xmin-hold scenario: how long the REPEATABLE READ transaction holds the horizon (the target's is 5m)")
	flag.DurationVar(&o.xminPhase, "xmin-phase", 30*time.Second, "xmin-hold scenario: the measured phase before the hold and the one after the release")
	flag.DurationVar(&o.soak, "soak", 0, "run the soak scenario for this long instead of -scenarios (the target's is 1h; -soak 3m -soak-window 1m is a smoke run)")
	flag.DurationVar(&o.soakWindow, "soak-window", 5*time.Minute, "soak: the window over which p99, RSS and database size are reported")
	flag.DurationVar(&o.soakChurn, "soak-churn", time.Minute, "soak: a queue is created, used and deleted this often")
	flag.DurationVar(&o.soakRetention, "soak-retention", 2*time.Minute, "soak: its two queues delete consumed messages this old (retentionEnabled, completedRetentionSeconds), as a deployment would; 0 keeps them")
	flag.IntVar(&o.deletePartitions, "delete-partitions", 10000, "delete-then-run: partitions of the queue deleted (the target's is 100000)")
	flag.IntVar(&o.deleteMessages, "delete-messages", 100000, "delete-then-run: messages of the queue deleted (the target's is 1000000)")
	flag.BoolVar(&o.deleteVacuum, "delete-vacuum", true, "delete-then-run: VACUUM ANALYZE after the delete; false waits for autovacuum instead (up to -delete-wait)")
	flag.DurationVar(&o.deleteWait, "delete-wait", 10*time.Minute, "delete-then-run with -delete-vacuum=false: the longest wait for autovacuum")
	flag.BoolVar(&o.compareViaProxy, "compare-via-proxy", false, "with -compare local: send the second broker's requests through a queen-proxy (as -via-proxy) and the first's directly, so that each scenario's proxy/direct ratio and p50 difference come from one run (docs/performance.md, target 8)")
	flag.BoolVar(&o.viaProxy, "via-proxy", false, "local broker mode: build ./cmd/queen-proxy and send every request through it (broker with JWT_ENABLED, HS256; the proxy's state in the same database); reports the proxy's CPU per request and per message")
	flag.BoolVar(&o.verifyPush, "verify-push", true, "drain push scenarios' queues to verify them")
	flag.BoolVar(&o.checkpoint, "checkpoint", true, "CHECKPOINT before every measured window and baseline, so that each starts from the same WAL state instead of some meeting a checkpoint's full-page writes")
	flag.DurationVar(&o.popWait, "pop-wait", time.Second, "long-poll timeout of pops (wait=true)")
	flag.DurationVar(&o.lease, "lease", 10*time.Second, "leaseTime the bench queues are configured with (whole seconds)")
	flag.DurationVar(&o.drainIdle, "drain-idle", 15*time.Second, "give up draining after this long without progress (keep it above -lease so lost leases expire and redeliver)")
	flag.DurationVar(&o.drainTimeout, "drain-timeout", 120*time.Second, "give up draining after this long")
	flag.IntVar(&o.idleConsumers, "idle-consumers", 2000, "idle scenario: consumers each long-polling a partition of its own (30 s timeout)")
	flag.DurationVar(&o.idleWindow, "idle-window", 60*time.Second, "idle scenario: the quiet window over which CPU and RSS are measured (two long-poll timeouts by default)")
	flag.IntVar(&o.backgroundPartitions, "background-partitions", 100_000, "background scenario: partitions created (one message each, consumed) before the quiet window")
	flag.DurationVar(&o.backgroundSettle, "background-settle", 30*time.Second, "background scenario: wait after the partitions were consumed (the jobs' first passes over them) before the window")
	flag.DurationVar(&o.backgroundWindow, "background-window", time.Minute, "background scenario: the quiet window over which PostgreSQL's time is measured")
	flag.StringVar(&o.brokerBin, "broker-bin", "", "local broker mode: run this queen binary instead of building ./cmd/queen")
	flag.StringVar(&env, "broker-env", "", "local broker mode: extra environment of the broker, comma-separated NAME=value")
	flag.BoolVar(&o.keep, "keep", false, "local broker mode: keep broker and PostgreSQL running at the end until interrupted (for inspection)")
	flag.StringVar(&o.repo, "repo", ".", "module root holding ./cmd/queen (local broker mode)")
	flag.StringVar(&o.compareURL, "compare", "", "also run every scenario against this Queen-compatible broker and print both and their ratio; \"local\" starts a second instance of ours on its own PostgreSQL")
	flag.StringVar(&o.comparePGURL, "compare-pg-url", "", "with -compare URL: that broker's PostgreSQL (baseline, settings; optional)")
	flag.StringVar(&o.compareBin, "compare-bin", "", "with -compare local: run this queen binary as the second broker (e.g. a build of another commit), instead of the same one")
	flag.StringVar(&penv, "proxy-env", "", "with -via-proxy: extra environment of the queen-proxy, comma-separated NAME=value")
	flag.StringVar(&cenv, "compare-env", "", "with -compare local: extra environment of the second broker only (after -broker-env), comma-separated NAME=value")
	flag.IntVar(&o.comparePID, "compare-pid", 0, "with -compare URL: that broker's pid (RSS, CPU; optional)")
	flag.StringVar(&o.pprofDir, "pprof", "", "write a CPU profile of the broker (local brokers) and one of this harness per scenario window into this directory; prints their top functions")
	flag.BoolVar(&o.explain, "explain-pop", false, "instead of load: EXPLAIN (ANALYZE, BUFFERS) of a wildcard pop on queues of -partition-counts partitions, in the broker's database")
	flag.BoolVar(&o.pushSQL, "push-sql", false, "instead of load: time variants of the broker's push statement directly against its database (where PostgreSQL's time per pushed row goes)")
	flag.DurationVar(&o.pushSQLDuration, "push-sql-duration", 5*time.Second, "with -push-sql: how long each variant runs")
	flag.StringVar(&o.pushSQLOnly, "push-sql-only", "", "with -push-sql: run only the variants whose name contains one of these comma-separated texts")
	flag.StringVar(&o.schema, "schema", "queenmq", "the broker's schema (QUEEN_SCHEMA), for -explain-pop")
	flag.BoolVar(&o.pgStats, "pg-stats", false, "local PostgreSQL with pg_stat_statements; print the statements that took the most time in each window")
	var pgset string
	flag.StringVar(&pgset, "pg-settings", "", "local PostgreSQL: extra server settings, comma-separated name=value (e.g. session_preload_libraries=auto_explain,auto_explain.log_min_duration=20ms to log slow plans in postgres.log, kept with -keep)")
	flag.BoolVar(&o.vacuumBetween, "vacuum-between", true, "after each scenario's queues are deleted, VACUUM the broker's database (the state autovacuum leaves once it reached their dead rows), so that no window pays for the dead rows of an earlier scenario; -vacuum-between=false leaves them to autovacuum")
	flag.DurationVar(&o.failoverAt, "failover-at", 0, "instead of the scenarios: push/pop/ack for -duration on a private primary with a synchronous standby, kill the primary (-m immediate) at this time and promote the standby; prints the gap and the exactly-once check")
	flag.Parse()
	var err error
	if o.pushBatches, err = intList("push-batches", batches); err != nil {
		return o, err
	}
	if o.partitionCounts, err = intList("partition-counts", pcounts); err != nil {
		return o, err
	}
	if o.groupCounts, err = intList("group-counts", gcounts); err != nil {
		return o, err
	}
	o.brokerEnv, o.pgSettings, o.compareEnv, o.proxyEnv = setting.List(env), setting.List(pgset), setting.List(cenv), setting.List(penv)
	if o.deletePartitions < 1 || o.deleteMessages < 1 {
		return o, fmt.Errorf("-delete-partitions and -delete-messages must be >= 1")
	}
	if o.compareViaProxy && (o.compareURL != "local" || o.viaProxy) {
		return o, fmt.Errorf("-compare-via-proxy needs -compare local and no -via-proxy")
	}
	if (o.viaProxy || o.compareViaProxy) && (o.url != "" || o.brokers != 1) {
		return o, fmt.Errorf("-via-proxy runs in local broker mode with one broker (no -url, -brokers 1)")
	}
	if o.producers < 1 || o.brokers < 1 || o.consumers < 1 || o.conns < 1 || o.partitions < 1 || o.groupConsumers < 1 || o.popBatch < 1 || o.concBatch < 1 {
		return o, fmt.Errorf("counts must be >= 1")
	}
	if o.soak > 0 {
		o.scenarios = "soak"
	}
	if o.scenarios == "all" {
		o.scenarios = strings.Join(scenarioNames(true), ",")
	}
	return o, nil
}

func main() {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	// SIGPIPE too: with its output piped into a reader that quit (head), the bench would otherwise die
	// at its next write and leave its private PostgreSQL and broker running.
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE}
	if o.failoverAt > 0 {
		// A failover breaks sockets by design; with SIGPIPE notified, a write on any broken socket
		// would end the run.
		sigs = sigs[:2]
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	run := run
	if o.failoverAt > 0 {
		run = runFailoverBench
	}
	code, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

func one(r *Result, err error) ([]*Result, error) {
	if r == nil {
		return nil, err
	}
	return []*Result{r}, err
}
