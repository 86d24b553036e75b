package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// pacer spreads requests so that a set of producers offers a fixed rate of messages, for the scenarios
// that load the broker at a fraction of its capacity (xmin-hold, soak) instead of as fast as it goes.
type pacer struct {
	mu   sync.Mutex
	next time.Time
	per  time.Duration // interval per message
}

// newPacer returns a pacer for rate messages a second; nil (no pacing) when rate <= 0.
func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{per: time.Duration(float64(time.Second) / rate)}
}

// runPaced starts ps, paced together to rate messages a second (as fast as they go when rate <= 0). They
// run in pg until stop is closed.
func runPaced(ctx context.Context, ps []producer, rate float64) (stop chan struct{}, pg *group) {
	pace := newPacer(rate)
	stop, pg = make(chan struct{}), new(group)
	for i := range ps {
		ps[i].pace = pace
		pg.go_(func() { ps[i].run(ctx, stop) })
	}
	return stop, pg
}

// pacerCatchUp bounds how much of a late start the pacer makes up for: a producer that fell behind
// (the broker slowed down) sends at most this much of the missed load at once, so a stall does not
// turn into a burst that measures something else.
const pacerCatchUp = time.Second

// reserve returns when a request of n messages may be sent, at now or later, and books its slot.
func (p *pacer) reserve(now time.Time, n int) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.next
	if floor := now.Add(-pacerCatchUp); at.Before(floor) {
		at = floor
	}
	p.next = at.Add(time.Duration(n) * p.per)
	return at
}

// wait blocks until a request of n messages may be sent; false when ctx ended first.
func (p *pacer) wait(ctx context.Context, n int) bool {
	if p == nil {
		return true
	}
	d := time.Until(p.reserve(time.Now(), n))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// mark is the cumulative state of a scenario's stats at one instant; two marks delimit a phase.
type mark struct {
	at                      time.Time
	pushed, consumed        int64
	push, pop, ack, e2e, tx int // samples recorded so far
}

func (s *scenarioStats) mark() mark {
	return mark{at: time.Now(), pushed: s.pushed.Load(), consumed: s.consumed.Load(),
		push: s.push.Len(), pop: s.pop.Len(), ack: s.ack.Len(), e2e: s.e2e.Len(), tx: s.tx.Len()}
}

// Phase is what a scenario measured between two marks.
type Phase struct {
	Name        string  `json:"name"`
	Seconds     float64 `json:"seconds"`
	PushRate    float64 `json:"push_msgs_per_s"`
	ConsumeRate float64 `json:"consume_msgs_per_s"`
	Push        Summary `json:"push_latency"`
	Pop         Summary `json:"pop_latency"`
	Ack         Summary `json:"ack_latency"`
	E2E         Summary `json:"push_to_ack_latency"`
	Tx          Summary `json:"transaction_latency,omitempty"`
}

// phase summarizes what s recorded between a and b. Samples are appended in the order their requests
// ended, so a phase's samples are those recorded between its marks.
func (s *scenarioStats) phase(name string, a, b mark) Phase {
	p := phaseRates(name, a, b)
	p.Push, p.Pop, p.Ack = s.push.Between(a.push, b.push), s.pop.Between(a.pop, b.pop), s.ack.Between(a.ack, b.ack)
	p.E2E, p.Tx = s.e2e.Between(a.e2e, b.e2e), s.tx.Between(a.tx, b.tx)
	return p
}

// phaseRates is a phase's length and rates from its two marks.
func phaseRates(name string, a, b mark) Phase {
	p := Phase{Name: name, Seconds: round1(b.at.Sub(a.at).Seconds())}
	if sec := b.at.Sub(a.at).Seconds(); sec > 0 {
		p.PushRate = float64(b.pushed-a.pushed) / sec
		p.ConsumeRate = float64(b.consumed-a.consumed) / sec
	}
	return p
}

// Len is how many samples were recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.samples)
}

// Between summarizes the samples recorded from the i-th to before the j-th.
func (r *Recorder) Between(i, j int) Summary {
	r.mu.Lock()
	j = min(j, len(r.samples))
	var s []time.Duration
	if i < j {
		s = slices.Clone(r.samples[i:j])
	}
	r.mu.Unlock()
	return Summarize(s)
}

// ratio is a/b, 0 when b is 0 (nothing to compare with).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func printPhases(w io.Writer, label string, ps []Phase) {
	for _, p := range ps {
		fmt.Fprintf(w, "%s %-8s %5.0fs: pushed %7.0f/s consumed %7.0f/s | push %s | pop %s | ack %s | push->ack %s ms\n",
			label, p.Name, p.Seconds, p.PushRate, p.ConsumeRate, p.Push, p.Pop, p.Ack, p.E2E)
	}
}
