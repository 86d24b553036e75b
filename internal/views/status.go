package views

import (
	"context"
	"slices"
	"time"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// StatusFilter narrows /status to a window and to queues by name, namespace or task ("" = any).
type StatusFilter struct {
	From, To               time.Time
	Queue, Namespace, Task string
}

// ThroughputPoint is one bucket of the dashboard's throughput series.
type ThroughputPoint struct {
	Timestamp          string  `json:"timestamp"`
	Ingested           int64   `json:"ingested"`
	Processed          int64   `json:"processed"`
	PopMessages        int64   `json:"popMessages"`
	IngestedPerSecond  float64 `json:"ingestedPerSecond"`
	ProcessedPerSecond float64 `json:"processedPerSecond"`
	PopPerSecond       float64 `json:"popPerSecond"`
	AvgLagMs           float64 `json:"avgLagMs"`
	MaxLagMs           int64   `json:"maxLagMs"`
	AckFailed          int64   `json:"ackFailed"`
	DLQCount           int64   `json:"dlqCount"`
}

// StatusQueue is one queue of the dashboard summary.
type StatusQueue struct {
	QueueRef
	Partitions    int64 `json:"partitions"`
	TotalConsumed int64 `json:"totalConsumed"`
}

// StatusMessages are the message totals with request counts and messages per request.
type StatusMessages struct {
	Counts
	Requests        RequestCounts `json:"requests"`
	BatchEfficiency struct {
		Push float64 `json:"push"`
		Pop  float64 `json:"pop"`
		Ack  float64 `json:"ack"`
	} `json:"batchEfficiency"`
}

// RequestCounts count push, pop and ack requests.
type RequestCounts struct {
	Push int64 `json:"push"`
	Pop  int64 `json:"pop"`
	Ack  int64 `json:"ack"`
}

// LeaseTotals count the live leases.
type LeaseTotals struct {
	Active               int64 `json:"active"`
	PartitionsWithLeases int64 `json:"partitionsWithLeases"`
	TotalBatchSize       int64 `json:"totalBatchSize"`
}

// ErrorCount is one dead-letter error text and how many dead letters carry it.
type ErrorCount struct {
	Error string `json:"error"`
	Count int64  `json:"count"`
}

// DLQTotals count the dead letters and their most frequent errors.
type DLQTotals struct {
	TotalMessages      int64        `json:"totalMessages"`
	AffectedPartitions int64        `json:"affectedPartitions"`
	TopErrors          []ErrorCount `json:"topErrors"`
}

// StatusReport is the dashboard summary of /status.
type StatusReport struct {
	Window
	PointCount      int               `json:"pointCount"`
	Throughput      []ThroughputPoint `json:"throughput"`
	Queues          []StatusQueue     `json:"queues"`
	Messages        StatusMessages    `json:"messages"`
	Leases          LeaseTotals       `json:"leases"`
	DeadLetterQueue DLQTotals         `json:"deadLetterQueue"`
	StatsAge        int64             `json:"statsAge"`
}

// Status builds the dashboard summary: throughput series, totals, leases and dead letters.
func (v *Views) Status(ctx context.Context, f StatusFilter) (*StatusReport, error) {
	qs, err := v.listQueues(ctx, QueueFilter{Namespace: f.Namespace, Task: f.Task, Limit: allRows})
	if err != nil {
		return nil, err
	}
	w := window(f.From, f.To)
	bm := w.BucketMinutes
	series, err := v.queueOpsSeries(ctx, f.From, f.To, f.Queue, bm)
	if err != nil {
		return nil, err
	}
	var leases store.LeaseSummary
	var dlq store.DLQSummary
	err = v.read(ctx, func(st *store.Store) (err error) {
		leases, dlq, err = st.Analytics().Overview(ctx)
		return err
	})
	if err != nil {
		return nil, engine.OpFailed("overview", err)
	}
	r := &StatusReport{Window: w, StatsAge: statsAge(qs),
		Queues: make([]StatusQueue, 0, len(qs)),
		Leases: LeaseTotals{Active: leases.Active, PartitionsWithLeases: leases.Partitions, TotalBatchSize: leases.Messages},
		DeadLetterQueue: DLQTotals{TotalMessages: dlq.Total, AffectedPartitions: dlq.Partitions,
			TopErrors: make([]ErrorCount, len(dlq.TopErrors))}}
	for i, x := range dlq.TopErrors {
		r.DeadLetterQueue.TopErrors[i] = ErrorCount{Error: x.Error, Count: x.Count}
	}
	for _, q := range qs {
		if f.Queue != "" && q.Name != f.Queue {
			continue
		}
		r.Messages.add(summaryCounts(q))
		r.Queues = append(r.Queues, StatusQueue{QueueRef: queueRef(q.ID, q.Name, q.Namespace, q.Task), Partitions: q.Partitions,
			TotalConsumed: q.TotalConsumed})
	}
	var push, pop, ack int64
	for _, p := range series {
		push, pop, ack = push+p.PushMessages, pop+p.PopMessages, ack+p.AckSuccess+p.AckFailed
		r.Messages.Requests.Push += p.PushRequests
		r.Messages.Requests.Pop += p.PopRequests
	}
	r.Messages.Requests.Ack = ack
	r.Messages.BatchEfficiency.Push = ratio(push, r.Messages.Requests.Push)
	r.Messages.BatchEfficiency.Pop = ratio(pop, r.Messages.Requests.Pop)
	r.Messages.BatchEfficiency.Ack = 1
	secs := float64(bm * 60)
	pts := collapse(series)
	r.Throughput = make([]ThroughputPoint, len(pts))
	for i, p := range pts {
		r.Throughput[i] = ThroughputPoint{Timestamp: engine.ISOMillis(p.Bucket), Ingested: p.PushMessages,
			Processed: p.AckSuccess + p.AckFailed, PopMessages: p.PopMessages, IngestedPerSecond: float64(p.PushMessages) / secs,
			ProcessedPerSecond: float64(p.AckSuccess+p.AckFailed) / secs, PopPerSecond: float64(p.PopMessages) / secs,
			AvgLagMs: ratio(p.LagSumMs, p.LagCount), MaxLagMs: p.LagMaxMs, AckFailed: p.AckFailed, DLQCount: p.DLQ}
	}
	r.PointCount = len(r.Throughput)
	return r, nil
}

// LagStats summarise a set of lags.
type LagStats struct {
	Avg    float64 `json:"avg"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func lagStats(v []float64) LagStats {
	if len(v) == 0 {
		return LagStats{}
	}
	v = slices.Clone(v)
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return LagStats{Avg: sum / float64(len(v)), Median: med, Min: v[0], Max: v[len(v)-1]}
}

// Overview is the system summary: totals, lag per queue (in seconds and in messages) and recent throughput.
type Overview struct {
	Queues     int    `json:"queues"`
	Partitions int64  `json:"partitions"`
	Namespaces int    `json:"namespaces"`
	Tasks      int    `json:"tasks"`
	Messages   Counts `json:"messages"`
	Lag        struct {
		Time   LagStats `json:"time"`
		Offset LagStats `json:"offset"`
	} `json:"lag"`
	Throughput struct {
		IngestedPerSecond  float64 `json:"ingestedPerSecond"`
		ProcessedPerSecond float64 `json:"processedPerSecond"`
	} `json:"throughput"`
	Timestamp string `json:"timestamp"`
	StatsAge  int64  `json:"statsAge"`
}

// Overview summarises every queue; throughput is averaged over the last five minutes.
func (v *Views) Overview(ctx context.Context) (*Overview, error) {
	qs, err := v.listQueues(ctx, QueueFilter{Limit: allRows})
	if err != nil {
		return nil, err
	}
	o := &Overview{Queues: len(qs), StatsAge: statsAge(qs)}
	ns, tasks := map[string]bool{}, map[string]bool{}
	var timeLag, offLag []float64
	now := time.Now()
	for _, q := range qs {
		o.Messages.add(summaryCounts(q))
		o.Partitions += q.Partitions
		if q.Namespace != "" {
			ns[q.Namespace] = true
		}
		if q.Task != "" {
			tasks[q.Task] = true
		}
		offLag = append(offLag, float64(q.Pending+q.Processing))
		if q.OldestPendingAt != nil {
			timeLag = append(timeLag, now.Sub(*q.OldestPendingAt).Seconds())
		} else {
			timeLag = append(timeLag, 0)
		}
	}
	o.Namespaces, o.Tasks = len(ns), len(tasks)
	o.Lag.Time, o.Lag.Offset = lagStats(timeLag), lagStats(offLag)
	ops, err := v.queueOpsSeries(ctx, now.Add(-5*time.Minute), now, "", 5)
	if err != nil {
		return nil, err
	}
	var pushed, acked int64
	for _, p := range ops {
		pushed += p.PushMessages
		acked += p.AckSuccess + p.AckFailed
	}
	o.Throughput.IngestedPerSecond, o.Throughput.ProcessedPerSecond = float64(pushed)/300, float64(acked)/300
	o.Timestamp = engine.ISOMillis(now)
	return o, nil
}

// BufferStatus is the disk spool's state; DBHealthy is a database round-trip made for the answer.
type BufferStatus struct {
	Pending      int64 `json:"pending"`
	Failed       int64 `json:"failed"`
	DBHealthy    bool  `json:"dbHealthy"`
	SpoolEnabled bool  `json:"spoolEnabled"`
}

// Buffers reports the disk spool and whether PostgreSQL answers right now.
func (v *Views) Buffers(ctx context.Context) BufferStatus {
	b := BufferStatus{DBHealthy: v.st.Ping(ctx) == nil, SpoolEnabled: v.spool != nil}
	if v.spool != nil {
		b.Pending, b.Failed = v.spool.Pending(), v.spool.Failed()
	}
	return b
}
