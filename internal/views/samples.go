package views

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"time"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// Agg is one metric over a bucket: mean, extremes and the last sample.
type Agg struct {
	Avg, Min, Max, Last float64
	n                   int
}

func (a *Agg) add(v float64) {
	if a.n == 0 || v < a.Min {
		a.Min = v
	}
	if a.n == 0 || v > a.Max {
		a.Max = v
	}
	a.Avg = (a.Avg*float64(a.n) + v) / float64(a.n+1)
	a.Last = v
	a.n++
}

// MarshalJSON writes the original's {avg,min,max,last} shape.
func (a Agg) MarshalJSON() ([]byte, error) {
	r := func(v float64) float64 { return math.Round(v*100) / 100 }
	return json.Marshal(map[string]float64{"avg": r(a.Avg), "min": r(a.Min), "max": r(a.Max), "last": r(a.Last)})
}

// ReplicaBucket is one broker's samples within one bucket.
type ReplicaBucket struct {
	Bucket                           time.Time
	Samples                          int
	CPUUser, CPUSys, RSS, Goroutines Agg
	SchedLagAvg, SchedLagMax         Agg
	PoolSize, PoolIdle, PoolActive   Agg
	PoolWaiting, Parked              Agg
}

// Replica is one broker process and its bucketed samples, oldest first.
type Replica struct {
	BrokerID, Hostname string
	Port, PID          int
	LastSeen           time.Time
	Buckets            []ReplicaBucket
}

// replicaSeries buckets every broker's samples between from and to (bucketMinutes wide); hostname and
// brokerID filter when not empty. Replicas are ordered by hostname, then port.
func (v *Views) replicaSeries(ctx context.Context, from, to time.Time, bucketMinutes int, hostname, brokerID string) ([]Replica, error) {
	samples, err := v.brokerSamples(ctx, from, to, hostname, brokerID)
	if err != nil {
		return nil, engine.OpFailed("analytics", err)
	}
	width := time.Duration(bucketMinutes) * time.Minute
	idx := map[string]int{}
	var out []Replica
	for _, s := range samples {
		i, ok := idx[s.BrokerID]
		if !ok {
			i = len(out)
			idx[s.BrokerID] = i
			out = append(out, Replica{BrokerID: s.BrokerID, Hostname: s.Hostname, Port: s.Port, PID: s.PID})
		}
		r := &out[i]
		r.LastSeen = s.At
		bt := s.At.UTC().Truncate(width)
		if n := len(r.Buckets); n == 0 || !r.Buckets[n-1].Bucket.Equal(bt) {
			r.Buckets = append(r.Buckets, ReplicaBucket{Bucket: bt})
		}
		b := &r.Buckets[len(r.Buckets)-1]
		b.Samples++
		b.CPUUser.add(s.CPUUserPct)
		b.CPUSys.add(s.CPUSysPct)
		b.RSS.add(s.RSSMB)
		b.Goroutines.add(float64(s.Goroutines))
		b.SchedLagAvg.add(s.SchedLagAvgMs)
		b.SchedLagMax.add(s.SchedLagMaxMs)
		b.PoolSize.add(float64(s.PoolSize))
		b.PoolIdle.add(float64(s.PoolIdle))
		b.PoolActive.add(float64(s.PoolActive))
		b.PoolWaiting.add(float64(s.PoolWaiting))
		b.Parked.add(float64(s.Parked))
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Hostname != out[b].Hostname {
			return out[a].Hostname < out[b].Hostname
		}
		return out[a].Port < out[b].Port
	})
	return out, nil
}

// ParkedPoint is the most long-polls one broker had parked on one queue within one bucket.
type ParkedPoint struct {
	Bucket             time.Time
	Queue              string
	Hostname, BrokerID string
	Parked             int
}

// parkedSeries reads the parked long-polls per bucket, queue and broker between from and to; queue ""
// = every queue. Newest bucket first.
func (v *Views) parkedSeries(ctx context.Context, from, to time.Time, bucketMinutes int, queue string) ([]ParkedPoint, error) {
	samples, err := v.brokerSamples(ctx, from, to, "", "")
	if err != nil {
		return nil, engine.OpFailed("analytics", err)
	}
	width := time.Duration(bucketMinutes) * time.Minute
	type key struct {
		b        time.Time
		q, h, id string
	}
	peak := map[key]int{}
	for _, s := range samples {
		for q, n := range s.ParkedByQueue {
			if queue != "" && q != queue {
				continue
			}
			k := key{s.At.UTC().Truncate(width), q, s.Hostname, s.BrokerID}
			peak[k] = max(peak[k], n)
		}
	}
	out := make([]ParkedPoint, 0, len(peak))
	for k, n := range peak {
		out = append(out, ParkedPoint{Bucket: k.b, Queue: k.q, Hostname: k.h, BrokerID: k.id, Parked: n})
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Bucket.Equal(out[b].Bucket) {
			return out[a].Bucket.After(out[b].Bucket)
		}
		if out[a].Queue != out[b].Queue {
			return out[a].Queue < out[b].Queue
		}
		return out[a].BrokerID < out[b].BrokerID
	})
	return out, nil
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// WorkerPoint is one bucket of the cluster: operation counters summed over queues and brokers, and the
// brokers' samples (scheduler latency averaged, pool figures summed).
type WorkerPoint struct {
	Timestamp         string   `json:"timestamp"`
	PushMessages      int64    `json:"pushMessages"`
	PopMessages       int64    `json:"popMessages"`
	AckMessages       int64    `json:"ackMessages"`
	PushRequests      int64    `json:"pushRequests"`
	PopRequests       int64    `json:"popRequests"`
	AckRequests       int64    `json:"ackRequests"`
	JobsDone          int64    `json:"jobsDone"`
	PushPerSecond     float64  `json:"pushPerSecond"`
	PopPerSecond      float64  `json:"popPerSecond"`
	AckPerSecond      float64  `json:"ackPerSecond"`
	AvgLagMs          float64  `json:"avgLagMs"`
	MaxLagMs          int64    `json:"maxLagMs"`
	LagCount          int64    `json:"lagCount"`
	DBErrors          int64    `json:"dbErrors"`
	AckSuccess        int64    `json:"ackSuccess"`
	AckFailed         int64    `json:"ackFailed"`
	DLQCount          int64    `json:"dlqCount"`
	BackoffSize       int64    `json:"backoffSize"`
	AvgEventLoopLagMs *float64 `json:"avgEventLoopLagMs,omitempty"`
	MaxEventLoopLagMs *float64 `json:"maxEventLoopLagMs,omitempty"`
	AvgFreeSlots      *float64 `json:"avgFreeSlots,omitempty"`
	MinFreeSlots      *float64 `json:"minFreeSlots,omitempty"`
	DBConnections     *float64 `json:"dbConnections,omitempty"`
	AvgJobQueueSize   *float64 `json:"avgJobQueueSize,omitempty"`
	MaxJobQueueSize   *float64 `json:"maxJobQueueSize,omitempty"`
}

// WorkerStatus is one broker's latest sample.
type WorkerStatus struct {
	WorkerID          string  `json:"workerId"`
	Hostname          string  `json:"hostname"`
	Port              int     `json:"port"`
	PID               int     `json:"pid"`
	AvgEventLoopLagMs float64 `json:"avgEventLoopLagMs"`
	MaxEventLoopLagMs float64 `json:"maxEventLoopLagMs"`
	FreeSlots         float64 `json:"freeSlots"`
	DBConnections     float64 `json:"dbConnections"`
	JobQueueSize      float64 `json:"jobQueueSize"`
	CPUUserPct        float64 `json:"cpuUserPct"`
	CPUSysPct         float64 `json:"cpuSysPct"`
	RSSMB             float64 `json:"rssMb"`
	Goroutines        float64 `json:"goroutines"`
	Parked            float64 `json:"parked"`
	LastSeen          string  `json:"lastSeen"`
}

// QueueLagSummary is one queue's pops and lag over the window.
type QueueLagSummary struct {
	QueueName string  `json:"queueName"`
	PopCount  int64   `json:"popCount"`
	AvgLagMs  float64 `json:"avgLagMs"`
	MaxLagMs  int64   `json:"maxLagMs"`
}

// WorkerSummary totals the window.
type WorkerSummary struct {
	TotalPushMessages int64   `json:"totalPushMessages"`
	TotalPopMessages  int64   `json:"totalPopMessages"`
	TotalAckMessages  int64   `json:"totalAckMessages"`
	TotalPushRequests int64   `json:"totalPushRequests"`
	TotalPopRequests  int64   `json:"totalPopRequests"`
	TotalAckRequests  int64   `json:"totalAckRequests"`
	TotalAckFailed    int64   `json:"totalAckFailed"`
	TotalDLQ          int64   `json:"totalDlq"`
	AvgLagMs          float64 `json:"avgLagMs"`
	MaxLagMs          int64   `json:"maxLagMs"`
	AvgEventLoopLagMs float64 `json:"avgEventLoopLagMs"`
	MaxEventLoopLagMs float64 `json:"maxEventLoopLagMs"`
	PendingMessages   int64   `json:"pendingMessages"`
	WorkerCount       int     `json:"workerCount"`
}

// WorkerMetricsReport is /api/v1/analytics/worker-metrics, with the original's field names.
type WorkerMetricsReport struct {
	Window
	PointCount int               `json:"pointCount"`
	TimeSeries []WorkerPoint     `json:"timeSeries"`
	Workers    []WorkerStatus    `json:"workers"`
	Queues     []QueueLagSummary `json:"queues"`
	Summary    WorkerSummary     `json:"summary"`
}

// WorkerMetrics joins the operation counters with the brokers' samples per bucket; hostname and
// brokerID restrict the samples (the counters are always the cluster's).
func (v *Views) WorkerMetrics(ctx context.Context, from, to time.Time, hostname, brokerID string) (*WorkerMetricsReport, error) {
	w := window(from, to)
	bm := w.BucketMinutes
	reps, err := v.replicaSeries(ctx, from, to, bm, hostname, brokerID)
	if err != nil {
		return nil, err
	}
	series, err := v.queueOpsSeries(ctx, from, to, "", bm)
	if err != nil {
		return nil, err
	}
	type acc struct {
		ops                     store.QueueOps
		lagAvg, lagMax          float64
		lagN                    int
		freeAvg, freeMin, conns float64
		jobAvg, jobMax          float64
		sampled                 bool
	}
	pts := map[time.Time]*acc{}
	at := func(t time.Time) *acc {
		p := pts[t]
		if p == nil {
			p = &acc{}
			pts[t] = p
		}
		return p
	}
	perQueue := map[string]*store.QueueOps{}
	var total store.QueueOps
	for _, o := range series {
		at(o.Bucket.UTC()).ops.Add(o.QueueOps)
		total.Add(o.QueueOps)
		q := perQueue[o.Queue]
		if q == nil {
			q = &store.QueueOps{Queue: o.Queue}
			perQueue[o.Queue] = q
		}
		q.Add(o.QueueOps)
	}
	out := &WorkerMetricsReport{Window: w, Workers: []WorkerStatus{}}
	var lagSum, lagMax float64
	for _, rp := range reps {
		for _, b := range rp.Buckets {
			p := at(b.Bucket)
			freeMin := b.PoolSize.Min - b.PoolActive.Max
			if !p.sampled || freeMin < p.freeMin {
				p.freeMin = freeMin
			}
			p.sampled = true
			p.lagAvg += b.SchedLagAvg.Avg
			p.lagMax = max(p.lagMax, b.SchedLagMax.Max)
			p.lagN++
			p.freeAvg += b.PoolSize.Avg - b.PoolActive.Avg
			p.conns += b.PoolActive.Avg + b.PoolIdle.Avg
			p.jobAvg += b.PoolWaiting.Avg
			p.jobMax = max(p.jobMax, b.PoolWaiting.Max)
			lagMax = max(lagMax, b.SchedLagMax.Max)
		}
		if n := len(rp.Buckets); n > 0 {
			l := rp.Buckets[n-1]
			lagSum += l.SchedLagAvg.Avg
			out.Workers = append(out.Workers, WorkerStatus{WorkerID: rp.BrokerID, Hostname: rp.Hostname, Port: rp.Port, PID: rp.PID,
				AvgEventLoopLagMs: round2(l.SchedLagAvg.Avg), MaxEventLoopLagMs: round2(l.SchedLagMax.Max),
				FreeSlots: l.PoolSize.Last - l.PoolActive.Last, DBConnections: l.PoolActive.Last + l.PoolIdle.Last,
				JobQueueSize: l.PoolWaiting.Last, CPUUserPct: round2(l.CPUUser.Last), CPUSysPct: round2(l.CPUSys.Last),
				RSSMB: round2(l.RSS.Last), Goroutines: l.Goroutines.Last, Parked: l.Parked.Last, LastSeen: engine.ISOMillis(rp.LastSeen)})
		}
	}
	keys := make([]time.Time, 0, len(pts))
	for k := range pts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].Before(keys[b]) })
	secs := float64(bm * 60)
	f := func(v float64) *float64 { v = round2(v); return &v }
	out.TimeSeries = make([]WorkerPoint, len(keys))
	for i, k := range keys {
		p, o := pts[k], pts[k].ops
		acks := o.AckSuccess + o.AckFailed
		w := WorkerPoint{Timestamp: engine.ISOMillis(k), PushMessages: o.PushMessages, PopMessages: o.PopMessages, AckMessages: acks,
			PushRequests: o.PushRequests, PopRequests: o.PopRequests, AckRequests: acks, JobsDone: o.PushRequests + o.PopRequests + acks,
			PushPerSecond: float64(o.PushMessages) / secs, PopPerSecond: float64(o.PopMessages) / secs, AckPerSecond: float64(acks) / secs,
			AvgLagMs: ratio(o.LagSumMs, o.LagCount), MaxLagMs: o.LagMaxMs, LagCount: o.LagCount,
			AckSuccess: o.AckSuccess, AckFailed: o.AckFailed, DLQCount: o.DLQ}
		if p.sampled {
			w.AvgEventLoopLagMs, w.MaxEventLoopLagMs = f(p.lagAvg/float64(p.lagN)), f(p.lagMax)
			w.AvgFreeSlots, w.MinFreeSlots, w.DBConnections = f(p.freeAvg), f(p.freeMin), f(p.conns)
			w.AvgJobQueueSize, w.MaxJobQueueSize = f(p.jobAvg), f(p.jobMax)
		}
		out.TimeSeries[i] = w
	}
	out.PointCount = len(out.TimeSeries)
	out.Queues = make([]QueueLagSummary, 0, len(perQueue))
	for _, o := range perQueue {
		out.Queues = append(out.Queues, QueueLagSummary{QueueName: o.Queue, PopCount: o.PopMessages,
			AvgLagMs: ratio(o.LagSumMs, o.LagCount), MaxLagMs: o.LagMaxMs})
	}
	sort.Slice(out.Queues, func(a, b int) bool { return out.Queues[a].QueueName < out.Queues[b].QueueName })
	acks := total.AckSuccess + total.AckFailed
	out.Summary = WorkerSummary{TotalPushMessages: total.PushMessages, TotalPopMessages: total.PopMessages, TotalAckMessages: acks,
		TotalPushRequests: total.PushRequests, TotalPopRequests: total.PopRequests, TotalAckRequests: acks,
		TotalAckFailed: total.AckFailed, TotalDLQ: total.DLQ, AvgLagMs: ratio(total.LagSumMs, total.LagCount), MaxLagMs: total.LagMaxMs,
		MaxEventLoopLagMs: round2(lagMax), PendingMessages: max(total.PushMessages-acks, 0), WorkerCount: len(out.Workers)}
	if len(out.Workers) > 0 {
		out.Summary.AvgEventLoopLagMs = round2(lagSum / float64(len(out.Workers)))
	}
	return out, nil
}

// SystemPoint is one broker's samples in one bucket; metric keys are snake_case as in the original.
type SystemPoint struct {
	Timestamp   string                    `json:"timestamp"`
	SampleCount int                       `json:"sampleCount"`
	Metrics     map[string]map[string]Agg `json:"metrics"`
}

// SystemReplica is one broker process and its series.
type SystemReplica struct {
	Hostname   string        `json:"hostname"`
	Port       int           `json:"port"`
	WorkerID   string        `json:"workerId"`
	PID        int           `json:"pid"`
	LastSeen   string        `json:"lastSeen"`
	TimeSeries []SystemPoint `json:"timeSeries"`
}

// SystemMetricsReport is /api/v1/analytics/system-metrics.
type SystemMetricsReport struct {
	TimeRange     TimeRange       `json:"timeRange"`
	Replicas      []SystemReplica `json:"replicas"`
	ReplicaCount  int             `json:"replicaCount"`
	BucketMinutes int             `json:"bucketMinutes"`
	PointCount    int             `json:"pointCount"`
}

// SystemMetrics gives each broker's CPU, memory, pool and scheduler series.
func (v *Views) SystemMetrics(ctx context.Context, from, to time.Time, hostname, brokerID string) (*SystemMetricsReport, error) {
	bm := bucketMinutes(to.Sub(from))
	reps, err := v.replicaSeries(ctx, from, to, bm, hostname, brokerID)
	if err != nil {
		return nil, err
	}
	out := &SystemMetricsReport{TimeRange: timeRange(from, to), BucketMinutes: bm, Replicas: make([]SystemReplica, len(reps)),
		ReplicaCount: len(reps)}
	for i, rp := range reps {
		r := SystemReplica{Hostname: rp.Hostname, Port: rp.Port, WorkerID: rp.BrokerID, PID: rp.PID, LastSeen: engine.ISOMillis(rp.LastSeen),
			TimeSeries: make([]SystemPoint, len(rp.Buckets))}
		for j, b := range rp.Buckets {
			r.TimeSeries[j] = SystemPoint{Timestamp: engine.ISOMillis(b.Bucket), SampleCount: b.Samples, Metrics: map[string]map[string]Agg{
				"cpu":        {"user_pct": b.CPUUser, "system_pct": b.CPUSys},
				"memory":     {"rss_mb": b.RSS},
				"database":   {"pool_size": b.PoolSize, "pool_idle": b.PoolIdle, "pool_active": b.PoolActive},
				"threadpool": {"db_queue_size": b.PoolWaiting, "goroutines": b.Goroutines, "sched_lag_avg_ms": b.SchedLagAvg, "sched_lag_max_ms": b.SchedLagMax},
				"registries": {"parked": b.Parked},
			}}
		}
		out.PointCount += len(r.TimeSeries)
		out.Replicas[i] = r
	}
	return out, nil
}

// ParkedRow is one row of /api/v1/analytics/queue-parked-replicas.
type ParkedRow struct {
	Bucket      string `json:"bucket"`
	QueueName   string `json:"queueName"`
	Hostname    string `json:"hostname"`
	WorkerID    string `json:"workerId"`
	ParkedCount int    `json:"parkedCount"`
}

// ReplicaID names one broker.
type ReplicaID struct {
	Hostname string `json:"hostname"`
	WorkerID string `json:"workerId"`
}

// ParkedReport is /api/v1/analytics/queue-parked-replicas.
type ParkedReport struct {
	Window
	Series   []ParkedRow `json:"series"`
	Replicas []ReplicaID `json:"replicas"`
}

// ParkedReplicas reports the parked long-polls per bucket, queue and broker.
func (v *Views) ParkedReplicas(ctx context.Context, from, to time.Time, queue string) (*ParkedReport, error) {
	w := window(from, to)
	pts, err := v.parkedSeries(ctx, from, to, w.BucketMinutes, queue)
	if err != nil {
		return nil, err
	}
	out := &ParkedReport{Window: w, Series: make([]ParkedRow, len(pts)), Replicas: []ReplicaID{}}
	seen := map[string]bool{}
	for i, p := range pts {
		out.Series[i] = ParkedRow{Bucket: engine.ISOMillis(p.Bucket), QueueName: p.Queue, Hostname: p.Hostname, WorkerID: p.BrokerID, ParkedCount: p.Parked}
		if !seen[p.BrokerID] {
			seen[p.BrokerID] = true
			out.Replicas = append(out.Replicas, ReplicaID{Hostname: p.Hostname, WorkerID: p.BrokerID})
		}
	}
	return out, nil
}

// brokerSamples reads the broker samples between from and to; hostname and brokerID filter when not
// empty.
func (v *Views) brokerSamples(ctx context.Context, from, to time.Time, hostname, brokerID string) ([]store.BrokerSample, error) {
	var out []store.BrokerSample
	err := v.read(ctx, func(st *store.Store) (err error) {
		out, err = st.Analytics().BrokerSamples(ctx, from, to, hostname, brokerID)
		return err
	})
	return out, err
}
