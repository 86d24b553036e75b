package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// notifyCoalesce is how long the announcer gathers announcements before one NOTIFY carries them all.
const notifyCoalesce = 2 * time.Millisecond

// announcer tells the other brokers on the database which queues have newly claimable partitions.
// Parked pops on this broker are woken at once; the NOTIFY for the others leaves a moment later, one
// statement for everything announced meanwhile, outside the transactions that caused it.
type announcer struct {
	id      string     // prefixes this broker's payloads, so it ignores its own
	mu      sync.Mutex // protects pending
	pending map[string]int
	kick    chan struct{}
}

func newAnnouncer() *announcer {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &announcer{id: hex.EncodeToString(b), pending: map[string]int{}, kick: make(chan struct{}, 1)}
}

// announce wakes up to n local pops parked on queue and schedules the NOTIFY for the other brokers.
func (e *Engine) announce(queue string, n int) {
	e.waiters.wakeN(queue, n)
	a := e.ann
	a.mu.Lock()
	a.pending[queue] += n
	a.mu.Unlock()
	signal(a.kick)
}

func (e *Engine) announceLoop(ctx context.Context) {
	a := e.ann
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(notifyCoalesce):
		}
		a.mu.Lock()
		batch := a.pending
		a.pending = map[string]int{}
		a.mu.Unlock()
		payloads := make([]string, 0, len(batch))
		for q, n := range batch {
			payloads = append(payloads, a.id+" "+notifyPayload(q, n))
		}
		if err := e.st.Notify(ctx, payloads); err != nil && ctx.Err() == nil {
			// Other brokers' parked pops find the messages at their safety re-check instead.
			e.log.DebugContext(ctx, "notify failed", slog.Any("error", err))
		}
	}
}

// onNotify handles a payload from the push channel: "<broker id> <n>:<queue>".
func (e *Engine) onNotify(payload string) {
	id, rest, ok := strings.Cut(payload, " ")
	if !ok {
		e.waiters.wakeNotified(payload)
		return
	}
	if id == e.ann.id {
		return // this broker woke its own waiters when it announced
	}
	e.waiters.wakeNotified(rest)
}
