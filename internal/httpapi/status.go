package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/queen-go/queen/internal/store"
)

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	qf := r.URL.Query()
	qs, err := s.eng.ListQueues(ctx, store.ListQueuesParams{Namespace: qf.Get("namespace"), Task: qf.Get("task"), Limit: allRows})
	if err != nil {
		return err
	}
	bm := bucketMinutes(to.Sub(from))
	series, err := s.eng.QueueOpsSeries(ctx, from, to, qf.Get("queue"), bm)
	if err != nil {
		return err
	}
	leases, dlq, err := s.eng.Overview(ctx)
	if err != nil {
		return err
	}
	var tot counts
	queues := make([]map[string]any, 0, len(qs))
	for _, q := range qs {
		if n := qf.Get("queue"); n != "" && q.Name != n {
			continue
		}
		tot.add(summaryCounts(q))
		queues = append(queues, map[string]any{"id": q.ID.String(), "name": q.Name, "namespace": q.Namespace,
			"task": q.Task, "partitions": q.Partitions, "totalConsumed": q.TotalConsumed})
	}
	var push, pop, ack, pushReq, popReq, ackReq int64
	for _, p := range series {
		push, pop, ack = push+p.PushMessages, pop+p.PopMessages, ack+p.AckSuccess+p.AckFailed
		pushReq, popReq = pushReq+p.PushRequests, popReq+p.PopRequests
	}
	ackReq = ack
	topErrors := make([]map[string]any, len(dlq.TopErrors))
	for i, e := range dlq.TopErrors {
		topErrors[i] = map[string]any{"error": e.Error, "count": e.Count}
	}
	points := throughput(collapse(series), bm)
	writeJSON(w, http.StatusOK, map[string]any{
		"timeRange": map[string]string{"from": ts(from), "to": ts(to)}, "bucketMinutes": bm, "pointCount": len(points),
		"throughput": points, "queues": queues,
		"messages": map[string]any{"total": tot.Total, "pending": tot.Pending, "processing": tot.Processing,
			"completed": tot.Completed, "failed": 0, "deadLetter": tot.DeadLetter,
			"requests":        map[string]int64{"push": pushReq, "pop": popReq, "ack": ackReq},
			"batchEfficiency": map[string]float64{"push": ratio(push, pushReq), "pop": ratio(pop, popReq), "ack": 1}},
		"leases": map[string]int64{"active": leases.Active, "partitionsWithLeases": leases.Partitions,
			"totalBatchSize": leases.Messages},
		"deadLetterQueue": map[string]any{"totalMessages": dlq.Total, "affectedPartitions": dlq.Partitions, "topErrors": topErrors},
		"statsAge":        statsAge(qs),
	})
	return nil
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
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
		o := &out[i]
		o.PushRequests += p.PushRequests
		o.PushMessages += p.PushMessages
		o.PopRequests += p.PopRequests
		o.PopMessages += p.PopMessages
		o.PopEmpty += p.PopEmpty
		o.AckSuccess += p.AckSuccess
		o.AckFailed += p.AckFailed
		o.DLQ += p.DLQ
		o.LagSumMs += p.LagSumMs
		o.LagCount += p.LagCount
		o.LagMaxMs = max(o.LagMaxMs, p.LagMaxMs)
	}
	return out
}

func throughput(points []store.QueueOpsPoint, bm int) []map[string]any {
	secs := float64(bm * 60)
	out := make([]map[string]any, len(points))
	for i, p := range points {
		out[i] = map[string]any{"timestamp": ts(p.Bucket), "ingested": p.PushMessages, "processed": p.AckSuccess + p.AckFailed,
			"popMessages": p.PopMessages, "ingestedPerSecond": float64(p.PushMessages) / secs,
			"processedPerSecond": float64(p.AckSuccess+p.AckFailed) / secs, "popPerSecond": float64(p.PopMessages) / secs,
			"avgLagMs": ratio(p.LagSumMs, p.LagCount), "maxLagMs": p.LagMaxMs, "ackFailed": p.AckFailed, "dlqCount": p.DLQ}
	}
	return out
}

func (s *Server) handleStatusBuffers(w http.ResponseWriter, r *http.Request) error {
	var pending, failed int64
	if b := s.opt.Buffers; b != nil {
		pending, failed = b.Pending(), b.Failed()
	}
	healthy := s.eng.Ping(r.Context()) == nil
	writeJSON(w, http.StatusOK, map[string]any{"pending": pending, "failed": failed, "dbHealthy": healthy,
		"spoolEnabled": s.opt.Buffers != nil})
	return nil
}

// ---- traces

// ---- metrics

type stat4 struct {
	Avg    float64 `json:"avg"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func statsOf(v []float64) stat4 {
	if len(v) == 0 {
		return stat4{}
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
	return stat4{Avg: sum / float64(len(v)), Median: med, Min: v[0], Max: v[len(v)-1]}
}

func (s *Server) handleOverview(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	qs, err := s.eng.ListQueues(ctx, store.ListQueuesParams{Limit: allRows})
	if err != nil {
		return err
	}
	var tot counts
	var parts int64
	ns, tasks := map[string]bool{}, map[string]bool{}
	var timeLag, offLag []float64
	now := time.Now()
	for _, q := range qs {
		tot.add(summaryCounts(q))
		parts += q.Partitions
		if q.Namespace != "" {
			ns[q.Namespace] = true
		}
		if q.Task != "" {
			tasks[q.Task] = true
		}
		offLag = append(offLag, float64(q.Pending+q.Processing))
		if q.OldestPendingAt.Valid {
			timeLag = append(timeLag, now.Sub(q.OldestPendingAt.Time).Seconds())
		} else {
			timeLag = append(timeLag, 0)
		}
	}
	ops, err := s.eng.QueueOpsSeries(ctx, now.Add(-5*time.Minute), now, "", 5)
	if err != nil {
		return err
	}
	var pushed, acked int64
	for _, p := range ops {
		pushed += p.PushMessages
		acked += p.AckSuccess + p.AckFailed
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"queues": len(qs), "partitions": parts, "namespaces": len(ns), "tasks": len(tasks), "messages": tot,
		"lag":        map[string]stat4{"time": statsOf(timeLag), "offset": statsOf(offLag)},
		"throughput": map[string]float64{"ingestedPerSecond": float64(pushed) / 300, "processedPerSecond": float64(acked) / 300},
		"timestamp":  ts(now), "statsAge": statsAge(qs),
	})
	return nil
}
