package views

import (
	"context"
	"sort"
	"time"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// Analytics: the per-minute operation counters every broker flushes (queue_ops_history) and the
// retention history, bucketed and summed for the dashboard.

// TimeRange is the window a report covers.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func timeRange(from, to time.Time) TimeRange {
	return TimeRange{From: engine.ISOMillis(from), To: engine.ISOMillis(to)}
}

// Window heads every bucketed report: the range asked for and the bucket width that range gets, so the
// reports of one range bucket their series alike. Embedded first, its fields keep their place on the wire.
type Window struct {
	TimeRange     TimeRange `json:"timeRange"`
	BucketMinutes int       `json:"bucketMinutes"`
}

func window(from, to time.Time) Window {
	return Window{TimeRange: timeRange(from, to), BucketMinutes: bucketMinutes(to.Sub(from))}
}

// bucketMinutes picks the bucket width for a window: minutes up to two hours, up to six hours a bucket
// beyond two weeks.
func bucketMinutes(span time.Duration) int {
	switch {
	case span <= 2*time.Hour:
		return 1
	case span <= 12*time.Hour:
		return 5
	case span <= 48*time.Hour:
		return 15
	case span <= 14*24*time.Hour:
		return 60
	}
	return 360
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (v *Views) queueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]store.QueueOpsPoint, error) {
	var out []store.QueueOpsPoint
	err := v.read(ctx, func(st *store.Store) (err error) {
		out, err = st.Analytics().QueueOpsSeries(ctx, from, to, queue, bucketMinutes)
		return err
	})
	return out, engine.OpFailed("queue ops", err)
}

// collapse sums the per-queue points of each bucket.
func collapse(series []store.QueueOpsPoint) []store.QueueOpsPoint {
	var out []store.QueueOpsPoint
	idx := map[time.Time]int{}
	for _, p := range series {
		i, ok := idx[p.Bucket]
		if !ok {
			idx[p.Bucket] = len(out)
			out = append(out, store.QueueOpsPoint{Bucket: p.Bucket, QueueOps: store.QueueOps{}})
			i = len(out) - 1
		}
		out[i].Add(p.QueueOps)
	}
	return out
}

// IngestPoint is one bucket of /status/analytics.
type IngestPoint struct {
	Timestamp string `json:"timestamp"`
	Messages  int64  `json:"messages"`
	Popped    int64  `json:"popped"`
	Acked     int64  `json:"acked"`
}

// IngestReport is the ingest series by minute, hour or day.
type IngestReport struct {
	DataPoints []IngestPoint `json:"dataPoints"`
	Interval   string        `json:"interval"`
	From       string        `json:"from"`
	To         string        `json:"to"`
}

// Ingest sums pushes, pops and acks of every queue (or one) per interval: minute, hour (the default) or day.
func (v *Views) Ingest(ctx context.Context, from, to time.Time, queue, interval string) (*IngestReport, error) {
	m, ok := map[string]int{"": 60, "minute": 1, "hour": 60, "day": 1440}[interval]
	if !ok {
		return nil, engine.Invalid("interval must be minute, hour or day")
	}
	if interval == "" {
		interval = "hour"
	}
	series, err := v.queueOpsSeries(ctx, from, to, queue, m)
	if err != nil {
		return nil, err
	}
	pts := collapse(series)
	out := &IngestReport{DataPoints: make([]IngestPoint, len(pts)), Interval: interval, From: engine.ISOMillis(from), To: engine.ISOMillis(to)}
	for i, p := range pts {
		out.DataPoints[i] = IngestPoint{Timestamp: engine.ISOMillis(p.Bucket), Messages: p.PushMessages, Popped: p.PopMessages,
			Acked: p.AckSuccess + p.AckFailed}
	}
	return out, nil
}

// LagPoint is one queue's pop lag in one minute.
type LagPoint struct {
	QueueName  string  `json:"queueName"`
	PopCount   int64   `json:"popCount"`
	AvgLagMs   float64 `json:"avgLagMs"`
	MaxLagMs   int64   `json:"maxLagMs"`
	BucketTime string  `json:"bucketTime"`
}

// QueueLag lists the pop lag per queue and minute, skipping minutes without pops.
func (v *Views) QueueLag(ctx context.Context, from, to time.Time, queue string) ([]LagPoint, error) {
	series, err := v.queueOpsSeries(ctx, from, to, queue, 1)
	if err != nil {
		return nil, err
	}
	out := make([]LagPoint, 0, len(series))
	for _, p := range series {
		if p.PopMessages == 0 {
			continue
		}
		out = append(out, LagPoint{QueueName: p.Queue, PopCount: p.PopMessages, AvgLagMs: ratio(p.LagSumMs, p.LagCount),
			MaxLagMs: p.LagMaxMs, BucketTime: engine.ISOMillis(p.Bucket)})
	}
	return out, nil
}

// QueueOpsPoint is one queue's operation counters in one bucket, with their rates.
type QueueOpsPoint struct {
	Bucket         string  `json:"bucket"`
	QueueName      string  `json:"queueName"`
	PushRequests   int64   `json:"pushRequests"`
	PushMessages   int64   `json:"pushMessages"`
	PopRequests    int64   `json:"popRequests"`
	PopMessages    int64   `json:"popMessages"`
	PopEmpty       int64   `json:"popEmpty"`
	AckSuccess     int64   `json:"ackSuccess"`
	AckFailed      int64   `json:"ackFailed"`
	DLQ            int64   `json:"dlq"`
	AvgLagMs       float64 `json:"avgLagMs"`
	MaxLagMs       int64   `json:"maxLagMs"`
	PushPerSecond  float64 `json:"pushPerSecond"`
	PopPerSecond   float64 `json:"popPerSecond"`
	AckPerSecond   float64 `json:"ackPerSecond"`
	EmptyPerSecond float64 `json:"emptyPerSecond"`
}

// QueueOpsReport is the operation counters per queue and bucket.
type QueueOpsReport struct {
	Window
	Series []QueueOpsPoint `json:"series"`
	Queues []string        `json:"queues"`
}

// QueueOps reads the operation counters of every queue (or one), bucketed by the window's width.
func (v *Views) QueueOps(ctx context.Context, from, to time.Time, queue string) (*QueueOpsReport, error) {
	w := window(from, to)
	bm := w.BucketMinutes
	series, err := v.queueOpsSeries(ctx, from, to, queue, bm)
	if err != nil {
		return nil, err
	}
	secs := float64(bm * 60)
	out := &QueueOpsReport{Window: w, Series: make([]QueueOpsPoint, len(series))}
	for i, p := range series {
		out.Series[i] = QueueOpsPoint{Bucket: engine.ISOMillis(p.Bucket), QueueName: p.Queue, PushRequests: p.PushRequests,
			PushMessages: p.PushMessages, PopRequests: p.PopRequests, PopMessages: p.PopMessages, PopEmpty: p.PopEmpty,
			AckSuccess: p.AckSuccess, AckFailed: p.AckFailed, DLQ: p.DLQ,
			AvgLagMs: ratio(p.LagSumMs, p.LagCount), MaxLagMs: p.LagMaxMs,
			PushPerSecond: float64(p.PushMessages) / secs, PopPerSecond: float64(p.PopMessages) / secs,
			AckPerSecond: float64(p.AckSuccess+p.AckFailed) / secs, EmptyPerSecond: float64(p.PopEmpty) / secs}
	}
	out.Queues = engine.Distinct(series, func(p store.QueueOpsPoint) string { return p.Queue })
	sort.Strings(out.Queues)
	return out, nil
}

// RetentionPoint is what retention deleted from one queue in one bucket.
type RetentionPoint struct {
	Bucket    string `json:"bucket"`
	QueueName string `json:"queueName"`
	Type      string `json:"type"`
	Deleted   int64  `json:"deleted"`
}

// RetentionReport is the retention history with totals per kind of deletion.
type RetentionReport struct {
	Window
	Series []RetentionPoint `json:"series"`
	Totals map[string]int64 `json:"totals"`
}

// Retention reads the retention history, bucketed by the window's width.
func (v *Views) Retention(ctx context.Context, from, to time.Time) (*RetentionReport, error) {
	w := window(from, to)
	var pts []store.RetentionPoint
	err := v.read(ctx, func(st *store.Store) (err error) {
		pts, err = st.Analytics().RetentionSeries(ctx, from, to, w.BucketMinutes)
		return err
	})
	if err != nil {
		return nil, engine.OpFailed("retention history", err)
	}
	out := &RetentionReport{Window: w, Series: make([]RetentionPoint, len(pts)),
		Totals: map[string]int64{}}
	for i, p := range pts {
		out.Series[i] = RetentionPoint{Bucket: engine.ISOMillis(p.Bucket), QueueName: p.Queue, Type: p.Kind, Deleted: p.Deleted}
		out.Totals[p.Kind] += p.Deleted
	}
	return out, nil
}
