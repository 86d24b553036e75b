package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Report describes one bench run: where it ran and every result, per target.
type Report struct {
	Started    time.Time `json:"started"`
	Target     string    `json:"target"` // "queen" or "compare"
	Broker     string    `json:"broker"`
	Brokers    []string  `json:"brokers,omitempty"` // every broker sharing the database, when more than one
	Proxy      string    `json:"proxy,omitempty"`   // -via-proxy: the queen-proxy every request went through
	Local      bool      `json:"local_broker"`
	Durable    *bool     `json:"postgres_durable,omitempty"`
	PGSettings string    `json:"postgres_settings,omitempty"`
	CPUs       int       `json:"cpus"`
	GoVersion  string    `json:"go_version"`
	Commit     string    `json:"commit,omitempty"`
	Results    []*Result `json:"-"`
}

// target is one broker the scenarios run against, with everything measured about it.
type target struct {
	rep    Report
	runner *runner
	close  []func()
}

func (t *target) stop() {
	for i := len(t.close) - 1; i >= 0; i-- {
		t.close[i]()
	}
}

// openTarget starts (url == "") or attaches to a broker and prepares a runner for it.
// url may list several brokers sharing one database, comma-separated; brokerPID is then the first's.
func openTarget(ctx context.Context, o options, label, url, pgURL string, brokerPID int, started time.Time) (*target, error) {
	urls := strings.Split(url, ",")
	var brokerPIDs []int
	if brokerPID != 0 {
		brokerPIDs = []int{brokerPID}
	}
	var auth string // -via-proxy: the proxy's key
	viaProxy := o.viaProxy || label == "compare" && o.compareViaProxy
	t := &target{rep: Report{Started: started, Target: label, Broker: urls[0], CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}}
	r := &runner{opt: o, tag: strconv.FormatInt(time.Now().UnixNano()/1e6, 36) + label[:1], out: os.Stdout, label: label}
	if url == "" {
		durable := !o.fast
		fmt.Printf("[%s] starting PostgreSQL (durable=%v) and the broker ...\n", label, durable)
		// A write-heavy deployment raises max_wal_size; at the default (1GB) a checkpoint started
		// every ~500 MB of WAL, i.e. inside some push-b100 windows and not in others.
		settings := append([]string{"max_wal_size=4GB"}, o.pgSettings...)
		if o.pgStats {
			settings = append(settings, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all", "pg_stat_statements.track_planning=on")
		}
		spec := brokerSpec{bin: o.brokerBin, n: o.brokers, env: append([]string(nil), o.brokerEnv...)}
		if label == "compare" {
			spec.env = append(spec.env, o.compareEnv...)
		}
		if o.pprofDir != "" {
			// The profiles are the first broker's: one listener, one port.
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			r.pprofURL = "http://127.0.0.1:" + strconv.Itoa(port)
			spec.firstEnv = append(spec.firstEnv, "PPROF_ADDR=127.0.0.1:"+strconv.Itoa(port))
		}
		secret := ""
		if viaProxy {
			secret = randomSecret()
			spec.env = append(spec.env, proxyBrokerEnv(secret)...)
		}
		if label == "compare" && o.compareBin != "" {
			spec.bin = o.compareBin
		}
		t.rep.Commit = brokerBuild(o.repo, spec.bin)
		b, err := startLocalBroker(ctx, o.repo, spec, durable, settings, os.Stderr)
		if err != nil {
			return nil, err
		}
		t.close = append(t.close, func() { b.stop(context.WithoutCancel(ctx)) })
		t.rep.Broker, t.rep.Local, t.rep.Durable = b.URL, true, &durable
		urls, pgURL, brokerPIDs = b.URLs(), b.PGURL, b.PIDs()
		r.cpu.postgresPID = b.PGPID
		if viaProxy {
			p, err := startProxy(ctx, o.repo, b.PGURL, b.URL, secret, o.proxyEnv, os.Stderr)
			if err != nil {
				t.stop()
				return nil, fmt.Errorf("-via-proxy: %w", err)
			}
			t.close = append(t.close, p.stop)
			fmt.Printf("[%s] -via-proxy: every request through queen-proxy %s (pid %d) to %s\n", label, p.URL, p.PID(), b.URL)
			t.rep.Proxy, urls, auth = p.URL, []string{p.URL}, "Bearer "+p.Key
			r.cpu.proxyPID = p.PID()
		}
		if o.keep {
			t.close = append(t.close, func() {
				fmt.Printf("-keep: [%s] broker %s, postgres %s; interrupt to stop\n", label, b.URL, b.PGURL)
				<-ctx.Done()
			})
		}
	}
	if len(urls) > 1 {
		t.rep.Brokers = urls
	}
	r.cpu.brokerPIDs = brokerPIDs
	r.rss = newRSSSampler(brokerPIDs)
	sctx, cancel := context.WithCancel(ctx)
	t.close = append(t.close, cancel)
	go r.rss.run(sctx, 50*time.Millisecond)
	r.prod, r.cons = newClient(urls, o.conns), newClient(urls, o.conns)
	r.prod.auth, r.cons.auth = auth, auth
	t.close = append(t.close, r.prod.close, r.cons.close)
	if pgURL != "" {
		bl, err := newBaseliner(ctx, pgURL, o.producers)
		if err != nil {
			t.stop()
			return nil, fmt.Errorf("baseline: %w", err)
		}
		t.close = append(t.close, func() { bl.close(context.WithoutCancel(ctx)) })
		t.rep.PGSettings = bl.settings(ctx)
		r.db = bl
		if o.baseline {
			r.baseline = bl
		}
		if o.pgStats {
			r.pgStats = bl.enableStatements(ctx)
		}
	}
	t.runner = r
	printHeader(os.Stdout, t.rep, o, brokerPIDs)
	return t, nil
}

// brokerBuild names the build a local broker runs: the checkout's commit when the bench builds it, else
// the binary's path and the revision stamped into it, if any (a -compare-bin build is usually another
// commit than the checkout's, and a remote broker's build is unknown, so it gets no label).
func brokerBuild(repo, bin string) string {
	if bin == "" {
		return gitCommit(repo)
	}
	label := "binary " + bin
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return label
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return label
	}
	return label + " (" + rev[:min(len(rev), 7)] + dirty + ")"
}

func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func run(ctx context.Context, o options) (int, error) {
	started := time.Now().UTC()
	main, err := openTarget(ctx, o, "queen", o.url, o.pgURL, o.brokerPID, started)
	if err != nil {
		return 1, err
	}
	defer main.stop()
	if o.explain {
		if main.runner.db == nil {
			return 2, fmt.Errorf("-explain-pop needs the broker's database (-pg-url with -url)")
		}
		if err := explainPop(ctx, o, main.runner.db.url, os.Stdout); err != nil {
			return 1, err
		}
		return 0, nil
	}
	if o.pushSQL {
		if main.runner.db == nil {
			return 2, fmt.Errorf("-push-sql needs the broker's database (-pg-url with -url)")
		}
		if err := pushSQL(ctx, o, main.runner.db.url, main.runner.cpu.postgresPID, os.Stdout); err != nil {
			return 1, err
		}
		return 0, nil
	}
	targets := []*target{main}
	if o.compareURL != "" {
		url := o.compareURL
		if url == "local" {
			url = ""
		}
		cmp, err := openTarget(ctx, o, "compare", url, o.comparePGURL, o.comparePID, started)
		if err != nil {
			return 1, fmt.Errorf("compare: %w", err)
		}
		defer cmp.stop()
		targets = append(targets, cmp)
		main.runner.peers, cmp.runner.peers = []*runner{cmp.runner}, []*runner{main.runner}
	}
	if o.pprofDir != "" {
		if err := os.MkdirAll(o.pprofDir, 0o755); err != nil {
			return 1, err
		}
	}

	for _, name := range strings.Split(o.scenarios, ",") {
		name = strings.TrimSpace(name)
		sc, err := lookupScenario(name)
		if err != nil {
			return 2, err
		}
		var perTarget [][]*Result
		for _, t := range targets {
			if len(targets) > 1 {
				fmt.Printf("\n######## %s on %s (%s)\n", name, t.rep.Target, t.rep.Broker)
			}
			rs, err := sc.run(ctx, t.runner)
			for _, res := range rs {
				printResult(os.Stdout, res)
				res.Target = t.rep.Target
				t.rep.Results = append(t.rep.Results, res)
				if o.jsonOut != "" {
					if werr := appendJSONLine(o.jsonOut, t.rep, res); werr != nil {
						return 1, werr
					}
				}
			}
			perTarget = append(perTarget, rs)
			if err != nil {
				return 1, fmt.Errorf("%s on %s: %w", name, t.rep.Target, err)
			}
			if ctx.Err() != nil {
				return 1, ctx.Err()
			}
		}
		if len(perTarget) == 2 {
			printComparison(os.Stdout, perTarget[0], perTarget[1], o.compareViaProxy)
		}
	}
	verified := true
	for _, t := range targets {
		printSummary(os.Stdout, t.rep)
		printTargets(os.Stdout, t.rep.Results)
		for _, res := range t.rep.Results {
			if res.Failed() {
				verified = false
			}
		}
	}
	if o.jsonOut != "" {
		fmt.Printf("results appended to %s (one JSON line per result)\n", o.jsonOut)
	}
	if !verified {
		fmt.Println("VERIFICATION FAILED: some queued message was not consumed exactly once")
		return 1, nil
	}
	return 0, nil
}

// jsonLine is one line of the -json file: a result with the run it belongs to.
type jsonLine struct {
	Report
	*Result
}

func appendJSONLine(path string, rep Report, res *Result) error {
	b, err := json.Marshal(jsonLine{rep, res})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
