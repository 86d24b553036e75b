// Package metrics holds the broker's Prometheus collectors: one struct of collectors registered on a
// registry the broker creates (never the default registerer), so every test gets a fresh set.
// Labels are bounded: queue names yes, partition names never.
package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Sources are the live values the collectors read at scrape time. Nil functions read as zero.
type Sources struct {
	Pool        func() (total, idle, acquireWaits int32) // acquireWaits is cumulative
	Buffers     func() (pending, failed int64)
	Spool       func() (deadSpooled int64, stalled bool) // nil: zeros
	Maintenance func() (push, pop bool)
	Connections func() (open, limit, refused int64) // the HTTP API's client connections
	// ReadReplica reports the read replica's last measured lag and whether it serves the reads; nil:
	// none configured, and no series.
	ReadReplica func() (lagSeconds float64, serving bool)
}

// Metrics is the broker's set of collectors. The per-request and per-queue children are kept once
// looked up (requestSeries, queueSeries), so the vectors must not be Reset nor their children deleted.
type Metrics struct {
	Requests        *prometheus.CounterVec   // queen_http_requests_total{route,method,code}
	RequestDuration *prometheus.HistogramVec // queen_http_request_duration_seconds{route,method}
	PushedTotal     *prometheus.CounterVec   // queen_queue_pushed_messages_total{queue}
	PoppedTotal     *prometheus.CounterVec   // queen_queue_popped_messages_total{queue}
	AckedTotal      *prometheus.CounterVec   // queen_queue_acked_messages_total{queue,status}
	PopLag          *prometheus.HistogramVec // queen_queue_pop_lag_seconds{queue}
	Pending         *prometheus.GaugeVec     // queen_queue_pending_messages{queue}
	Processing      *prometheus.GaugeVec     // queen_queue_processing_messages{queue}
	Lag             *prometheus.GaugeVec     // queen_queue_lag_seconds{queue}: age of the oldest pending message
	DeadLetters     *prometheus.GaugeVec     // queen_dlq_depth_messages{queue}
	StatsAge        prometheus.GaugeFunc     // queen_stats_age_seconds

	queues       queueLabels  // cardinality.go: caps the distinct queue label values
	reqMu        sync.RWMutex // protects reqSeries
	reqSeries    map[reqKey]requestSeries
	start        time.Time
	requests     atomic.Int64
	messages     atomic.Int64
	lastSnapshot atomic.Int64 // unix nanos of the last stats snapshot, 0 = never
}

// New builds the collectors and registers them, with the Go and process collectors, on reg.
func New(reg prometheus.Registerer, src Sources) *Metrics {
	m := &Metrics{
		start:  time.Now(),
		queues: queueLabels{max: DefaultMaxQueueSeries},
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queen_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"}),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "queen_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern and method (long-polls included).", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)},
			[]string{"route", "method"}),
		PushedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queen_queue_pushed_messages_total",
			Help: "Messages stored by pushes on this broker (duplicates excluded)."}, []string{"queue"}),
		PoppedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queen_queue_popped_messages_total",
			Help: "Messages delivered by pops on this broker."}, []string{"queue"}),
		AckedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "queen_queue_acked_messages_total",
			Help: "Acknowledgements applied on this broker, by status (completed, failed, retry, dlq)."}, []string{"queue", "status"}),
		PopLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "queen_queue_pop_lag_seconds",
			Help: "Time from push to delivery of popped messages.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"queue"}),
		Pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queen_queue_pending_messages",
			Help: "Messages not yet consumed by the slowest group and not leased (rolled up every STATS_INTERVAL_MS)."}, []string{"queue"}),
		Processing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queen_queue_processing_messages",
			Help: "Messages under a live lease (rolled up every STATS_INTERVAL_MS)."}, []string{"queue"}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queen_queue_lag_seconds",
			Help: "Age of the oldest message not yet consumed by every group (rolled up every STATS_INTERVAL_MS)."}, []string{"queue"}),
		DeadLetters: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queen_dlq_depth_messages",
			Help: "Rows in the dead-letter queue (rolled up every STATS_INTERVAL_MS)."}, []string{"queue"}),
	}
	m.StatsAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_stats_age_seconds",
		Help: "Seconds since the rolled-up statistics were read; -1 before the first pass."}, func() float64 {
		if n := m.lastSnapshot.Load(); n != 0 {
			return time.Since(time.Unix(0, n)).Seconds()
		}
		return -1
	})
	pool := func(i int) func() float64 {
		return func() float64 {
			if src.Pool == nil {
				return 0
			}
			t, idle, w := src.Pool()
			return float64([]int32{t, idle, t - idle, w}[i])
		}
	}
	buf := func(i int) func() float64 {
		return func() float64 {
			if src.Buffers == nil {
				return 0
			}
			p, f := src.Buffers()
			return float64([]int64{p, f}[i])
		}
	}
	maint := func(i int) func() float64 {
		return func() float64 {
			if src.Maintenance == nil {
				return 0
			}
			push, pop := src.Maintenance()
			if []bool{push, pop}[i] {
				return 1
			}
			return 0
		}
	}
	conns := func(i int) func() float64 {
		return func() float64 {
			if src.Connections == nil {
				return 0
			}
			o, l, r := src.Connections()
			return float64([]int64{o, l, r}[i])
		}
	}
	reg.MustRegister(m.Requests, m.RequestDuration, m.PushedTotal, m.PoppedTotal, m.AckedTotal, m.PopLag, m.Pending, m.Processing,
		m.Lag, m.DeadLetters, m.StatsAge,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_uptime_seconds", Help: "Seconds since the broker started."},
			func() float64 { return time.Since(m.start).Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_db_pool_connections", Help: "Open PostgreSQL connections of this broker.",
			ConstLabels: prometheus.Labels{"state": "total"}}, pool(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_db_pool_connections", Help: "Open PostgreSQL connections of this broker.",
			ConstLabels: prometheus.Labels{"state": "idle"}}, pool(1)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_db_pool_connections", Help: "Open PostgreSQL connections of this broker.",
			ConstLabels: prometheus.Labels{"state": "active"}}, pool(2)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "queen_db_pool_acquire_waits_total",
			Help: "Connection acquires that found the pool empty and waited, since the broker started."}, pool(3)),
		// The earlier name of the same count, kept for dashboards that read it: cumulative, not the
		// requests waiting now.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_db_pool_waiting_requests",
			Help: "Deprecated, cumulative: the same count as queen_db_pool_acquire_waits_total."}, pool(3)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_spool_pending_messages", Help: "Pushes in the disk spool waiting for replay."}, buf(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_spool_failed_messages", Help: "Spooled pushes that failed to replay."}, buf(1)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "queen_spool_dead_total",
			Help: "Spooled pushes PostgreSQL refused on replay, moved to the dead-spool file."}, func() float64 {
			if src.Spool == nil {
				return 0
			}
			d, _ := src.Spool()
			return float64(d)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_spool_stalled",
			Help: "1 while the spool holds pushes and its last replay attempts failed."}, func() float64 {
			if src.Spool == nil {
				return 0
			}
			if _, st := src.Spool(); st {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_maintenance_mode_enabled", Help: "1 while a maintenance mode is on.",
			ConstLabels: prometheus.Labels{"mode": "push"}}, maint(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_maintenance_mode_enabled", Help: "1 while a maintenance mode is on.",
			ConstLabels: prometheus.Labels{"mode": "pop"}}, maint(1)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_http_connections", Help: "Open client connections of the HTTP API."}, conns(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_http_connections_limit", Help: "Open client connections allowed (MAX_CONNECTIONS)."}, conns(1)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "queen_http_connections_refused_total",
			Help: "Client connections answered 503 connection_limit and closed, since the broker started."}, conns(2)),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if rr := src.ReadReplica; rr != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_read_replica_lag_seconds",
				Help: "How far the read replica was behind the primary at its last probe (DATABASE_READ_URL)."},
				func() float64 { lag, _ := rr(); return lag }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "queen_read_replica_serving",
				Help: "1 while the read replica serves the read routes; 0 while they go to the primary."},
				func() float64 {
					if _, ok := rr(); ok {
						return 1
					}
					return 0
				}))
	}
	return m
}

// ObserveRequest records one answered HTTP request. route is the mux pattern ("" for unmatched).
func (m *Metrics) ObserveRequest(route, method string, code int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.requests.Add(1)
	s := m.requestSeries(reqKey{route, method, code})
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// Pushed implements engine.Observer.
func (m *Metrics) Pushed(queue string, n int) {
	m.messages.Add(int64(n))
	m.queues.mu.Lock()
	s := m.queues.seriesLocked(queue)
	if s.pushed == nil {
		s.pushed = m.PushedTotal.WithLabelValues(s.label)
	}
	c := s.pushed
	m.queues.mu.Unlock()
	c.Add(float64(n))
}

// Popped implements engine.Observer.
func (m *Metrics) Popped(queue string, n int, lagSeconds []float64) {
	m.queues.mu.Lock()
	s := m.queues.seriesLocked(queue)
	if s.popped == nil {
		s.popped = m.PoppedTotal.WithLabelValues(s.label)
		s.lag = m.PopLag.WithLabelValues(s.label)
	}
	c, h := s.popped, s.lag
	m.queues.mu.Unlock()
	c.Add(float64(n))
	for _, l := range lagSeconds {
		h.Observe(l)
	}
}

// Acked implements engine.Observer.
func (m *Metrics) Acked(queue, status string, n int) {
	m.queues.mu.Lock()
	s := m.queues.seriesLocked(queue)
	c := s.acked[status]
	if c == nil {
		if s.acked == nil {
			s.acked = map[string]prometheus.Counter{}
		}
		c = m.AckedTotal.WithLabelValues(s.label, status)
		s.acked[status] = c
	}
	m.queues.mu.Unlock()
	c.Add(float64(n))
}

// QueueGauge is one queue's rolled-up numbers for [Metrics.SetQueueGauges].
type QueueGauge struct {
	Queue               string
	Pending, Processing int64
	LagSeconds          float64
	DeadLetters         int64
}

// SetQueueGauges replaces the per-queue gauges with a stats snapshot (deleted queues disappear).
func (m *Metrics) SetQueueGauges(at time.Time, qs []QueueGauge) {
	m.Pending.Reset()
	m.Processing.Reset()
	m.Lag.Reset()
	m.DeadLetters.Reset()
	// Queues past the cap add up under OverflowQueue (the lag is the oldest of them).
	merged := map[string]*QueueGauge{}
	var order []string
	for _, q := range qs {
		l := m.queues.label(q.Queue)
		g, ok := merged[l]
		if !ok {
			g = &QueueGauge{Queue: l}
			merged[l] = g
			order = append(order, l)
		}
		g.Pending += q.Pending
		g.Processing += q.Processing
		g.LagSeconds = max(g.LagSeconds, q.LagSeconds)
		g.DeadLetters += q.DeadLetters
	}
	for _, l := range order {
		g := merged[l]
		m.Pending.WithLabelValues(l).Set(float64(g.Pending))
		m.Processing.WithLabelValues(l).Set(float64(g.Processing))
		m.Lag.WithLabelValues(l).Set(g.LagSeconds)
		m.DeadLetters.WithLabelValues(l).Set(float64(g.DeadLetters))
	}
	m.lastSnapshot.Store(at.UnixNano())
}

// Totals are the in-process counters of the JSON /metrics route.
type Totals struct {
	Uptime   time.Duration
	Requests int64
	Messages int64
}

// Totals reads the in-process counters.
func (m *Metrics) Totals() Totals {
	return Totals{Uptime: time.Since(m.start), Requests: m.requests.Load(), Messages: m.messages.Load()}
}

// reqKey is one combination of the request metrics' labels.
type reqKey struct {
	route, method string
	code          int
}

// requestSeries are the children of one reqKey, looked up with WithLabelValues once and then read from
// a map under a read lock, instead of hashing and checking three label values and formatting the code
// per request.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func (m *Metrics) requestSeries(k reqKey) requestSeries {
	m.reqMu.RLock()
	s, ok := m.reqSeries[k]
	m.reqMu.RUnlock()
	if ok {
		return s
	}
	m.reqMu.Lock()
	defer m.reqMu.Unlock()
	if s, ok := m.reqSeries[k]; ok {
		return s
	}
	s = requestSeries{
		count:    m.Requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.code)),
		duration: m.RequestDuration.WithLabelValues(k.route, k.method),
	}
	if m.reqSeries == nil {
		m.reqSeries = map[reqKey]requestSeries{}
	}
	m.reqSeries[k] = s
	return s
}
