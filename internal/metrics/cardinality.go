package metrics

import "sync"

// OverflowQueue is the queue label of every queue past the series cap: a producer that creates queues
// without end grows the exposition by one series set, not one per queue.
const OverflowQueue = "__overflow__"

// DefaultMaxQueueSeries is the cap when none is configured (METRICS_MAX_QUEUES).
const DefaultMaxQueueSeries = 1000

// queueLabels hands out queue label values: the first max distinct queues seen since start keep their
// name, later ones share OverflowQueue.
type queueLabels struct {
	mu    sync.Mutex // protects known
	max   int
	known map[string]struct{}
}

func (l *queueLabels) label(queue string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.known[queue]; ok {
		return queue
	}
	if len(l.known) >= l.max {
		return OverflowQueue
	}
	if l.known == nil {
		l.known = map[string]struct{}{}
	}
	l.known[queue] = struct{}{}
	return queue
}

// LimitQueues sets how many distinct queues get series of their own (at least 1); call it before use.
func (m *Metrics) LimitQueues(n int) {
	m.queues.mu.Lock()
	m.queues.max = max(n, 1)
	m.queues.mu.Unlock()
}
