package streams

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/client"
)

// RunOptions configure a runner. QueryID and URL are required.
type RunOptions struct {
	// QueryID names the query: its registration, its state and (by default) its consumer group
	// "streams.<QueryID>".
	QueryID string
	// URL is the broker base URL, e.g. "http://localhost:6632".
	URL string
	// BearerToken, when set, is sent on every request.
	BearerToken string
	// BatchSize is the pop batch (default 200).
	BatchSize int
	// MaxPartitions is how many partitions one pop may claim (default 4).
	MaxPartitions int
	// MaxWaitMillis is the long-poll timeout of a pop (default 1000).
	MaxWaitMillis int
	// SubscriptionMode and SubscriptionFrom ("now" or an RFC 3339 time) are passed to the pop.
	SubscriptionMode, SubscriptionFrom string
	// Reset wipes the query's state when its operator chain changed (otherwise registration fails
	// with a config-hash mismatch, see [IsConfigMismatch]).
	Reset bool
	// ConsumerGroup overrides "streams.<QueryID>".
	ConsumerGroup string
	// RetryAttempts is how many times a streams call is retried (default 3; negative: none).
	RetryAttempts int
	// Logger receives cycle errors and warnings (default: discarded).
	Logger *slog.Logger
	// OnError is called with every cycle or pop error; the runner carries on.
	OnError func(err error)
	// Client pops the source (default: a client for URL and BearerToken).
	Client *client.Client

	// legacyWire sends cycles as the original runtimes do, without expect and cycle_id: the tests
	// use it to check that the broker alone keeps such clients exact.
	legacyWire bool
}

// CycleError is a cycle the broker rolled back (HTTP 200 with success:false). Its messages stay
// leased and are redelivered when the lease expires.
type CycleError struct{ Msg string }

func (e *CycleError) Error() string { return "streams: cycle failed: " + e.Msg }

// Metrics are a runner's counters.
type Metrics struct {
	Cycles, FlushCycles, Messages, PushItems, StateOps, LateEvents, Errors, GateAllows, GateDenials int64
	LastCycleAt, LastFlushAt                                                                        time.Time
	LastError                                                                                       string
}

type metrics struct {
	cycles, flushCycles, messages, pushItems, stateOps, late, errs, allows, denials atomic.Int64

	mu          sync.Mutex // protects the rest
	lastCycle   time.Time
	lastFlush   time.Time
	lastErr     string
	latencies   []time.Duration
	keepLatency bool
}

// Runner is a started query; see [Stream.Start].
type Runner struct {
	p       *plan
	s       *Stream
	o       RunOptions
	hc      *httpClient
	queue   *client.Queue
	queryID string // the broker's id of the query
	group   string
	log     *slog.Logger
	m       metrics
	now     func() time.Time

	touched map[string]touchedPartition // partition id → name, last seen: idle-flush candidates
	wm      map[string]int64            // partition id → last known watermark (event time)
	flushed time.Time

	done chan struct{}
	err  error
}

type touchedPartition struct {
	name string
	at   time.Time
}

// Run registers the query and processes the source until ctx ends (then it returns nil) or a
// registration error occurs.
func (s *Stream) Run(ctx context.Context, o RunOptions) error {
	r, err := s.Start(ctx, o)
	if err != nil {
		return err
	}
	return r.Wait()
}

// Start compiles the chain, registers the query (synchronously, so a config-hash mismatch is
// returned here) and runs the loop in a goroutine until ctx ends.
func (s *Stream) Start(ctx context.Context, o RunOptions) (*Runner, error) {
	p, err := s.compile()
	if err != nil {
		return nil, err
	}
	if o.QueryID == "" || o.URL == "" {
		return nil, errors.New("streams: RunOptions.QueryID and URL are required")
	}
	o.BatchSize = cmp.Or(o.BatchSize, 200)
	o.MaxPartitions = cmp.Or(o.MaxPartitions, 4)
	o.MaxWaitMillis = cmp.Or(o.MaxWaitMillis, 1000)
	if o.RetryAttempts == 0 {
		o.RetryAttempts = 3
	}
	r := &Runner{p: p, s: s, o: o, hc: newHTTPClient(o.URL, o.BearerToken, o.RetryAttempts),
		group: cmp.Or(o.ConsumerGroup, "streams."+o.QueryID), log: o.Logger, now: time.Now,
		touched: map[string]touchedPartition{}, wm: map[string]int64{}, done: make(chan struct{})}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := o.Client
	if c == nil {
		if c, err = client.New(client.Config{URLs: []string{o.URL}, Token: o.BearerToken}); err != nil {
			return nil, err
		}
	}
	r.queue = c.Queue(s.source).Group(r.group)
	if o.SubscriptionMode != "" {
		r.queue = r.queue.SubscriptionMode(o.SubscriptionMode)
	}
	switch o.SubscriptionFrom {
	case "":
	case "now":
		r.queue = r.queue.SubscriptionFromNow()
	default:
		t, err := time.Parse(time.RFC3339Nano, o.SubscriptionFrom)
		if err != nil {
			return nil, fmt.Errorf("streams: SubscriptionFrom must be \"now\" or an RFC 3339 time: %w", err)
		}
		r.queue = r.queue.SubscriptionFrom(t)
	}
	if p.keyed {
		r.log.Warn("streams: KeyBy with a key other than the partition: state is kept per (source partition, key), so one key seen on several partitions has several independent states",
			"query", o.QueryID)
	}
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	go func() {
		defer close(r.done)
		r.err = r.loop(ctx)
	}()
	return r, nil
}

// Wait blocks until the runner stops and returns why (nil when its context ended).
func (r *Runner) Wait() error {
	<-r.done
	return r.err
}

// QueryID is the broker's id of the registered query.
func (r *Runner) QueryID() string { return r.queryID }

// Metrics returns a snapshot of the counters.
func (r *Runner) Metrics() Metrics {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return Metrics{Cycles: r.m.cycles.Load(), FlushCycles: r.m.flushCycles.Load(), Messages: r.m.messages.Load(),
		PushItems: r.m.pushItems.Load(), StateOps: r.m.stateOps.Load(), LateEvents: r.m.late.Load(), Errors: r.m.errs.Load(),
		GateAllows: r.m.allows.Load(), GateDenials: r.m.denials.Load(), LastCycleAt: r.m.lastCycle, LastFlushAt: r.m.lastFlush,
		LastError: r.m.lastErr}
}

// CycleLatencies returns (and forgets) the duration of every commit since the last call; only
// recorded once it was called, for benchmarks.
func (r *Runner) CycleLatencies() []time.Duration {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	out := r.m.latencies
	r.m.latencies, r.m.keepLatency = nil, true
	return out
}

func (r *Runner) register(ctx context.Context) error {
	body := map[string]any{"name": r.o.QueryID, "source_queue": r.s.source, "config_hash": r.s.ConfigHash(), "reset": r.o.Reset}
	if r.p.sink != nil {
		body["sink_queue"] = r.p.sink.queue
	}
	var res struct {
		Success bool   `json:"success"`
		QueryID string `json:"query_id"`
		Error   string `json:"error"`
	}
	if err := r.hc.post(ctx, "/streams/v1/queries", body, &res); err != nil {
		if IsConfigMismatch(err) {
			return fmt.Errorf("streams: query %q was registered with another operator chain; pass Reset to wipe its state or use a new QueryID: %w", r.o.QueryID, err)
		}
		return err
	}
	if !res.Success || res.QueryID == "" {
		return fmt.Errorf("streams: register %q failed: %s", r.o.QueryID, res.Error)
	}
	r.queryID = res.QueryID
	return nil
}

func (r *Runner) report(err error) {
	r.m.errs.Add(1)
	r.m.mu.Lock()
	r.m.lastErr = err.Error()
	r.m.mu.Unlock()
	r.log.Error("streams: cycle error", "query", r.o.QueryID, "error", err)
	if r.o.OnError != nil {
		r.o.OnError(err)
	}
}

func (r *Runner) loop(ctx context.Context) error {
	r.flushed = r.now()
	for ctx.Err() == nil {
		msgs, err := r.queue.Pop(ctx, client.PopOptions{Batch: r.o.BatchSize, Partitions: r.o.MaxPartitions, Wait: true,
			Timeout: time.Duration(r.o.MaxWaitMillis) * time.Millisecond})
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			r.report(fmt.Errorf("streams: pop: %w", err))
			_ = sleepCtx(ctx, 500*time.Millisecond)
		case len(msgs) == 0:
			r.idleFlush(ctx)
			_ = sleepCtx(ctx, 100*time.Millisecond)
			continue
		default:
			for _, group := range byPartition(msgs) {
				if err := r.processPartition(ctx, group); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					r.report(err)
				}
			}
		}
		r.idleFlush(ctx)
	}
	return nil
}

// byPartition groups messages by source partition, each group in (createdAt, id) order.
func byPartition(msgs []client.Message) [][]client.Message {
	idx := map[string]int{}
	var out [][]client.Message
	for _, m := range msgs {
		i, ok := idx[m.PartitionID]
		if !ok {
			i = len(out)
			idx[m.PartitionID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	for _, g := range out {
		sort.SliceStable(g, func(a, b int) bool {
			if !g[a].CreatedAt.Equal(g[b].CreatedAt) {
				return g[a].CreatedAt.Before(g[b].CreatedAt)
			}
			return g[a].ID < g[b].ID
		})
	}
	return out
}

// envelope is one value in flight through the chain.
type envelope struct {
	msg   int // index of the source message in its partition group
	key   string
	value any
	ctx   Context
}

type stateOp struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Value any    `json:"value,omitempty"`
	// Expect is the optimistic check the broker applies before writing: null = the key did not
	// exist when read, a string = its updated_at when read. Two runners (or a runner and another's
	// idle flush) that read the same row cannot both commit a change derived from it.
	Expect json.RawMessage `json:"expect,omitempty"`
}

// expectOf is the expectation for a key read as version ("" = not stored).
func expectOf(version string) json.RawMessage {
	if version == "" {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(version)
	return b
}

// isConflict reports whether a cycle was refused because state changed since it was read.
func isConflict(err error) bool {
	var ce *CycleError
	return errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "state conflict")
}

// isLeased reports whether an idle flush was refused because a runner holds the partition: that
// runner's cycle closes the windows, or the next flush does.
func isLeased(err error) bool {
	var ce *CycleError
	return errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "source partition is leased")
}

type pushItem struct {
	Queue     string `json:"queue"`
	Partition string `json:"partition"`
	Payload   any    `json:"payload"`
}

type cycleAck struct {
	TransactionID string `json:"transactionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	Status        string `json:"status"`
	Count         int    `json:"count"`
}

// cycle is what one commit carries.
type cycle struct {
	partitionID string
	ops         []stateOp
	emits       []envelope
	ack         *cycleAck
	release     bool
	// wm is the partition's watermark once this cycle commits (event time; hasWM false: none).
	wm    int64
	hasWM bool
}

// processPartition runs one partition's messages through the chain and commits the cycle. A cycle
// refused because its state changed meanwhile (another runner's idle flush, typically) is computed
// again from fresh state: the lease is still ours.
func (r *Runner) processPartition(ctx context.Context, msgs []client.Message) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = r.processOnce(ctx, msgs); !isConflict(err) {
			return err
		}
	}
	return err
}

func (r *Runner) processOnce(ctx context.Context, msgs []client.Message) error {
	pid, pname := msgs[0].PartitionID, msgs[0].Partition
	r.touched[pid] = touchedPartition{name: pname, at: r.now()}
	envs := make([]envelope, 0, len(msgs))
	for i, m := range msgs {
		var v any
		if len(m.Data) > 0 {
			if err := json.Unmarshal(m.Data, &v); err != nil {
				return fmt.Errorf("streams: message %s: payload: %w", m.TransactionID, err)
			}
		}
		envs = append(envs, envelope{msg: i, key: pid, value: v, ctx: Context{Partition: pname, PartitionID: pid, Key: pid}})
	}
	envs, err := applyStateless(r.p.pre, envs)
	if err != nil {
		return err
	}
	last := msgs[len(msgs)-1]
	c := &cycle{partitionID: pid, release: true,
		ack: &cycleAck{TransactionID: last.TransactionID, LeaseID: last.LeaseID, Status: "completed", Count: len(msgs)}}
	switch {
	case r.p.gate != nil:
		commit, err := r.gatePath(ctx, msgs, envs, c)
		if err != nil || !commit {
			return err
		}
	case r.p.win != nil:
		if err := r.windowPath(ctx, msgs, envs, c); err != nil {
			return err
		}
	default:
		c.emits = envs
	}
	if err := r.commit(ctx, c, pname, false); err != nil {
		return err
	}
	if c.hasWM {
		// Only a committed watermark may drive the idle flush: one computed by a cycle that failed
		// would close windows that the cycle's events, redelivered, still belong to.
		r.wm[pid] = c.wm
	}
	r.m.messages.Add(int64(c.ack.Count)) // the acked prefix: a gate may leave a tail for later
	return nil
}

// applyStateless runs map/filter/flatMap/keyBy over the envelopes, in order.
func applyStateless(ops []operator, envs []envelope) ([]envelope, error) {
	for _, o := range ops {
		out := envs[:0:0]
		for _, e := range envs {
			switch o.kind {
			case kMap:
				v, err := o.mapFn(e.value, e.ctx)
				if err != nil {
					return nil, fmt.Errorf("streams: map: %w", err)
				}
				e.value = v
				out = append(out, e)
			case kFilter:
				ok, err := o.filter(e.value, e.ctx)
				if err != nil {
					return nil, fmt.Errorf("streams: filter: %w", err)
				}
				if ok {
					out = append(out, e)
				}
			case kFlatMap:
				vs, err := o.flat(e.value, e.ctx)
				if err != nil {
					return nil, fmt.Errorf("streams: flatMap: %w", err)
				}
				for _, v := range vs {
					n := e
					n.value = v
					out = append(out, n)
				}
			case kKeyBy:
				k, err := o.keyFn(e.value, e.ctx)
				if err != nil {
					return nil, fmt.Errorf("streams: keyBy: %w", err)
				}
				e.key, e.ctx.Key = k, k
				out = append(out, e)
			}
		}
		envs = out
	}
	return envs, nil
}

// commit runs the post operators and the terminal on the emits, then commits the cycle.
func (r *Runner) commit(ctx context.Context, c *cycle, pname string, flush bool) error {
	emits, err := applyStateless(r.p.post, c.emits)
	if err != nil {
		return err
	}
	var items []pushItem
	for _, e := range emits {
		if r.p.foreach != nil {
			if err := r.p.foreach(e.value, e.ctx); err != nil {
				return fmt.Errorf("streams: foreach: %w", err)
			}
		}
		if k := r.p.sink; k != nil {
			part := pname
			switch {
			case k.resolve != nil:
				part = k.resolve(e.value)
			case k.fixed != "":
				part = k.fixed
			}
			payload := e.value
			if _, isObj := payload.(map[string]any); !isObj {
				payload = map[string]any{"value": payload}
			}
			items = append(items, pushItem{Queue: k.queue, Partition: cmp.Or(part, "Default"), Payload: payload})
		}
	}
	if c.ack == nil && len(c.ops) == 0 && len(items) == 0 {
		return nil
	}
	body := map[string]any{"query_id": r.queryID, "partition_id": c.partitionID, "consumer_group": r.group,
		"release_lease": c.release, "state_ops": c.ops, "push_items": items}
	if !r.o.legacyWire {
		// One id per computed cycle, the same on every HTTP retry of it: a retry of an attempt that
		// committed (its answer lost) is answered duplicate and applies nothing.
		body["cycle_id"] = uuid.NewString()
	} else {
		for i := range c.ops {
			c.ops[i].Expect = nil
		}
	}
	if c.ops == nil {
		body["state_ops"] = []stateOp{}
	}
	if items == nil {
		body["push_items"] = []pushItem{}
	}
	if c.ack != nil {
		body["ack"] = c.ack
	}
	var res struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	start := time.Now()
	if err := r.hc.post(ctx, "/streams/v1/cycle", body, &res); err != nil {
		return err
	}
	if !res.Success {
		return &CycleError{Msg: res.Error}
	}
	took := time.Since(start)
	if flush {
		r.m.flushCycles.Add(1)
	} else {
		r.m.cycles.Add(1)
	}
	r.m.pushItems.Add(int64(len(items)))
	r.m.stateOps.Add(int64(len(c.ops)))
	r.m.mu.Lock()
	if flush {
		r.m.lastFlush = r.now()
	} else {
		r.m.lastCycle = r.now()
	}
	if r.m.keepLatency {
		r.m.latencies = append(r.m.latencies, took)
	}
	r.m.mu.Unlock()
	return nil
}

// stateRow is a row of /streams/v1/state/get.
type stateRow struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt string          `json:"updated_at"`
}

func (r *Runner) loadState(ctx context.Context, pid string, filter map[string]any) ([]stateRow, error) {
	body := map[string]any{"query_id": r.queryID, "partition_id": pid, "keys": []string{}}
	for k, v := range filter {
		body[k] = v
	}
	var res struct {
		Success bool       `json:"success"`
		Rows    []stateRow `json:"rows"`
		Error   string     `json:"error"`
	}
	if err := r.hc.post(ctx, "/streams/v1/state/get", body, &res); err != nil {
		return nil, err
	}
	if !res.Success {
		return nil, fmt.Errorf("streams: state get failed: %s", res.Error)
	}
	return res.Rows, nil
}

// gatePath evaluates the gate in order and fills c with the allowed prefix. It answers false when
// nothing may be committed (the first message was denied).
func (r *Runner) gatePath(ctx context.Context, msgs []client.Message, envs []envelope, c *cycle) (bool, error) {
	rows, err := r.loadState(ctx, c.partitionID, nil)
	if err != nil {
		return false, err
	}
	stored := map[string]json.RawMessage{}
	versions := map[string]string{}
	for _, row := range rows {
		stored[row.Key], versions[row.Key] = row.Value, row.UpdatedAt
	}
	states := map[string]map[string]any{}
	now := r.now().UnixMilli()
	denied := len(msgs) // index of the first message with a denied value
	touchedAt := map[string]int{}
	var allowed []envelope
	for _, e := range envs {
		st, ok := states[e.key]
		if !ok {
			st = map[string]any{}
			if raw, ok := stored[e.key]; ok {
				_ = json.Unmarshal(raw, &st)
				if st == nil {
					st = map[string]any{}
				}
			}
			states[e.key] = st
		}
		ok, err := r.p.gate(e.value, &GateContext{State: st, StreamTimeMs: now, PartitionID: e.ctx.PartitionID,
			Partition: e.ctx.Partition, Key: e.key})
		if err != nil {
			return false, fmt.Errorf("streams: gate: %w", err)
		}
		if !ok {
			r.m.denials.Add(1)
			denied = e.msg
			break
		}
		r.m.allows.Add(1)
		allowed = append(allowed, e)
		if _, seen := touchedAt[e.key]; !seen {
			touchedAt[e.key] = e.msg
		}
	}
	if denied == 0 {
		return false, nil
	}
	for _, e := range allowed {
		if e.msg < denied {
			c.emits = append(c.emits, e)
		}
	}
	keys := make([]string, 0, len(touchedAt))
	for k, at := range touchedAt {
		if at < denied {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.ops = append(c.ops, stateOp{Type: "upsert", Key: k, Value: states[k], Expect: expectOf(versions[k])})
	}
	if denied < len(msgs) {
		m := msgs[denied-1]
		c.ack = &cycleAck{TransactionID: m.TransactionID, LeaseID: m.LeaseID, Status: "completed", Count: denied}
		c.release = false
	}
	return true, nil
}

// The stored forms of window state.
type fixedRow struct {
	Acc         any   `json:"acc"`
	WindowStart int64 `json:"windowStart"`
	WindowEnd   int64 `json:"windowEnd"`
}

type sessionRow struct {
	Acc           any   `json:"acc"`
	SessionStart  int64 `json:"sessionStart"`
	LastEventTime int64 `json:"lastEventTime"`
}

const watermarkKey = "__wm__"

type openWindow struct {
	key        string // state key
	userKey    string
	acc        any
	start, end int64  // fixed: window bounds; session: start and last event time
	version    string // updated_at of its stored row; "" when not stored
	touched    bool
}

// windowPath folds the envelopes into their windows and closes what the clock passed.
func (r *Runner) windowPath(ctx context.Context, msgs []client.Message, envs []envelope, c *cycle) error {
	w := r.p.win
	rows, err := r.loadState(ctx, c.partitionID, nil)
	if err != nil {
		return err
	}
	tag := w.tag()
	open := map[string]*openWindow{}
	var wm int64
	hasWM, wmVersion := false, ""
	for _, row := range rows {
		if row.Key == watermarkKey {
			wmVersion = row.UpdatedAt
			var v struct {
				EventTimeMs *float64 `json:"eventTimeMs"`
			}
			if json.Unmarshal(row.Value, &v) == nil && v.EventTimeMs != nil {
				wm, hasWM = int64(*v.EventTimeMs), true
			}
			continue
		}
		if ow := parseRow(w, tag, row); ow != nil {
			open[row.Key] = ow
		}
	}
	var maxCreated int64
	for _, m := range msgs {
		maxCreated = max(maxCreated, m.CreatedAt.UnixMilli())
	}
	maxEvent, anyEvent := int64(0), false
	for _, e := range envs {
		t := msgs[e.msg].CreatedAt.UnixMilli()
		if w.eventTime != nil {
			if t, err = eventTimeMs(w.eventTime(e.value)); err != nil {
				r.report(fmt.Errorf("streams: message %s: %w", msgs[e.msg].TransactionID, err))
				continue
			}
			if hasWM && t < wm {
				r.m.late.Add(1)
				if w.onLate == "drop" {
					continue
				}
			}
			if !anyEvent || t > maxEvent {
				maxEvent, anyEvent = t, true
			}
		}
		if err := r.fold(w, tag, open, e, t, c); err != nil {
			return err
		}
	}
	clock, haveClock := maxCreated, true
	if w.eventTime != nil {
		if anyEvent && (!hasWM || maxEvent-w.latenessMs() > wm) {
			wm, hasWM = maxEvent-w.latenessMs(), true
			c.ops = append(c.ops, stateOp{Type: "upsert", Key: watermarkKey, Value: map[string]any{"eventTimeMs": wm}, Expect: expectOf(wmVersion)})
		}
		clock, haveClock = wm, hasWM
		c.wm, c.hasWM = wm, hasWM
	}
	r.closeWindows(w, open, clock, haveClock, c, true)
	return nil
}

func parseRow(w *window, tag string, row stateRow) *openWindow {
	if w.kind == session {
		user, ok := strings.CutPrefix(row.Key, tag+"\x1fopen\x1f")
		if !ok {
			return nil
		}
		var v sessionRow
		if json.Unmarshal(row.Value, &v) != nil {
			return nil
		}
		return &openWindow{key: row.Key, userKey: user, acc: v.Acc, start: v.SessionStart, end: v.LastEventTime, version: row.UpdatedAt}
	}
	rest, ok := strings.CutPrefix(row.Key, tag+"\x1f")
	if !ok {
		return nil
	}
	_, user, ok := strings.Cut(rest, "\x1f")
	if !ok {
		return nil
	}
	var v fixedRow
	if json.Unmarshal(row.Value, &v) != nil {
		return nil
	}
	return &openWindow{key: row.Key, userKey: user, acc: v.Acc, start: v.WindowStart, end: v.WindowEnd, version: row.UpdatedAt}
}

// fold adds one envelope at time t to its window(s).
func (r *Runner) fold(w *window, tag string, open map[string]*openWindow, e envelope, t int64, c *cycle) error {
	red := r.p.red
	newAcc := func() (any, error) { return red.fresh() }
	if w.kind == session {
		key := tag + "\x1fopen\x1f" + e.key
		s := open[key]
		if s != nil && t > s.end+w.gapMs() {
			// The silence exceeded the gap: the old session closes (its row is deleted), a new one
			// starts at t.
			r.emitWindow(w, s, c)
			s = nil
		}
		if s == nil {
			acc, err := newAcc()
			if err != nil {
				return err
			}
			s = &openWindow{key: key, userKey: e.key, acc: acc, start: t, end: t}
			open[key] = s
		}
		acc, err := red.fold(s.acc, e.value)
		if err != nil {
			return fmt.Errorf("streams: reduce: %w", err)
		}
		// An older event inside the gap never moves the session's last event time back.
		s.acc, s.touched, s.end = acc, true, max(s.end, t)
		return nil
	}
	for _, start := range w.starts(t) {
		key := tag + "\x1f" + isoMs(start) + "\x1f" + e.key
		ow := open[key]
		if ow == nil {
			acc, err := newAcc()
			if err != nil {
				return err
			}
			ow = &openWindow{key: key, userKey: e.key, acc: acc, start: start, end: start + w.sizeMs()}
			open[key] = ow
		}
		acc, err := red.fold(ow.acc, e.value)
		if err != nil {
			return fmt.Errorf("streams: reduce: %w", err)
		}
		ow.acc, ow.touched = acc, true
	}
	return nil
}

// emitWindow adds a closed window's value to the cycle's emits and deletes its row if stored.
func (r *Runner) emitWindow(w *window, ow *openWindow, c *cycle) {
	end := ow.end
	if w.kind == session {
		end = ow.end + w.gapMs()
	}
	c.emits = append(c.emits, envelope{key: ow.userKey, value: ow.acc, ctx: Context{
		Partition: r.touched[c.partitionID].name, PartitionID: c.partitionID, Key: ow.userKey,
		WindowKey: isoMs(ow.start), WindowStart: ow.start, WindowEnd: end}})
	if ow.version != "" {
		c.ops = append(c.ops, stateOp{Type: "delete", Key: ow.key, Expect: expectOf(ow.version)})
	}
}

// closeWindows emits (and deletes) every window the clock passed and upserts the touched ones that
// stay open. with touched=false only rows read for an idle flush are considered.
func (r *Runner) closeWindows(w *window, open map[string]*openWindow, clock int64, haveClock bool, c *cycle, upsert bool) {
	list := make([]*openWindow, 0, len(open))
	for _, ow := range open {
		list = append(list, ow)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].end != list[j].end {
			return list[i].end < list[j].end
		}
		return list[i].key < list[j].key
	})
	for _, ow := range list {
		closeAt := ow.end + w.graceMs()
		if w.kind == session {
			closeAt += w.gapMs()
		}
		if haveClock && closeAt <= clock {
			r.emitWindow(w, ow, c)
			continue
		}
		if upsert && ow.touched {
			var v any = fixedRow{Acc: ow.acc, WindowStart: ow.start, WindowEnd: ow.end}
			if w.kind == session {
				v = sessionRow{Acc: ow.acc, SessionStart: ow.start, LastEventTime: ow.end}
			}
			c.ops = append(c.ops, stateOp{Type: "upsert", Key: ow.key, Value: v, Expect: expectOf(ow.version)})
		}
	}
}

// idleFlush closes the windows of quiet partitions: processing time by the wall clock, event time by
// the partition's last watermark. It commits cycles without an ack.
func (r *Runner) idleFlush(ctx context.Context) {
	w := r.p.win
	if w == nil || w.idleFlushMs <= 0 || r.now().Sub(r.flushed) < time.Duration(w.idleFlushMs)*time.Millisecond {
		return
	}
	r.flushed = r.now()
	ids := make([]string, 0, len(r.touched))
	for pid, tp := range r.touched {
		if r.now().Sub(tp.at) > 5*time.Minute {
			delete(r.touched, pid)
			delete(r.wm, pid)
			continue
		}
		ids = append(ids, pid)
	}
	sort.Strings(ids)
	for _, pid := range ids {
		if ctx.Err() != nil {
			return
		}
		// A conflict means a runner holding the partition changed its windows meanwhile, and a lease
		// that one holds it now: that runner closes them itself, or the next flush does.
		if err := r.flushPartition(ctx, pid); err != nil && ctx.Err() == nil && !isConflict(err) && !isLeased(err) {
			r.report(err)
		}
	}
}

func (r *Runner) flushPartition(ctx context.Context, pid string) error {
	w := r.p.win
	clock := r.now().UnixMilli()
	if w.eventTime != nil {
		wm, ok := r.wm[pid]
		if !ok {
			return nil
		}
		clock = wm
	}
	tag := w.tag()
	filter := map[string]any{"key_prefix": tag + "\x1f"}
	if w.kind == session {
		filter["key_prefix"] = tag + "\x1fopen\x1f"
	} else {
		filter["ripe_at_or_before"] = clock - w.graceMs()
	}
	rows, err := r.loadState(ctx, pid, filter)
	if err != nil || len(rows) == 0 {
		return err
	}
	open := map[string]*openWindow{}
	for _, row := range rows {
		if ow := parseRow(w, tag, row); ow != nil {
			open[row.Key] = ow
		}
	}
	c := &cycle{partitionID: pid, release: true}
	r.closeWindows(w, open, clock, true, c, false)
	if len(c.emits) == 0 {
		return nil
	}
	return r.commit(ctx, c, r.touched[pid].name, true)
}
