package engine

import "sync"

// waiters parks long-poll pops per queue. A push (local, or announced by NOTIFY from any broker) wakes
// every waiter of its queue; each then retries its pop. Parking costs a map entry and a channel, no
// goroutine of its own and no database connection.
type waiters struct {
	mu      sync.Mutex // protects byQueue
	byQueue map[string]map[*waiter]struct{}
}

type waiter struct{ ch chan struct{} }

func newWaiters() *waiters { return &waiters{byQueue: map[string]map[*waiter]struct{}{}} }

// add parks one waiter on every queue it names; a push to any of them wakes it.
func (w *waiters) add(queues ...string) *waiter {
	wt := &waiter{ch: make(chan struct{}, 1)}
	w.mu.Lock()
	for _, queue := range queues {
		set := w.byQueue[queue]
		if set == nil {
			set = map[*waiter]struct{}{}
			w.byQueue[queue] = set
		}
		set[wt] = struct{}{}
	}
	w.mu.Unlock()
	return wt
}

func (w *waiters) remove(wt *waiter, queues ...string) {
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

// anyQueue is the waiter key of pops that span queues (namespace/task): every push wakes them.
const anyQueue = "\x00any"

func (w *waiters) wake(queue string) {
	w.mu.Lock()
	for wt := range w.byQueue[queue] {
		signal(wt.ch)
	}
	for wt := range w.byQueue[anyQueue] {
		signal(wt.ch)
	}
	w.mu.Unlock()
}

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
	all := map[*waiter]struct{}{}
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
