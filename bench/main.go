// Command bench is Queen's load generator. It drives any Queen-compatible broker over HTTP (-url) or,
// without -url, builds ./cmd/queen and runs it on a private PostgreSQL; it measures push, pop+ack,
// fan-out, many-partition and transactional pipeline throughput and latency, the broker's RSS and the
// CPU split between broker and PostgreSQL, compares pushes with plain INSERTs into the same database,
// and verifies that every message answered "queued" was consumed exactly once per group.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	url, pgURL, jsonOut, scenarios   string
	brokerPID                        int
	durable, verifyPush, baseline    bool
	keep                             bool
	producers, consumers, conns      int
	pushBatches                      []int
	popBatch, concBatch, drainBatch  int
	msgSize, partitions              int
	manyPartitions                   int
	groups, groupConsumers           int
	prefill, backlog                 int
	duration, baselineDuration       time.Duration
	popWait, drainIdle, drainTimeout time.Duration
	lease                            time.Duration
	repo, brokerBin                  string
}

var allScenarios = []string{"push", "pop-ack", "fanout", "partitions", "pipeline"}

func parseFlags() (options, error) {
	var o options
	var batches string
	flag.StringVar(&o.url, "url", "", "broker base URL (e.g. http://127.0.0.1:6632); empty = build and start ./cmd/queen on a private PostgreSQL")
	flag.StringVar(&o.pgURL, "pg-url", "", "with -url: PostgreSQL URL for the INSERT baseline and settings (optional)")
	flag.IntVar(&o.brokerPID, "broker-pid", 0, "with -url: pid of the broker, to sample its RSS and CPU (optional)")
	flag.BoolVar(&o.durable, "durable", false, "local PostgreSQL with fsync/synchronous_commit on (default off, like a tmpfs benchmark box)")
	flag.StringVar(&o.scenarios, "scenarios", strings.Join(allScenarios, ","), "comma list of: "+strings.Join(allScenarios, ", ")+" (push-bN runs one push batch size)")
	flag.StringVar(&o.jsonOut, "json", "", "write all results to this JSON file")
	flag.IntVar(&o.producers, "producers", 16, "concurrent producers (each one request in flight)")
	flag.IntVar(&o.consumers, "consumers", 16, "concurrent consumers (queue-mode scenarios; pipeline splits them stage/sink)")
	flag.IntVar(&o.conns, "conns", 16, "max HTTP connections to the broker per role (producers' and consumers' transports each)")
	flag.StringVar(&batches, "push-batches", "1,10,100", "push scenario batch sizes")
	flag.IntVar(&o.popBatch, "pop-batch", 10, "pop batch size of consumers")
	flag.IntVar(&o.concBatch, "batch", 10, "push batch size of producers in fanout, partitions and pipeline")
	flag.IntVar(&o.drainBatch, "drain-batch", 100, "pop batch size when draining after a push scenario")
	flag.IntVar(&o.msgSize, "msg-size", 28, "payload size in bytes (a JSON string)")
	flag.IntVar(&o.partitions, "partitions", 10, "partitions per queue")
	flag.IntVar(&o.manyPartitions, "many-partitions", 10000, "partitions of the partitions scenario")
	flag.IntVar(&o.groups, "groups", 10, "consumer groups of the fanout scenario")
	flag.IntVar(&o.groupConsumers, "group-consumers", 1, "consumers per group in the fanout scenario")
	flag.IntVar(&o.prefill, "prefill", 60000, "messages pre-filled for pop-ack")
	flag.IntVar(&o.backlog, "backlog", 1000, "concurrent scenarios: producers pause while the slowest group lags this many messages")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured window per scenario")
	flag.DurationVar(&o.baselineDuration, "baseline-duration", 5*time.Second, "duration of each INSERT baseline")
	flag.BoolVar(&o.baseline, "baseline", true, "measure plain INSERTs into the same PostgreSQL after each push scenario")
	flag.BoolVar(&o.verifyPush, "verify-push", true, "drain push scenarios' queues to verify them")
	flag.DurationVar(&o.popWait, "pop-wait", time.Second, "long-poll timeout of pops (wait=true)")
	flag.DurationVar(&o.lease, "lease", 10*time.Second, "leaseTime the bench queues are configured with (whole seconds)")
	flag.DurationVar(&o.drainIdle, "drain-idle", 15*time.Second, "give up draining after this long without progress (keep it above -lease so lost leases expire and redeliver)")
	flag.DurationVar(&o.drainTimeout, "drain-timeout", 60*time.Second, "give up draining after this long")
	flag.StringVar(&o.brokerBin, "broker-bin", "", "local broker mode: run this queen binary instead of building ./cmd/queen")
	flag.BoolVar(&o.keep, "keep", false, "local broker mode: keep broker and PostgreSQL running at the end until interrupted (for inspection)")
	flag.StringVar(&o.repo, "repo", ".", "module root holding ./cmd/queen (local broker mode)")
	flag.Parse()
	for _, s := range strings.Split(batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-push-batches: bad size %q", s)
		}
		o.pushBatches = append(o.pushBatches, n)
	}
	if o.producers < 1 || o.consumers < 1 || o.conns < 1 || o.partitions < 1 || o.groups < 1 || o.groupConsumers < 1 || o.popBatch < 1 || o.concBatch < 1 {
		return o, fmt.Errorf("counts must be >= 1")
	}
	return o, nil
}

func main() {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

// Report is the -json document.
type Report struct {
	Started    time.Time `json:"started"`
	Broker     string    `json:"broker"`
	Local      bool      `json:"local_broker"`
	Durable    *bool     `json:"postgres_durable,omitempty"`
	PGSettings string    `json:"postgres_settings,omitempty"`
	CPUs       int       `json:"cpus"`
	GoVersion  string    `json:"go_version"`
	Results    []*Result `json:"results"`
	Verified   bool      `json:"verified"`
}

func run(ctx context.Context, o options) (int, error) {
	rep := Report{Started: time.Now().UTC(), Broker: o.url, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	r := &runner{opt: o, tag: strconv.FormatInt(time.Now().UnixNano()/1e6, 36), out: os.Stdout}
	pgURL, brokerPID := o.pgURL, o.brokerPID
	if o.url == "" {
		fmt.Printf("starting PostgreSQL (durable=%v) and building ./cmd/queen ...\n", o.durable)
		b, err := startLocalBroker(ctx, o.repo, o.brokerBin, o.durable, nil, os.Stderr)
		if err != nil {
			return 1, err
		}
		defer b.stop(context.WithoutCancel(ctx))
		rep.Broker, rep.Local, rep.Durable = b.URL, true, &o.durable
		pgURL, brokerPID = b.PGURL, b.PID()
		if o.keep {
			defer func() {
				fmt.Printf("-keep: broker %s, postgres %s; interrupt to stop\n", b.URL, b.PGURL)
				<-ctx.Done()
			}()
		}
		r.cpu.postgresPID = b.PGPID
	}
	r.cpu.brokerPID = brokerPID
	r.rss = newRSSSampler(brokerPID)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.rss.run(sctx, 50*time.Millisecond)
	r.prod, r.cons = newClient(rep.Broker, o.conns), newClient(rep.Broker, o.conns)
	defer r.prod.close()
	defer r.cons.close()
	if pgURL != "" {
		bl, err := newBaseliner(ctx, pgURL, o.producers)
		if err != nil {
			return 1, fmt.Errorf("baseline: %w", err)
		}
		defer bl.close(context.WithoutCancel(ctx))
		rep.PGSettings = bl.settings(ctx)
		if o.baseline {
			r.baseline = bl
		}
	}
	printHeader(os.Stdout, rep, o, brokerPID)

	for _, name := range strings.Split(o.scenarios, ",") {
		name = strings.TrimSpace(name)
		var rs []*Result
		var err error
		switch {
		case name == "push":
			for _, b := range o.pushBatches {
				var res *Result
				if res, err = r.runPush(ctx, b); err != nil {
					break
				}
				printResult(os.Stdout, res)
				rep.Results = append(rep.Results, res)
			}
		case strings.HasPrefix(name, "push-b"):
			b, perr := strconv.Atoi(strings.TrimPrefix(name, "push-b"))
			if perr != nil || b < 1 {
				return 2, fmt.Errorf("unknown scenario %q", name)
			}
			var res *Result
			if res, err = r.runPush(ctx, b); err == nil {
				rs = append(rs, res)
			}
		case name == "pop-ack":
			rs, err = one(r.runPopAck(ctx))
		case name == "fanout":
			rs, err = one(r.runFanout(ctx))
		case name == "partitions":
			rs, err = one(r.runPartitions(ctx))
		case name == "pipeline":
			rs, err = one(r.runPipeline(ctx))
		case name == "streams": // bench/streams.go; not in the default list (run with -scenarios streams)
			rs, err = one(r.runStreams(ctx))
		default:
			return 2, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(allScenarios, ", "))
		}
		for _, res := range rs {
			printResult(os.Stdout, res)
			rep.Results = append(rep.Results, res)
		}
		if err != nil {
			return 1, fmt.Errorf("%s: %w", name, err)
		}
		if ctx.Err() != nil {
			return 1, ctx.Err()
		}
	}
	rep.Verified = true
	for _, res := range rep.Results {
		if res.Failed() {
			rep.Verified = false
		}
	}
	printSummary(os.Stdout, rep)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			return 1, err
		}
		fmt.Printf("results written to %s\n", o.jsonOut)
	}
	if !rep.Verified {
		fmt.Println("VERIFICATION FAILED: some queued message was not consumed exactly once")
		return 1, nil
	}
	return 0, nil
}

func one(r *Result, err error) ([]*Result, error) {
	if r == nil {
		return nil, err
	}
	return []*Result{r}, err
}
