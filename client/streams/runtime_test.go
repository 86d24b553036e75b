package streams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/client/streams"
	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// base is an epoch-ms instant aligned to every window size used below.
const base = int64(1_700_000_040_000) // a whole minute

type env struct {
	t   *testing.T
	url string
	db  string
	c   *client.Client
}

// TestRuntime runs the runtime's tests against one real broker (each uses its own queues and query
// ids): a broker per test would cost a database per test for nothing.
func TestRuntime(t *testing.T) {
	rb := testenv.StartBroker(t, nil)
	c, err := client.New(client.Config{URLs: []string{rb.URL}})
	require.NoError(t, err)
	for name, fn := range map[string]func(*env){
		"StatelessOperators":      testStatelessOperators,
		"WindowKinds":             testWindowKinds,
		"Lateness":                testLateness,
		"ProcessingTimeIdleFlush": testProcessingTimeIdleFlush,
		"Gate":                    testGate,
		"RegistrationMismatch":    testRegistrationMismatch,
		"CrashRecovery":           testCrashRecovery,
		"TwoRunners":              testTwoRunners,
		"Stress":                  testStress,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(&env{t: t, url: rb.URL, db: rb.DatabaseURL, c: c})
		})
	}
}

func (e *env) sub(name string, fn func(*env)) {
	e.t.Run(name, func(t *testing.T) {
		t.Parallel()
		fn(&env{t: t, url: e.url, db: e.db, c: e.c})
	})
}

func (e *env) push(queue, partition string, vals ...any) {
	e.t.Helper()
	res, err := e.c.Queue(queue).Partition(partition).Push(e.t.Context(), client.Payloads(vals...)...)
	require.NoError(e.t, err)
	for _, r := range res {
		require.Equal(e.t, client.PushQueued, r.Status)
	}
}

func (e *env) leaseTime(queue string, seconds int) {
	e.t.Helper()
	_, err := e.c.Queue(queue).Config(client.QueueOptions{LeaseTime: client.Int(seconds)}).Create(e.t.Context())
	require.NoError(e.t, err)
}

// tester is *testing.T or, in the condition of require.EventuallyWithT (which runs off the test
// goroutine), *assert.CollectT: what the helpers that also serve in such a condition assert on.
type tester interface {
	require.TestingT
	Helper()
}

// drain reads n messages of queue (as consumer group "check") or fails after the timeout.
func (e *env) drain(queue string, n int, timeout time.Duration) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		out = append(out, e.popCheck(c, queue, 200*time.Millisecond)...)
		assert.GreaterOrEqual(c, len(out), n, "sink messages: %v", out)
	}, timeout, 10*time.Millisecond, "fewer than %d sink messages within %s", n, timeout)
	return out
}

// popCheck pops what queue holds (as consumer group "check", long-polling up to wait), asserting on
// t, and returns the payloads with their partition as "_partition".
func (e *env) popCheck(t tester, queue string, wait time.Duration) []map[string]any {
	t.Helper()
	msgs, err := e.c.Queue(queue).Group("check").Pop(e.t.Context(), client.PopOptions{Batch: 100, Partitions: 10, AutoAck: true,
		Wait: true, Timeout: wait})
	require.NoError(t, err)
	out := make([]map[string]any, 0, len(msgs))
	for _, m := range msgs {
		var v map[string]any
		require.NoError(t, json.Unmarshal(m.Data, &v))
		v["_partition"] = m.Partition
		out = append(out, v)
	}
	return out
}

// quiet checks that queue receives nothing more for a moment (nothing emitted twice).
func (e *env) quiet(queue string) {
	e.t.Helper()
	msgs, err := e.c.Queue(queue).Group("check").Pop(e.t.Context(), client.PopOptions{Batch: 100, Partitions: 10, AutoAck: true,
		Wait: true, Timeout: 700 * time.Millisecond})
	require.NoError(e.t, err)
	require.Empty(e.t, msgs, "unexpected extra sink messages")
}

func (e *env) start(s *streams.Stream, id string, mod ...func(*streams.RunOptions)) *streams.Runner {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// The runner's errors go to the test log, so that a subtest that times out waiting for its sink
	// says what the runner met meanwhile (a mod may replace this).
	t := e.t
	o := streams.RunOptions{QueryID: id, URL: e.url, MaxWaitMillis: 200, BatchSize: 50, Client: e.c,
		OnError: func(err error) { t.Logf("runner %s: %v", id, err) }}
	for _, m := range mod {
		m(&o)
	}
	r, err := s.Start(ctx, o)
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		cancel()
		require.NoError(e.t, r.Wait())
	})
	return r
}

func field(v any, k string) any { return v.(map[string]any)[k] }

func evTime(v any) any { return field(v, "ts") }

func byKey(v any, _ streams.Context) (string, error) { return field(v, "k").(string), nil }

// windowed turns an emitted accumulator into {key, start (relative to base, s), end, acc}.
func windowed(v any, c streams.Context) (any, error) {
	return map[string]any{"key": c.Key, "start": (c.WindowStart - base) / 1000, "end": (c.WindowEnd - base) / 1000, "acc": v}, nil
}

func ev(k string, offsetMs int64, v float64) map[string]any {
	return map[string]any{"k": k, "ts": base + offsetMs, "v": v}
}

func sumV(acc, v any) (any, error) { return acc.(float64) + field(v, "v").(float64), nil }

// summary renders windows as "key@start-end=acc" sorted, for exact comparisons.
func summary(ms []map[string]any) []string {
	var out []string
	for _, m := range ms {
		acc, _ := json.Marshal(m["acc"])
		out = append(out, fmt.Sprintf("%v@%v-%v=%s", m["key"], m["start"], m["end"], acc))
	}
	sort.Strings(out)
	return out
}

// testStatelessOperators: map, filter, flatMap and keyBy feed a sink and a foreach; the source is
// acked (nothing is processed twice) and values that are not objects are wrapped as {"value": v}.
func testStatelessOperators(e *env) {
	t := e.t
	for i := range 6 {
		e.push("st-src", fmt.Sprint("p", i%2), map[string]any{"n": float64(i)})
	}
	var mu sync.Mutex
	var seen []string
	s := streams.From("st-src").
		Map(func(v any, _ streams.Context) (any, error) { return field(v, "n").(float64) * 10, nil }).
		Filter(func(v any, _ streams.Context) (bool, error) { return int(v.(float64))%20 == 0, nil }).
		FlatMap(func(v any, _ streams.Context) ([]any, error) { return []any{v, v.(float64) + 1}, nil }).
		KeyBy(func(v any, _ streams.Context) (string, error) { return fmt.Sprint(v), nil }).
		Map(func(v any, c streams.Context) (any, error) {
			mu.Lock()
			seen = append(seen, c.Key)
			mu.Unlock()
			return v, nil
		}).
		To("st-sink", streams.SinkPartitionFunc(func(v any) string { return fmt.Sprint("out-", v) }))
	r := e.start(s, "st")
	got := e.drain("st-sink", 6, 15*time.Second)
	var vals []string
	for _, g := range got {
		vals = append(vals, fmt.Sprintf("%v/%v", g["value"], g["_partition"]))
	}
	sort.Strings(vals)
	require.Equal(t, []string{"0/out-0", "1/out-1", "20/out-20", "21/out-21", "40/out-40", "41/out-41"}, vals)
	e.quiet("st-sink")
	require.EqualValues(t, 6, r.Metrics().Messages)
	mu.Lock()
	require.ElementsMatch(t, []string{"0", "1", "20", "21", "40", "41"}, seen)
	mu.Unlock()

	// Foreach sees every emit, with its context.
	var count atomic.Int64
	e.push("fe-src", "only", map[string]any{"n": 1.0}, map[string]any{"n": 2.0})
	fe := streams.From("fe-src").Foreach(func(v any, c streams.Context) error {
		if c.Partition == "only" && c.PartitionID != "" {
			count.Add(int64(field(v, "n").(float64)))
		}
		return nil
	})
	e.start(fe, "fe")
	require.Eventually(t, func() bool { return count.Load() == 3 }, 10*time.Second, 20*time.Millisecond)
}

// testWindowKinds: every window kind, on event time so that the expected windows are exact.
func testWindowKinds(e *env) {
	cases := []struct {
		name   string
		stream func(src string) *streams.Stream
		events []map[string]any
		want   []string
	}{
		{"tumbling", func(src string) *streams.Stream {
			return streams.From(src).KeyBy(byKey).WindowTumbling(10, streams.WithEventTime(evTime)).
				Aggregate(map[string]streams.Extractor{"count": nil, "sum": func(v any) any { return field(v, "v") }}, "count", "sum")
		}, []map[string]any{ev("a", 1000, 1), ev("b", 2000, 2), ev("a", 9000, 3), ev("a", 11000, 4), ev("z", 60000, 0)},
			[]string{`a@0-10={"count":2,"sum":4}`, `a@10-20={"count":1,"sum":4}`, `b@0-10={"count":1,"sum":2}`}},
		{"sliding", func(src string) *streams.Stream {
			return streams.From(src).KeyBy(byKey).WindowSliding(20, 10, streams.WithEventTime(evTime)).Reduce(sumV, 0.0)
		}, []map[string]any{ev("a", 5000, 1), ev("a", 15000, 2), ev("z", 60000, 0)},
			[]string{`a@-10-10=1`, `a@0-20=3`, `a@10-30=2`}},
		{"session", func(src string) *streams.Stream {
			return streams.From(src).KeyBy(byKey).WindowSession(5, streams.WithEventTime(evTime)).Reduce(sumV, 0.0)
		}, []map[string]any{ev("a", 0, 1), ev("a", 3000, 2), ev("a", 7000, 4), ev("a", 20000, 8), ev("a", 22000, 16), ev("z", 60000, 0)},
			[]string{`a@0-12=7`, `a@20-27=24`}},
		{"cron", func(src string) *streams.Stream {
			return streams.From(src).KeyBy(byKey).WindowCron("minute", streams.WithEventTime(evTime)).Reduce(sumV, 0.0)
		}, []map[string]any{ev("a", 1000, 1), ev("a", 59000, 2), ev("a", 61000, 4), ev("z", 180000, 0)},
			[]string{`a@0-60=3`, `a@60-120=4`}},
	}
	for _, c := range cases {
		e.sub(c.name, func(e *env) {
			t := e.t
			src, sink := "win-"+c.name, "win-"+c.name+"-out"
			vals := make([]any, len(c.events))
			for i, ev := range c.events {
				vals[i] = ev
			}
			e.push(src, "p", vals...)
			e.start(c.stream(src).Map(windowed).To(sink), "win-"+c.name)
			require.Equal(t, c.want, summary(e.drain(sink, len(c.want), 15*time.Second)))
			e.quiet(sink)
		})
	}
}

// testLateness: the watermark trails the newest event by the allowed lateness; an event older than
// it is dropped (and counted) or, with onLate include, folded in.
func testLateness(e *env) {
	for _, policy := range []string{"drop", "include"} {
		e.sub(policy, func(e *env) {
			t := e.t
			src, sink := "late-"+policy, "late-"+policy+"-out"
			s := streams.From(src).KeyBy(byKey).
				WindowTumbling(10, streams.WithEventTime(evTime), streams.WithAllowedLateness(5), streams.WithOnLate(policy)).
				Reduce(sumV, 0.0).Map(windowed).To(sink)
			r := e.start(s, "late-"+policy)
			// One event per cycle, so that each sees the watermark of the one before.
			for i, x := range []map[string]any{ev("a", 12000, 1), ev("a", 8000, 2), ev("a", 1000, 4), ev("z", 60000, 0)} {
				e.push(src, "p", x)
				require.Eventually(t, func() bool { return r.Metrics().Messages == int64(i+1) }, 10*time.Second, 10*time.Millisecond)
			}
			want := []string{`a@0-10=2`, `a@10-20=1`}
			if policy == "include" {
				want = []string{`a@0-10=6`, `a@10-20=1`}
			}
			require.Equal(t, want, summary(e.drain(sink, 2, 10*time.Second)))
			late := map[string]int64{"drop": 1, "include": 1}[policy]
			require.Equal(t, late, r.Metrics().LateEvents)
		})
	}
}

// testProcessingTimeIdleFlush: on processing time a quiet partition's windows are closed by the idle
// flush; every message is counted exactly once.
func testProcessingTimeIdleFlush(e *env) {
	t := e.t
	for i := range 30 {
		e.push("pt-src", fmt.Sprint("p", i%3), map[string]any{"v": 1.0})
	}
	s := streams.From("pt-src").WindowTumbling(1, streams.WithIdleFlushMs(200)).
		Aggregate(map[string]streams.Extractor{"count": nil}).To("pt-out")
	r := e.start(s, "pt")
	total := 0.0
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, m := range e.popCheck(c, "pt-out", 200*time.Millisecond) {
			total += m["count"].(float64)
		}
		assert.GreaterOrEqual(c, total, 30.0, "counted")
	}, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, 30.0, total)
	e.quiet("pt-out")
	require.Positive(t, r.Metrics().FlushCycles)
}

// testGate: a token bucket admits a prefix per cycle; the denied tail stays leased and comes back in
// order after the lease expires, so every message passes exactly once, in order.
func testGate(e *env) {
	t := e.t
	e.leaseTime("gate-src", 1)
	for i := range 7 {
		e.push("gate-src", "p", map[string]any{"i": float64(i)})
	}
	s := streams.From("gate-src").Gate(streams.TokenBucketGate(3, 2, nil)).To("gate-out", streams.SinkPartition("out"))
	r := e.start(s, "gate")
	got := e.drain("gate-out", 7, 20*time.Second)
	for i, g := range got {
		require.Equal(t, float64(i), g["i"])
		require.Equal(t, "out", g["_partition"])
	}
	e.quiet("gate-out")
	require.Positive(t, r.Metrics().GateDenials, "the bucket ran dry at least once")

	// The bucket lives in the public state table under the envelope key (the partition id).
	conn, err := pgx.Connect(t.Context(), e.db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var allowed float64
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT (s.value->>'allowedTotal')::float8 FROM queen_streams.state s
		JOIN queen_streams.queries q ON q.id = s.query_id WHERE q.name = 'gate'`).Scan(&allowed))
	require.Equal(t, 7.0, allowed)
}

// testRegistrationMismatch: a changed chain under the same query id is refused until Reset.
func testRegistrationMismatch(e *env) {
	t := e.t
	ctx := t.Context()
	o := streams.RunOptions{QueryID: "mm", URL: e.url, Client: e.c, MaxWaitMillis: 100}
	r, err := streams.From("mm-src").WindowTumbling(60).Reduce(sumV, 0.0).Start(ctx, o)
	require.NoError(t, err)
	first := r.QueryID()
	_, err = streams.From("mm-src").WindowTumbling(30).Reduce(sumV, 0.0).Start(ctx, o)
	require.True(t, streams.IsConfigMismatch(err), "%v", err)
	o.Reset = true
	r2, err := streams.From("mm-src").WindowTumbling(30).Reduce(sumV, 0.0).Start(ctx, o)
	require.NoError(t, err)
	require.Equal(t, first, r2.QueryID())
}

// cycleFaults is a proxy in front of the broker that answers 500 to chosen cycle calls after the
// broker committed them: the client sees an infrastructure error for a cycle that did happen.
type cycleFaults struct {
	n, failEvery int64
	failed       atomic.Int64
	duplicates   atomic.Int64 // answers saying the cycle had committed before
}

func (f *cycleFaults) server(t *testing.T, target string) *httptest.Server {
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/streams/v1/cycle" {
			rp.ServeHTTP(w, r)
			return
		}
		n := atomic.AddInt64(&f.n, 1)
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		body, _ := io.ReadAll(rec.Result().Body)
		if strings.Contains(string(body), `"duplicate":true`) {
			f.duplicates.Add(1)
		}
		if f.failEvery > 0 && n%f.failEvery == 0 && strings.Contains(string(body), `"success":true`) {
			f.failed.Add(1)
			http.Error(w, `{"error":"upstream lost"}`, http.StatusInternalServerError)
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testCrashRecovery kills a runner between the steps of a cycle (after it popped, reduced and ran
// its foreach, before the commit), starts a new one on the same query, and loses a committed cycle's
// answer behind a 500 on the way: the aggregates over every window add up to exactly what was sent,
// with no window emitted twice.
func testCrashRecovery(e *env) {
	t := e.t
	e.leaseTime("cr-src", 1)
	const perPartition, parts = 60, 4
	wantSum, wantCount := 0.0, 0.0
	for p := range parts {
		vals := make([]any, 0, perPartition+1)
		for i := range perPartition {
			v := float64(p*1000 + i)
			vals = append(vals, map[string]any{"ts": base + int64(i)*250, "v": v})
			wantSum += v
			wantCount++
		}
		// Far ahead: moves the watermark so every window above closes; itself stays open.
		vals = append(vals, map[string]any{"ts": base + 3_600_000, "v": 0.0})
		e.push("cr-src", fmt.Sprint("p", p), vals...)
	}
	// The hook is a map: functions are not part of the config hash, so both runners run "the same"
	// query, as a restarted process would.
	chain := func(hook streams.MapFunc) *streams.Stream {
		return streams.From("cr-src").WindowTumbling(2, streams.WithEventTime(evTime)).
			Aggregate(map[string]streams.Extractor{"count": nil, "sum": func(v any) any { return field(v, "v") }}, "count", "sum").
			Map(windowed).Map(hook).To("cr-out")
	}
	opts := streams.RunOptions{QueryID: "cr", URL: e.url, Client: e.c, BatchSize: 10, MaxPartitions: 2, MaxWaitMillis: 100}

	// Runner 1 dies after computing its 12th window, before that cycle's commit.
	ctx1, crash := context.WithCancel(context.Background())
	var emits atomic.Int64
	r1, err := chain(func(v any, _ streams.Context) (any, error) {
		if emits.Add(1) == 12 {
			crash()
		}
		return v, nil
	}).Start(ctx1, opts)
	require.NoError(t, err)
	require.NoError(t, r1.Wait())
	require.GreaterOrEqual(t, emits.Load(), int64(12))
	committed := r1.Metrics().Cycles

	// Runner 2 resumes from the committed state once the dead runner's lease expires. Every third
	// cycle answer it gets is a 500 although the broker committed: its retry (the same cycle_id) must
	// be answered as committed and apply nothing.
	faults := &cycleFaults{failEvery: 3}
	proxy := faults.server(t, e.url)
	opts.URL = proxy.URL
	e.start(chain(func(v any, _ streams.Context) (any, error) { return v, nil }), "cr", func(o *streams.RunOptions) { *o = opts })

	const windows = parts * 8 // 60 events 250 ms apart: 15 s, eight 2-second windows per partition
	got := e.drain("cr-out", windows, 30*time.Second)
	e.quiet("cr-out")
	seen := map[string]bool{}
	sum, count := 0.0, 0.0
	for _, g := range got {
		id := fmt.Sprint(g["_partition"], "@", g["start"])
		require.False(t, seen[id], "window %s emitted twice", id)
		seen[id] = true
		acc := g["acc"].(map[string]any)
		sum += acc["sum"].(float64)
		count += acc["count"].(float64)
	}
	require.Equal(t, wantCount, count, "no message lost or counted twice")
	require.Equal(t, wantSum, sum)
	require.Positive(t, faults.failed.Load(), "some committed cycles were answered 500")
	require.Positive(t, faults.duplicates.Load(), "their retries were answered as committed before")
	t.Logf("runner 1 committed %d cycles before the crash; %d cycle answers replaced by 500", committed, faults.failed.Load())
}

// testTwoRunners: two runners of one query share the source's partitions, and each one's idle flush
// visits partitions the other is processing; optimistic state checks keep every count exact.
func testTwoRunners(e *env) {
	t := e.t
	const n = 400
	e.leaseTime("two-src", 2) // a cycle that still lost its race after the retries redelivers soon
	for i := range n {
		e.push("two-src", fmt.Sprint("p", i%8), map[string]any{"k": fmt.Sprint("k", i%5), "v": 1.0})
	}
	s := streams.From("two-src").KeyBy(byKey).WindowTumbling(1, streams.WithIdleFlushMs(100)).
		Aggregate(map[string]streams.Extractor{"count": nil}).To("two-out")
	for range 2 {
		e.start(s, "two", func(o *streams.RunOptions) { o.BatchSize, o.MaxPartitions = 20, 2 })
	}
	total := 0.0
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, m := range e.popCheck(c, "two-out", 200*time.Millisecond) {
			total += m["count"].(float64)
		}
		assert.GreaterOrEqual(c, total, float64(n), "counted")
	}, 20*time.Second, 10*time.Millisecond)
	e.quiet("two-out")
	require.Equal(t, float64(n), total)
}
