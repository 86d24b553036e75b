package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scenarioStats is what the load goroutines of one scenario record.
type scenarioStats struct {
	push, pop, ack, popToAck, e2e, tx Recorder

	pushed   atomic.Int64 // messages answered queued
	consumed atomic.Int64 // (group, message) deliveries acked successfully (or committed by a transaction)

	errMu  sync.Mutex
	errors map[string]int
}

func newStats() *scenarioStats { return &scenarioStats{errors: map[string]int{}} }

// fail counts one error under "kind: short text".
func (s *scenarioStats) fail(kind string, err error) {
	msg := err.Error()
	var he *httpError
	if errors.As(err, &he) {
		msg = fmt.Sprintf("HTTP %d %s", he.Status, he.Body)
	}
	if len(msg) > 90 {
		msg = msg[:90] + "…"
	}
	s.errMu.Lock()
	s.errors[kind+": "+msg]++
	s.errMu.Unlock()
}

func (s *scenarioStats) errorCounts() map[string]int {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	out := make(map[string]int, len(s.errors))
	for k, v := range s.errors {
		out[k] = v
	}
	return out
}

// producer pushes batches to one queue until stop ends or the shared budget (if any) is used up.
type producer struct {
	cl      *client
	st      *scenarioStats
	tr      *tracker
	queue   string
	batch   int
	payload json.RawMessage
	pick    func(rng *rand.Rand) string // partition of the next request
	budget  *atomic.Int64               // nil = unlimited
	backlog int                         // > 0: wait while the slowest group lags this many messages
	prefix  string                      // transactionId prefix, unique per producer
	pace    *pacer                      // nil = as fast as the broker answers
}

func (p producer) run(ctx context.Context, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	w, err := newPushWriter(p.queue, p.payload, p.prefix)
	if err != nil {
		p.st.fail("push", err)
		return
	}
	stream := p.tr.stream(p.prefix)
	var body []byte
	var answer bytes.Buffer
	var res []pushResult
	queued := make([]bool, 0, p.batch)
	for seq := 0; ; {
		if stopped(stop) {
			return
		}
		n := p.batch
		if p.budget != nil {
			left := p.budget.Add(-int64(n)) + int64(n)
			if left <= 0 {
				return
			}
			n = int(min(int64(n), left))
		}
		for p.backlog > 0 && p.tr.backlog() >= p.backlog {
			if stopped(stop) {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		if !p.pace.wait(ctx, n) {
			return
		}
		first := seq
		seq += n
		body = w.body(body[:0], p.pick(rng), first, n)
		sent := time.Now()
		res, err = p.cl.pushBody(ctx, body, n, &answer, res)
		p.st.push.Add(time.Since(sent))
		queued = queued[:0]
		if err != nil {
			p.st.fail("push", err)
			queued = queued[:n]
			clear(queued)
			p.tr.pushedSeqs(stream, sent, first, queued) // all in doubt
			time.Sleep(20 * time.Millisecond)
			continue
		}
		ok := 0
		for _, r := range res {
			switch r.Status {
			case "queued":
				ok++
			case "buffered":
				p.st.fail("push", errors.New("buffered (database unavailable?)"))
			default:
				p.st.fail("push", fmt.Errorf("status %q %s", r.Status, r.Error))
			}
			queued = append(queued, r.Status == "queued")
		}
		p.tr.pushedSeqs(stream, sent, first, queued)
		p.st.pushed.Add(int64(ok))
	}
}

// consumer pops from one queue for one group and hands each non-empty pop to handle, which returns the
// transactionIds it consumed successfully.
type consumer struct {
	cl     *client
	st     *scenarioStats
	tr     *tracker
	queue  string
	group  string // "" = queue mode
	batch  int
	parts  int // partitions claimed per pop (1 = the default)
	wait   time.Duration
	until  <-chan struct{} // closed: stop after the request in flight (nil = only stop counts)
	handle func(ctx context.Context, msgs []popMessage, popped time.Time) []string
}

func (c consumer) run(ctx context.Context, stop <-chan struct{}) {
	var sent []time.Time
	for !stopped(stop) && !stopped(c.until) {
		start := time.Now()
		msgs, err := c.cl.pop(ctx, c.queue, c.group, c.batch, c.parts, c.wait)
		popped := time.Now()
		if err != nil && ctx.Err() != nil {
			return // cancelled after the drain: whatever this pop was waiting for does not exist
		}
		if err != nil {
			c.st.fail("pop", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		c.st.pop.Add(popped.Sub(start))
		done := c.handle(ctx, msgs, popped)
		if len(done) == 0 {
			continue
		}
		end := time.Now()
		c.st.popToAck.Add(end.Sub(popped))
		c.st.consumed.Add(int64(len(done)))
		sent = c.tr.acked(c.group, done, sent)
		for _, s := range sent {
			if !s.IsZero() {
				c.st.e2e.Add(end.Sub(s))
			}
		}
	}
}

// ackAll is the plain consumer's handler: one /ack/batch for the whole pop.
func ackAll(cl *client, st *scenarioStats, group string) func(context.Context, []popMessage, time.Time) []string {
	return func(ctx context.Context, msgs []popMessage, _ time.Time) []string {
		acks := make([]ackItem, len(msgs))
		for i, m := range msgs {
			acks[i] = ackItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"}
		}
		start := time.Now()
		res, err := cl.ackBatch(ctx, group, acks)
		st.ack.Add(time.Since(start))
		if err != nil {
			st.fail("ack", err)
			return nil
		}
		done := make([]string, 0, len(msgs))
		for i, r := range res {
			switch {
			case !r.Success:
				st.fail("ack", fmt.Errorf("rejected: %v", r.Error))
			case r.Noop:
				st.fail("ack", errors.New("noop (already consumed)"))
			default:
				done = append(done, msgs[i].TransactionID)
			}
		}
		return done
	}
}

// forward is the pipeline stage's handler: one transaction acking the popped messages and pushing each
// to the next queue under the same transactionId. On success the pushed ids are recorded on next.
func forward(cl *client, st *scenarioStats, group, nextQueue string, next *tracker) func(context.Context, []popMessage, time.Time) []string {
	return func(ctx context.Context, msgs []popMessage, _ time.Time) []string {
		ops := make([]any, 0, len(msgs)+1)
		push := txPush{Type: "push"}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ops = append(ops, txAck{Type: "ack", TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, ConsumerGroup: group, Status: "completed"})
			push.Items = append(push.Items, pushItem{Queue: nextQueue, Partition: m.Partition, Payload: m.Data, TransactionID: m.TransactionID})
			ids[i] = m.TransactionID
		}
		ops = append(ops, push)
		start := time.Now()
		res, err := cl.transaction(ctx, ops)
		st.tx.Add(time.Since(start))
		if err != nil {
			st.fail("transaction", err)
			next.maybePushed(ids...)
			return nil
		}
		if !res.Success {
			st.fail("transaction", fmt.Errorf("rolled back: %s", res.Error))
			return nil
		}
		next.pushed(start, ids...)
		return ids
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// payloadOf returns a JSON string value exactly size bytes long (at least 2: the quotes).
func payloadOf(size int) json.RawMessage {
	size = max(size, 2)
	return json.RawMessage(`"` + strings.Repeat("x", size-2) + `"`)
}

// group runs goroutines and waits for them.
type group struct{ wg sync.WaitGroup }

func (g *group) go_(f func()) {
	g.wg.Add(1)
	go func() { defer g.wg.Done(); f() }()
}

func (g *group) wait() { g.wg.Wait() }
