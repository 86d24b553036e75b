// Package notify wakes parked long-poll pops: it keeps the waiters of this broker, announces queues
// with newly claimable partitions to the other brokers on the database (LISTEN/NOTIFY) and wakes its
// own waiters on their announcements. The same channel carries the configures and deletes that the
// other brokers' caches must drop (changes.go). It is a background service with the broker's
// Start/Stop lifecycle.
package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// coalesce is how long the hub gathers announcements before one NOTIFY carries them all, and spacing
// the least time between two NOTIFYs. Every NOTIFY is a transaction of its own and wakes the LISTEN
// connection of every broker, this one's included, so under a steady stream of pushes their number,
// not their size, is the cost: spaced, a busy broker sends at most 100 a second, while a lone push is
// still announced within coalesce (docs/decisions.md, "Long-poll wake-ups across brokers").
const (
	coalesce = 2 * time.Millisecond
	spacing  = 10 * time.Millisecond
)

// Hub parks pops and wakes them. Parked pops on this broker are woken at once by Announce; the NOTIFY
// for the other brokers leaves a moment later, one statement for everything announced meanwhile,
// outside the transactions that caused it. Without Start it still wakes local pops.
type Hub struct {
	st       *store.Store
	log      *slog.Logger
	waiters  *waiters
	sched    *schedule     // announcements that come due later (AnnounceAt)
	hb       handbacks     // released partitions not yet announced here (AnnounceReleased)
	handBack time.Duration // defaultHandBack; tests change it
	id       string        // prefixes this broker's payloads, so it ignores its own
	mu       sync.Mutex    // protects pending, changes, onChange, cancel, done
	pending  map[string]*pendingNotify
	changes  map[Change]struct{} // changes.go: announced for the next NOTIFY
	onChange func(Change)
	kick     chan struct{}
	cancel   context.CancelFunc
	done     chan struct{} // closed when the running goroutines have exited
}

// New builds a hub over st; Start connects it to the other brokers.
func New(st *store.Store, log *slog.Logger) *Hub {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	h := &Hub{st: st, log: log, waiters: newWaiters(), id: hex.EncodeToString(b), pending: map[string]*pendingNotify{},
		changes: map[Change]struct{}{}, kick: make(chan struct{}, 1), handBack: defaultHandBack}
	h.sched = newSchedule(h.AnnouncePartitions)
	return h
}

// Start launches the announcer and the LISTEN connection. Starting a running hub is an error.
func (h *Hub) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel != nil {
		return errors.New("notify: already started")
	}
	ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	h.done = done
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		h.announceLoop(ctx)
	}()
	h.waiters.mu.Lock()
	h.waiters.memoOn = true
	h.waiters.mu.Unlock()
	go func() {
		defer wg.Done()
		h.memoLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		_ = h.st.Listen(ctx, h.st.PushChannel(), h.connected, h.onNotify)
	}()
	go func() {
		wg.Wait()
		close(done)
	}()
	return nil
}

// Stop ends the background work and waits for it; it is safe to call more than once, or before Start.
func (h *Hub) Stop() {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.cancel, h.done = nil, nil
	h.mu.Unlock()
	h.sched.reset()
	h.waiters.mu.Lock()
	h.waiters.memoOn = false
	h.waiters.forgetAll()
	h.waiters.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Park registers a waiter on every queue it names (AnyQueue for pops that span queues); an
// announcement for any of them wakes it. Register before trying to pop, so a push landing in between
// still wakes it.
func (h *Hub) Park(queues ...string) *Waiter { return h.waiters.add(queues...) }

// ParkPartition registers a waiter for one partition of queue (a pop of a named partition): only
// announcements naming that partition, or naming none, wake it.
func (h *Hub) ParkPartition(queue, partition string) *Waiter {
	return h.waiters.addPartition(queue, partition)
}

// Unpark forgets a waiter.
func (h *Hub) Unpark(wt *Waiter) { h.waiters.remove(wt) }

// WakeAll wakes every parked pop, e.g. when messages became claimable across queues.
func (h *Hub) WakeAll() { h.waiters.wakeAll() }

// Parked reports how many pops are parked.
func (h *Hub) Parked() int { return h.waiters.count() }

// ParkedByQueue reports the parked pops per queue (cross-queue pops under "*").
func (h *Hub) ParkedByQueue() map[string]int { return h.waiters.countByQueue() }

// Announce wakes up to n local pops parked on queue, and every pop parked on one of its partitions
// (which ones is not known), and schedules the NOTIFY for the other brokers.
func (h *Hub) Announce(queue string, n int) { h.announce(queue, n, nil) }

// AnnouncePartitions is Announce for the partitions named: it wakes as many pops of any partition of
// queue, and the pops parked on those partitions.
func (h *Hub) AnnouncePartitions(queue string, partitions []string) {
	if partitions == nil {
		partitions = []string{}
	}
	h.announce(queue, len(partitions), partitions)
}

// notifyBudget bounds the partition names one NOTIFY payload carries for a queue (PostgreSQL refuses
// payloads of 8000 bytes); past it the payload names none, and receivers wake every pop of the queue.
const notifyBudget = 4000

// pendingNotify is what the next NOTIFY says about one queue.
type pendingNotify struct {
	n       int
	parts   map[string]struct{}
	size    int
	unknown bool // some announcement named no partitions, or too many
}

func (h *Hub) announce(queue string, n int, partitions []string) {
	h.waiters.wakeN(queue, n, partitions)
	h.notifyOthers(queue, n, partitions)
}

// notifyOthers adds the announcement to the next NOTIFY.
func (h *Hub) notifyOthers(queue string, n int, partitions []string) {
	h.mu.Lock()
	p := h.pending[queue]
	if p == nil {
		p = &pendingNotify{parts: map[string]struct{}{}, size: len(queue)}
		h.pending[queue] = p
	}
	p.n += n
	switch {
	case partitions == nil:
		p.unknown = true
	case !p.unknown:
		for _, s := range partitions {
			if _, ok := p.parts[s]; !ok {
				p.parts[s] = struct{}{}
				p.size += len(s) + 8
			}
		}
		if p.size > notifyBudget {
			p.unknown = true
		}
	}
	h.mu.Unlock()
	signal(h.kick)
}

// AnnounceAt makes the announcement of AnnouncePartitions at when, for what becomes claimable by the
// passing of time alone: a lease running out, a retry delay or a delayed message ending. Parked pops
// are then woken by the event instead of re-checking on a timer. It is rounded up to the next tick
// (100 ms) and merged with whatever else comes due for the queue in that tick. With a key, Cancel
// takes it back.
func (h *Hub) AnnounceAt(queue string, partitions []string, when time.Time, key string) {
	h.sched.add(queue, partitions, when, key)
}

// Cancel takes back, of the announcement AnnounceAt made under key, the partition named ("" = all of
// it), if it has not come due: a lease acked in time.
func (h *Hub) Cancel(key, partition string) { h.sched.cancel(key, partition) }

// Postpone moves the announcement made under key to when, if it has not come due: a lease extended.
func (h *Hub) Postpone(key string, when time.Time) { h.sched.postpone(key, when) }

func (h *Hub) announceLoop(ctx context.Context) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
		}
		wait := max(coalesce, spacing-time.Since(last))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		last = time.Now()
		h.mu.Lock()
		batch, changes := h.pending, h.changes
		h.pending, h.changes = map[string]*pendingNotify{}, map[Change]struct{}{}
		h.mu.Unlock()
		payloads := make([]string, 0, len(batch)+len(changes))
		for c := range changes {
			payloads = append(payloads, h.id+" "+c.payload())
		}
		for q, p := range batch {
			var parts []string
			if !p.unknown {
				parts = make([]string, 0, len(p.parts))
				for s := range p.parts {
					parts = append(parts, s)
				}
			}
			payloads = append(payloads, h.id+" "+payload(q, p.n, parts))
		}
		if err := h.st.Notify(ctx, payloads); err != nil && ctx.Err() == nil {
			// Other brokers' parked pops find the messages at their safety re-check instead, and their
			// cached entries expire at their TTL.
			h.log.DebugContext(ctx, "notify failed", slog.Any("error", err))
		}
	}
}

// onNotify handles a payload from the push channel: "<broker id> <payload>" (see payload).
func (h *Hub) onNotify(p string) {
	id, rest, ok := strings.Cut(p, " ")
	if !ok {
		h.waiters.wakeNotified(p)
		return
	}
	if id == h.id {
		return // this broker woke its own waiters (or updated its caches) when it announced
	}
	if c, ok := parseChange(rest); ok {
		h.changed(c)
		return
	}
	h.waiters.wakeNotified(rest)
}
