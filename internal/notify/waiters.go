package notify

import (
	"strconv"
	"strings"
	"sync"
)

// waiters parks long-poll pops per queue. A push (local, or announced by NOTIFY from any broker) wakes
// every waiter of its queue; each then retries its pop. Parking costs a map entry and a channel, no
// goroutine of its own and no database connection.
type waiters struct {
	mu      sync.Mutex // protects byQueue
	byQueue map[string]map[*Waiter]struct{}
}

// Waiter is one parked pop; C receives when a push may have made something claimable for it.
type Waiter struct{ ch chan struct{} }

// C is the waiter's wake-up channel.
func (wt *Waiter) C() <-chan struct{} { return wt.ch }

func newWaiters() *waiters { return &waiters{byQueue: map[string]map[*Waiter]struct{}{}} }

// add parks one waiter on every queue it names; a push to any of them wakes it.
func (w *waiters) add(queues ...string) *Waiter {
	wt := &Waiter{ch: make(chan struct{}, 1)}
	w.mu.Lock()
	for _, queue := range queues {
		set := w.byQueue[queue]
		if set == nil {
			set = map[*Waiter]struct{}{}
			w.byQueue[queue] = set
		}
		set[wt] = struct{}{}
	}
	w.mu.Unlock()
	return wt
}

func (w *waiters) remove(wt *Waiter, queues ...string) {
	w.mu.Lock()
	for _, queue := range queues {
		if set := w.byQueue[queue]; set != nil {
			delete(set, wt)
			if len(set) == 0 {
				delete(w.byQueue, queue)
			}
		}
	}
	w.mu.Unlock()
}

// AnyQueue is the waiter key of pops that span queues (namespace/task): every push wakes them.
const AnyQueue = "\x00any"

func (w *waiters) wake(queue string) {
	w.mu.Lock()
	for wt := range w.byQueue[queue] {
		signal(wt.ch)
	}
	for wt := range w.byQueue[AnyQueue] {
		signal(wt.ch)
	}
	w.mu.Unlock()
}

// wakeN wakes up to n waiters of queue (n partitions became claimable: more would only race for them),
// and every cross-queue waiter.
func (w *waiters) wakeN(queue string, n int) {
	w.mu.Lock()
	for wt := range w.byQueue[queue] {
		if n <= 0 {
			break
		}
		signal(wt.ch)
		n--
	}
	for wt := range w.byQueue[AnyQueue] {
		signal(wt.ch)
	}
	w.mu.Unlock()
}

// wakeNotified handles a NOTIFY payload "<n>:<queue>"; a payload without a count wakes every waiter
// of the queue.
func (w *waiters) wakeNotified(payload string) {
	if i := strings.IndexByte(payload, ':'); i > 0 {
		if n, err := strconv.Atoi(payload[:i]); err == nil {
			w.wakeN(payload[i+1:], n)
			return
		}
	}
	w.wake(payload)
}

// payload is what a push or an ack announces: n partitions of queue became claimable.
func payload(queue string, n int) string { return strconv.Itoa(n) + ":" + queue }

func (w *waiters) wakeAll() {
	w.mu.Lock()
	for _, set := range w.byQueue {
		for wt := range set {
			signal(wt.ch)
		}
	}
	w.mu.Unlock()
}

// count reports how many requests are parked, for metrics and tests.
func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := map[*Waiter]struct{}{}
	for _, set := range w.byQueue {
		for wt := range set {
			all[wt] = struct{}{}
		}
	}
	return len(all)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// countByQueue reports the parked long-polls per queue (cross-queue pops under "*").
func (w *waiters) countByQueue() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.byQueue))
	for q, set := range w.byQueue {
		if q == AnyQueue {
			q = "*"
		}
		out[q] = len(set)
	}
	return out
}
