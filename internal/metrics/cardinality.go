package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// OverflowQueue is the queue label of every queue past the series cap: a producer that creates queues
// without end grows the exposition by one series set, not one per queue.
const OverflowQueue = "__overflow__"

// DefaultMaxQueueSeries is the cap when none is configured (METRICS_MAX_QUEUES).
const DefaultMaxQueueSeries = 1000

// queueLabels hands out queue label values: the first max distinct queues seen since start keep their
// name, later ones share OverflowQueue. Each label keeps the children of its counters once looked up
// (queueSeries).
type queueLabels struct {
	mu       sync.Mutex // protects known, overflow and every queueSeries' children
	max      int
	known    map[string]*queueSeries
	overflow *queueSeries
}

// queueSeries are one queue label's children of the per-queue counters, each made on its first use (as
// WithLabelValues would: a queue only pushed to exposes no popped series), then reused: WithLabelValues
// hashes and checks its label values and looks the child up on every call, and the observer calls come
// per request or per acknowledged message.
type queueSeries struct {
	label          string
	pushed, popped prometheus.Counter
	lag            prometheus.Observer
	acked          map[string]prometheus.Counter // by status
}

// seriesLocked returns the series of queue's label; l.mu must be held.
func (l *queueLabels) seriesLocked(queue string) *queueSeries {
	if s, ok := l.known[queue]; ok {
		return s
	}
	if len(l.known) >= l.max {
		if l.overflow == nil {
			l.overflow = &queueSeries{label: OverflowQueue}
		}
		return l.overflow
	}
	if l.known == nil {
		l.known = map[string]*queueSeries{}
	}
	s := &queueSeries{label: queue}
	l.known[queue] = s
	return s
}

func (l *queueLabels) label(queue string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seriesLocked(queue).label
}

// LimitQueues sets how many distinct queues get series of their own (at least 1); call it before use.
func (m *Metrics) LimitQueues(n int) {
	m.queues.mu.Lock()
	m.queues.max = max(n, 1)
	m.queues.mu.Unlock()
}
