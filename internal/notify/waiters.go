package notify

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// waiters parks long-poll pops per queue, and the pops of one named partition per partition. A push
// (local, or announced by NOTIFY from any broker) wakes as many pops of any partition of its queue as
// it filled partitions, and every pop parked on one of those partitions; each then retries its pop.
// Parking costs a map entry and a channel, no goroutine of its own and no database connection.
type waiters struct {
	mu      sync.Mutex                                 // protects byQueue, byPart and the memo fields
	byQueue map[string]map[*Waiter]struct{}            // pops of any partition of the queue (AnyQueue: of any queue)
	byPart  map[string]map[string]map[*Waiter]struct{} // pops of one partition: queue → partition → pops

	// The empty memo (empty.go), under mu so that an announcement forgets what it makes stale before
	// it wakes anyone.
	memo    map[string]map[string]memoGroups // queue → partition → group → entry
	memoLen int                              // entries in memo
	memoAge time.Duration                    // SetEmptyMemo; 0: off
	memoOn  bool                             // the hub runs, and with it the checks
}

// Waiter is one parked pop; C receives when something may have become claimable for it.
type Waiter struct {
	ch        chan struct{}
	queues    []string
	partition string // parked on this partition of queues[0]; "" = any partition
	named     bool
}

// C is the waiter's wake-up channel.
func (wt *Waiter) C() <-chan struct{} { return wt.ch }

func newWaiters() *waiters {
	return &waiters{byQueue: map[string]map[*Waiter]struct{}{}, byPart: map[string]map[string]map[*Waiter]struct{}{}}
}

// add parks one waiter on every queue it names; an announcement for any of them wakes it.
func (w *waiters) add(queues ...string) *Waiter {
	wt := &Waiter{ch: make(chan struct{}, 1), queues: queues}
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

// addPartition parks one waiter on one partition of queue: only announcements naming that partition,
// or naming none, wake it.
func (w *waiters) addPartition(queue, partition string) *Waiter {
	wt := &Waiter{ch: make(chan struct{}, 1), queues: []string{queue}, partition: partition, named: true}
	w.mu.Lock()
	parts := w.byPart[queue]
	if parts == nil {
		parts = map[string]map[*Waiter]struct{}{}
		w.byPart[queue] = parts
	}
	set := parts[partition]
	if set == nil {
		set = map[*Waiter]struct{}{}
		parts[partition] = set
	}
	set[wt] = struct{}{}
	w.mu.Unlock()
	return wt
}

func (w *waiters) remove(wt *Waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wt.named {
		q := wt.queues[0]
		if set := w.byPart[q][wt.partition]; set != nil {
			delete(set, wt)
			if len(set) == 0 {
				delete(w.byPart[q], wt.partition)
				if len(w.byPart[q]) == 0 {
					delete(w.byPart, q)
				}
			}
		}
		return
	}
	for _, queue := range wt.queues {
		if set := w.byQueue[queue]; set != nil {
			delete(set, wt)
			if len(set) == 0 {
				delete(w.byQueue, queue)
			}
		}
	}
}

// AnyQueue is the waiter key of pops that span queues (namespace/task): every push wakes them.
const AnyQueue = "\x00any"

// wakeN wakes up to n waiters of any partition of queue (n partitions became claimable: more would
// only race for them), every cross-queue waiter, and the waiters of the partitions named; with
// partitions nil (not known) the waiters of every partition of the queue.
func (w *waiters) wakeN(queue string, n int, partitions []string) {
	w.mu.Lock()
	w.forget(queue, partitions)
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
	if parts := w.byPart[queue]; parts != nil {
		if partitions == nil {
			for _, set := range parts {
				signalAll(set)
			}
		} else {
			for _, p := range partitions {
				signalAll(parts[p])
			}
		}
	}
	w.mu.Unlock()
}

// forgetParked drops what the empty memo knows about the partitions of queue and reports whether a
// pop that an announcement of them would wake is parked.
func (w *waiters) forgetParked(queue string, partitions []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget(queue, partitions)
	if len(w.byQueue[queue]) > 0 || len(w.byQueue[AnyQueue]) > 0 {
		return true
	}
	parts := w.byPart[queue]
	for _, p := range partitions {
		if len(parts[p]) > 0 {
			return true
		}
	}
	return false
}

// wakeNotified handles a NOTIFY payload (see payload); one it cannot read wakes every waiter of the
// queue it might name.
func (w *waiters) wakeNotified(p string) {
	if queue, parts, ok := parsePartitions(p); ok {
		w.wakeN(queue, len(parts), parts)
		return
	}
	if i := strings.IndexByte(p, ':'); i > 0 {
		if n, err := strconv.Atoi(p[:i]); err == nil {
			w.wakeN(p[i+1:], n, nil)
			return
		}
	}
	w.wakeN(p, int(^uint(0)>>1), nil)
}

// payload is what an announcement of n claimable partitions of queue carries to the other brokers:
// "<n>:<queue>" when the partitions are not known, else "P<n>:" followed by the queue and each
// partition as "<byte length>:<text>" (names may hold any character but NUL, which NOTIFY refuses).
func payload(queue string, n int, partitions []string) string {
	if partitions == nil {
		return strconv.Itoa(n) + ":" + queue
	}
	var b strings.Builder
	b.WriteString("P" + strconv.Itoa(len(partitions)) + ":")
	for _, s := range append([]string{queue}, partitions...) {
		b.WriteString(strconv.Itoa(len(s)) + ":" + s)
	}
	return b.String()
}

// parsePartitions reads a payload naming partitions; ok false for any other text.
func parsePartitions(p string) (queue string, parts []string, ok bool) {
	rest, found := strings.CutPrefix(p, "P")
	if !found {
		return "", nil, false
	}
	next := func() (string, bool) {
		i := strings.IndexByte(rest, ':')
		if i <= 0 {
			return "", false
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n < 0 || n > len(rest)-i-1 {
			return "", false
		}
		s := rest[i+1 : i+1+n]
		rest = rest[i+1+n:]
		return s, true
	}
	i := strings.IndexByte(rest, ':')
	if i <= 0 {
		return "", nil, false
	}
	count, err := strconv.Atoi(rest[:i])
	if err != nil || count < 0 {
		return "", nil, false
	}
	rest = rest[i+1:]
	if queue, ok = next(); !ok {
		return "", nil, false
	}
	parts = make([]string, 0, min(count, 1024))
	for range count {
		s, ok := next()
		if !ok {
			return "", nil, false
		}
		parts = append(parts, s)
	}
	return queue, parts, rest == ""
}

func (w *waiters) wakeAll() {
	w.mu.Lock()
	w.forgetAll()
	for _, set := range w.byQueue {
		signalAll(set)
	}
	for _, parts := range w.byPart {
		for _, set := range parts {
			signalAll(set)
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
	n := len(all)
	for _, parts := range w.byPart {
		for _, set := range parts {
			n += len(set)
		}
	}
	return n
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func signalAll(set map[*Waiter]struct{}) {
	for wt := range set {
		signal(wt.ch)
	}
}

// countByQueue reports the parked long-polls per queue (cross-queue pops under "*").
func (w *waiters) countByQueue() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.byQueue)+len(w.byPart))
	for q, set := range w.byQueue {
		if q == AnyQueue {
			q = "*"
		}
		out[q] = len(set)
	}
	for q, parts := range w.byPart {
		for _, set := range parts {
			out[q] += len(set)
		}
	}
	return out
}
