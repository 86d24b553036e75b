package engine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
)

// The ack rule is written three times: ackDecider.decide (the full path, Go), AckCompletions and
// AckLeases (the one-statement paths, SQL). TestAckOneStatement pins hand-picked cases;
// TestAckDifferential holds the paths together on random histories. Each history (pushes, pops, acks
// of every status under right, wrong, missing and stale leases, merged ack requests, lease expiries,
// seeks) runs on two engines with databases of their own, one with the one-statement paths turned
// off; after every step the answers and the consumer rows of both must be equal.
//
// QUEEN_ACKDIFF_SEQUENCES sets the number of histories (make fuzz runs more); QUEEN_ACKDIFF_SEED
// replays one: a failure names its seed.

const ackDiffWorkers = 4

func ackDiffSequences() int {
	if n, err := strconv.Atoi(os.Getenv("QUEEN_ACKDIFF_SEQUENCES")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 400 // make test: seeds differ per run, so runs add up; make fuzz runs 20 000
	}
	return 1000
}

func TestAckDifferential(t *testing.T) {
	t.Parallel()
	fast, full := newAckSide(t, false), newAckSide(t, true)
	for _, s := range []*ackSide{fast, full} {
		_, err := s.eng.Configure(t.Context(), "ackdiff-settings", "", "", engine.QueueOptions{})
		require.NoError(t, err) // warms the schema; every history configures its own queue below
	}
	seeds := make(chan uint64)
	go func() {
		defer close(seeds)
		if s, err := strconv.ParseUint(os.Getenv("QUEEN_ACKDIFF_SEED"), 10, 64); err == nil {
			seeds <- s
			return
		}
		base := uint64(time.Now().UnixNano())
		for i := range ackDiffSequences() {
			seeds <- base + uint64(i)
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for range ackDiffWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				if msg := runAckHistory(t, fast, full, seed); msg != "" {
					mu.Lock()
					failed = append(failed, msg)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 3 {
		failed = append(failed[:3], fmt.Sprintf("and %d more", len(failed)-3))
	}
	require.Empty(t, failed, "histories where the one-statement paths and the full path disagree")
	applied, declined := engine.AckOneCounts(fast.eng)
	leases := engine.AckLeaseCount(fast.eng)
	t.Logf("one-statement side: %d batches applied (%d by whole leases), %d declined", applied, leases, declined)
	// The comparison means something only if the histories reach every path.
	require.Positive(t, leases, "no history reached AckLeases")
	require.Positive(t, applied-leases, "no history reached AckCompletions")
	require.Positive(t, declined, "no history was declined by the one-statement paths")
}

// ackHistory is one random history, played step by step on both sides.
type ackHistory struct {
	rng    *rand.Rand
	queue  string
	log    []string
	pushed map[string][]string    // partition -> transaction ids pushed, in order
	pops   [2][]*engine.PopResult // per side, every non-empty pop so far (same index on both sides)
	nextTx int
	parts  []string
	groups []string
	cur    *choices // the draws of the step being played
}

// runAckHistory plays the history of seed on both sides and returns why they disagreed ("" if never).
func runAckHistory(t *testing.T, fast, full *ackSide, seed uint64) (msg string) {
	h := &ackHistory{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		queue:  fmt.Sprintf("ackdiff-%d", seed),
		pushed: map[string][]string{},
		parts:  []string{"p0", "p1", "p2"},
		groups: []string{engine.QueueMode, "g1", "g2"},
	}
	defer func() {
		if msg != "" {
			msg = fmt.Sprintf("seed %d (QUEEN_ACKDIFF_SEED=%d replays it): %s\nsteps:\n  %s", seed, seed, msg, strings.Join(h.log, "\n  "))
		}
	}()
	sides := [2]*ackSide{fast, full}
	// No retry delay, so that no answer depends on how long a step took; a retry limit of 1 and DLQ on,
	// so that failed acks reach the dead-letter queue within a history.
	zero, one, on := int32(0), int32(1), true
	for _, s := range sides {
		if _, err := s.eng.Configure(t.Context(), h.queue, "", "", engine.QueueOptions{RetryDelay: &zero, RetryLimit: &one,
			DeadLetterQueue: &on, DLQAfterMaxRetries: &on}); err != nil {
			return "configure: " + err.Error()
		}
	}
	steps := 6 + h.rng.IntN(10)
	for range steps {
		var got [2]string
		op := h.rng.IntN(100)
		switch {
		case len(h.pushed) == 0:
			op = 0 // nothing to pop yet
		case len(h.pops[0]) == 0 && op >= 50:
			op = 25 + op%25 // nothing to ack yet: pop instead
		}
		for j, s := range sides {
			got[j] = h.step(t, s, j, op)
		}
		// A step draws its random choices once, on the first side; the second replays them.
		if got[0] != got[1] {
			return fmt.Sprintf("step %d answers differ:\n one-statement: %s\n full path:     %s", len(h.log), got[0], got[1])
		}
		st0, st1 := fast.stateOf(t, h.queue), full.stateOf(t, h.queue)
		if st0 != st1 {
			return fmt.Sprintf("after step %d the consumer rows differ:\n one-statement:\n%s full path:\n%s", len(h.log), st0, st1)
		}
	}
	return ""
}

// choices records the random draws of a step on side 0 so that side 1 makes the same ones.
type choices struct {
	vals []int
	pos  int
}

func (c *choices) draw(h *ackHistory, side, n int) int {
	if side == 0 {
		v := h.rng.IntN(n)
		c.vals = append(c.vals, v)
		return v
	}
	v := c.vals[c.pos]
	c.pos++
	return v
}

// step runs one operation on one side and describes its answer in terms both sides share (names and
// transaction ids, never ids minted per database).
func (h *ackHistory) step(t *testing.T, s *ackSide, side, op int) string {
	var c *choices
	if side == 0 {
		c = &choices{}
		h.cur = c
	} else {
		c = h.cur
		c.pos = 0
	}
	ctx := t.Context()
	switch {
	case op < 25: // push 1-4 messages to one partition
		part := h.parts[c.draw(h, side, len(h.parts))]
		n := 1 + c.draw(h, side, 4)
		if side == 0 {
			h.log = append(h.log, fmt.Sprintf("push %d to %s", n, part))
		}
		items := make([]engine.PushItem, n)
		for i := range items {
			items[i] = engine.PushItem{Queue: h.queue, Partition: part, TransactionID: fmt.Sprintf("t%d", h.nextTx+i)}
		}
		if side == 1 {
			for i := range items {
				h.pushed[part] = append(h.pushed[part], items[i].TransactionID)
			}
			h.nextTx += n
		}
		res, err := s.eng.Push(ctx, items)
		if err != nil {
			return "push error: " + err.Error()
		}
		var b strings.Builder
		for _, r := range res {
			fmt.Fprintf(&b, "%s:%s ", r.TransactionID, r.Status)
		}
		return b.String()
	case op < 50: // pop 1-4 messages of one partition for one group
		part := h.parts[c.draw(h, side, len(h.parts))]
		group := h.groups[c.draw(h, side, len(h.groups))]
		batch := 1 + c.draw(h, side, 4)
		if side == 0 {
			h.log = append(h.log, fmt.Sprintf("pop %s of %s batch %d", group, part, batch))
		}
		r, err := s.eng.Pop(ctx, engine.PopRequest{Queue: h.queue, Partition: part, Group: group, Batch: batch})
		if err != nil {
			return "pop error: " + err.Error()
		}
		if r == nil {
			return "empty"
		}
		h.pops[side] = append(h.pops[side], r)
		var b strings.Builder
		fmt.Fprintf(&b, "%s/%s claimed=%d:", r.Partition, r.ConsumerGroup, r.PartitionsClaimed)
		for _, m := range r.Messages {
			fmt.Fprintf(&b, " %s(retry %d)", m.TransactionID, m.RetryCount)
		}
		return b.String()
	case op < 85: // 1-3 ack requests, merged as the coalescer merges requests that arrive together
		if len(h.pops[side]) == 0 {
			return "no pop to ack"
		}
		reqs := make([][]engine.AckItem, 1+c.draw(h, side, 3))
		var desc []string
		for i := range reqs {
			pop := h.pops[side][c.draw(h, side, len(h.pops[side]))]
			n := 1 + c.draw(h, side, len(pop.Messages)+1)
			wholeLease := c.draw(h, side, 2) == 0 // every message of the pop in order, under its lease
			if wholeLease {
				n = len(pop.Messages)
			}
			for k := range n {
				m := pop.Messages[k%len(pop.Messages)]
				if !wholeLease {
					m = pop.Messages[c.draw(h, side, len(pop.Messages))]
				}
				item := completed(m, pop.LeaseID)
				var d string
				item, d = h.vary(c, side, item, wholeLease)
				reqs[i] = append(reqs[i], item)
				desc = append(desc, fmt.Sprintf("req%d %s %s", i, m.TransactionID, d))
			}
		}
		if side == 0 {
			h.log = append(h.log, "ack "+strings.Join(desc, ", "))
		}
		res, err := engine.AckMerged(ctx, s.eng, reqs)
		if err != nil {
			return "ack error: " + err.Error()
		}
		return fmt.Sprintf("%+v", derefResults(res))
	case op < 93: // the leases of one partition expire
		part := h.parts[c.draw(h, side, len(h.parts))]
		if side == 0 {
			h.log = append(h.log, "expire leases on "+part)
		}
		_, err := s.db.Exec(ctx, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second'
		        WHERE lease_expires_at IS NOT NULL
		          AND partition_id = (SELECT p.id FROM partitions p JOIN queues q ON q.id = p.queue_id
		                              WHERE q.name = $1 AND p.name = $2)`, h.queue, part)
		if err != nil {
			return "expire error: " + err.Error()
		}
		return "expired"
	default: // a seek: one partition to its end, or the whole queue to its end or its beginning
		group := h.groups[c.draw(h, side, len(h.groups))]
		kind := c.draw(h, side, 3)
		part := h.parts[c.draw(h, side, len(h.parts))]
		if side == 0 {
			h.log = append(h.log, fmt.Sprintf("seek %s kind %d (%s)", group, kind, part))
		}
		var err error
		var desc string
		switch kind {
		case 0:
			var r *engine.PartitionSeekResult
			r, err = s.eng.Groups().SeekPartition(ctx, group, h.queue, part)
			if r != nil {
				desc = fmt.Sprintf("%+v", *r)
			}
		default:
			var r *engine.SeekResult
			r, err = s.eng.Groups().SeekQueue(ctx, group, h.queue, kind == 1, time.Unix(0, 0))
			if r != nil {
				desc = fmt.Sprintf("%v %v %d", r.Success, r.SeekToEnd, r.PartitionsUpdated)
			}
		}
		if err != nil {
			return "seek error: " + err.Error()
		}
		return desc
	}
}

// vary turns the plain completion of a delivered message into one of the cases the paths must agree
// on: another status, no lease, another pop's lease, an unknown or differently spelled lease, a message
// that was not delivered or does not exist, another group.
func (h *ackHistory) vary(c *choices, side int, it engine.AckItem, wholeLease bool) (engine.AckItem, string) {
	if wholeLease && c.draw(h, side, 4) != 0 {
		return it, "completed own lease"
	}
	switch c.draw(h, side, 12) {
	case 0:
		it.LeaseID = ""
		return it, "no lease"
	case 1:
		other := h.pops[side][c.draw(h, side, len(h.pops[side]))]
		it.LeaseID = other.LeaseID
		return it, "another pop's lease"
	case 2:
		it.LeaseID = uuid.NewString()
		return it, "unknown lease"
	case 3:
		it.LeaseID = strings.ToUpper(it.LeaseID)
		return it, "lease in capitals"
	case 4:
		it.Status = engine.AckFailed
		return it, "failed"
	case 5:
		it.Status = engine.AckRetry
		return it, "retry"
	case 6:
		it.Status = engine.AckDLQ
		return it, "dlq"
	case 7:
		it.Status = engine.AckSuccess
		return it, "success"
	case 8:
		// A message of the same partition that may not have been delivered yet.
		var part string
		for p, txs := range h.pushed {
			for _, tx := range txs {
				if tx == it.TransactionID {
					part = p
				}
			}
		}
		if txs := h.pushed[part]; len(txs) > 0 {
			it.TransactionID = txs[c.draw(h, side, len(txs))]
		}
		return it, "maybe undelivered " + it.TransactionID
	case 9:
		it.TransactionID = "nope"
		return it, "unknown message"
	case 10:
		it.Group = h.groups[c.draw(h, side, len(h.groups))]
		return it, "as group " + it.Group
	default:
		return it, "completed"
	}
}

func derefResults(res [][]engine.AckResult) []string {
	var out []string
	for _, rs := range res {
		for _, r := range rs {
			e := ""
			if r.Error != nil {
				e = *r.Error
			}
			out = append(out, fmt.Sprintf("%d %s ok=%t err=%q released=%t dlq=%t noop=%t", r.Index, r.TransactionID, r.Success, e,
				r.LeaseReleased, r.DLQ, r.Noop))
		}
	}
	return out
}

// stateOf is state without failing the test from a worker goroutine: the consumer rows of queue, or the
// error that kept them from being read.
func (s *ackSide) stateOf(t *testing.T, queue string) string {
	st, err := s.readState(t.Context(), queue)
	if err != nil {
		return "state: " + err.Error()
	}
	return st
}
