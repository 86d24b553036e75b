// Package notify wakes parked long-poll pops: it keeps the waiters of this broker, announces queues
// with newly claimable partitions to the other brokers on the database (LISTEN/NOTIFY) and wakes its
// own waiters on their announcements. It is a background service with the broker's Start/Stop
// lifecycle.
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
	st      *store.Store
	log     *slog.Logger
	waiters *waiters
	id      string     // prefixes this broker's payloads, so it ignores its own
	mu      sync.Mutex // protects pending, cancel, done
	pending map[string]int
	kick    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{} // closed when the running goroutines have exited
}

// New builds a hub over st; Start connects it to the other brokers.
func New(st *store.Store, log *slog.Logger) *Hub {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &Hub{st: st, log: log, waiters: newWaiters(), id: hex.EncodeToString(b), pending: map[string]int{},
		kick: make(chan struct{}, 1)}
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
	wg.Add(2)
	go func() {
		defer wg.Done()
		h.announceLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		_ = h.st.Listen(ctx, h.st.PushChannel(), h.waiters.wakeAll, h.onNotify)
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
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Park registers a waiter on every queue it names (AnyQueue for pops that span queues); a push to any
// of them wakes it. Register before trying to pop, so a push landing in between still wakes it.
func (h *Hub) Park(queues ...string) *Waiter { return h.waiters.add(queues...) }

// Unpark forgets a waiter.
func (h *Hub) Unpark(wt *Waiter, queues ...string) { h.waiters.remove(wt, queues...) }

// WakeAll wakes every parked pop, e.g. when messages became claimable across queues.
func (h *Hub) WakeAll() { h.waiters.wakeAll() }

// Parked reports how many pops are parked.
func (h *Hub) Parked() int { return h.waiters.count() }

// ParkedByQueue reports the parked pops per queue (cross-queue pops under "*").
func (h *Hub) ParkedByQueue() map[string]int { return h.waiters.countByQueue() }

// Announce wakes up to n local pops parked on queue and schedules the NOTIFY for the other brokers.
func (h *Hub) Announce(queue string, n int) {
	h.waiters.wakeN(queue, n)
	h.mu.Lock()
	h.pending[queue] += n
	h.mu.Unlock()
	signal(h.kick)
}

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
		batch := h.pending
		h.pending = map[string]int{}
		h.mu.Unlock()
		payloads := make([]string, 0, len(batch))
		for q, n := range batch {
			payloads = append(payloads, h.id+" "+payload(q, n))
		}
		if err := h.st.Notify(ctx, payloads); err != nil && ctx.Err() == nil {
			// Other brokers' parked pops find the messages at their safety re-check instead.
			h.log.DebugContext(ctx, "notify failed", slog.Any("error", err))
		}
	}
}

// onNotify handles a payload from the push channel: "<broker id> <n>:<queue>".
func (h *Hub) onNotify(p string) {
	id, rest, ok := strings.Cut(p, " ")
	if !ok {
		h.waiters.wakeNotified(p)
		return
	}
	if id == h.id {
		return // this broker woke its own waiters when it announced
	}
	h.waiters.wakeNotified(rest)
}
