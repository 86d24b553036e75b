package httpapi

import (
	"encoding/json"
	"net/http"
	"runtime"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

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

func (s *Server) handleStatusQueues(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 100)
	if err != nil {
		return err
	}
	qf := r.URL.Query()
	qs, err := s.eng.ListQueues(r.Context(), store.ListQueuesParams{Namespace: qf.Get("namespace"), Task: qf.Get("task"),
		Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	out := make([]queueListItem, len(qs))
	for i, q := range qs {
		out[i] = listItem(q)
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": out, "pagination": map[string]int{"limit": limit, "offset": offset},
		"statsAge": statsAge(qs)})
	return nil
}

func (s *Server) handleStatusQueue(w http.ResponseWriter, r *http.Request) error {
	q, parts, tot, err := s.queueDetail(r, r.PathValue("queue"))
	if err != nil {
		return err
	}
	ps := make([]map[string]any, len(parts))
	for i, p := range parts {
		ps[i] = map[string]any{"id": p.ID, "name": p.Name, "createdAt": p.CreatedAt, "messages": p.Stats, "stats": p.Stats,
			"cursor": map[string]int64{"totalConsumed": p.TotalConsumed}, "lastActivity": p.LastActivity,
			"oldestMessage": p.OldestMessage, "newestMessage": p.NewestMessage}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"queue": map[string]any{"id": q.ID.String(), "name": q.Name, "namespace": q.Namespace, "task": q.Task,
			"priority": q.Priority, "createdAt": ts(q.CreatedAt),
			"config": map[string]any{"leaseTime": q.LeaseTime, "retryLimit": q.RetryLimit, "retryDelay": q.RetryDelay,
				"ttl": q.TTL, "maxQueueSize": q.MaxSize, "deadLetterQueue": q.DeadLetterQueue,
				"retentionEnabled": q.RetentionEnabled, "retentionSeconds": q.RetentionSeconds,
				"completedRetentionSeconds": q.CompletedRetentionSeconds, "encryptionEnabled": q.EncryptionEnabled}},
		"partitions": ps,
		"totals": map[string]any{"messages": tot, "total": tot.Total, "pending": tot.Pending, "processing": tot.Processing,
			"completed": tot.Completed, "failed": 0, "deadLetter": tot.DeadLetter},
	})
	return nil
}

func (s *Server) handleStatusQueueMessages(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("queue")
	if _, err := s.eng.QueueInfo(r.Context(), name); err != nil {
		if isNotFound(err) {
			return notFound("Queue not found: " + name)
		}
		return err
	}
	p, err := messageListing(r, name, 50)
	if err != nil {
		return err
	}
	rows, err := s.eng.ListMessages(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(rows))
	for i, m := range rows {
		out[i] = map[string]any{"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
			"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition, "status": m.Status,
			"createdAt": ts(m.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleStatusAnalytics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, 24*time.Hour)
	if err != nil {
		return err
	}
	interval := r.URL.Query().Get("interval")
	bm := map[string]int{"": 60, "minute": 1, "hour": 60, "day": 1440}
	m, ok := bm[interval]
	if !ok {
		return badRequest("interval must be minute, hour or day")
	}
	if interval == "" {
		interval = "hour"
	}
	series, err := s.eng.QueueOpsSeries(r.Context(), from, to, r.URL.Query().Get("queue"), m)
	if err != nil {
		return err
	}
	pts := collapse(series)
	out := make([]map[string]any, len(pts))
	for i, p := range pts {
		out[i] = map[string]any{"timestamp": ts(p.Bucket), "messages": p.PushMessages, "popped": p.PopMessages,
			"acked": p.AckSuccess + p.AckFailed}
	}
	writeJSON(w, http.StatusOK, map[string]any{"dataPoints": out, "interval": interval, "from": ts(from), "to": ts(to)})
	return nil
}

func (s *Server) handleStatusBuffers(w http.ResponseWriter, r *http.Request) error {
	var pending, failed int64
	if b := s.opt.Ops.Buffers; b != nil {
		pending, failed = b.Pending(), b.Failed()
	}
	healthy := s.eng.Ping(r.Context()) == nil
	writeJSON(w, http.StatusOK, map[string]any{"pending": pending, "failed": failed, "dbHealthy": healthy,
		"spoolEnabled": s.opt.Ops.Buffers != nil})
	return nil
}

func (s *Server) handleQueueLag(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	series, err := s.eng.QueueOpsSeries(r.Context(), from, to, r.URL.Query().Get("queue"), 1)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(series))
	for _, p := range series {
		if p.PopMessages == 0 {
			continue
		}
		out = append(out, map[string]any{"queueName": p.Queue, "popCount": p.PopMessages,
			"avgLagMs": ratio(p.LagSumMs, p.LagCount), "maxLagMs": p.LagMaxMs, "bucketTime": ts(p.Bucket)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleQueueOps(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	bm := bucketMinutes(to.Sub(from))
	series, err := s.eng.QueueOpsSeries(r.Context(), from, to, r.URL.Query().Get("queue"), bm)
	if err != nil {
		return err
	}
	secs := float64(bm * 60)
	out := make([]map[string]any, len(series))
	seen := map[string]bool{}
	var queues []string
	for i, p := range series {
		out[i] = map[string]any{"bucket": ts(p.Bucket), "queueName": p.Queue, "pushRequests": p.PushRequests,
			"pushMessages": p.PushMessages, "popRequests": p.PopRequests, "popMessages": p.PopMessages, "popEmpty": p.PopEmpty,
			"ackSuccess": p.AckSuccess, "ackFailed": p.AckFailed, "dlq": p.DLQ,
			"avgLagMs": ratio(p.LagSumMs, p.LagCount), "maxLagMs": p.LagMaxMs,
			"pushPerSecond": float64(p.PushMessages) / secs, "popPerSecond": float64(p.PopMessages) / secs,
			"ackPerSecond": float64(p.AckSuccess+p.AckFailed) / secs, "emptyPerSecond": float64(p.PopEmpty) / secs}
		if !seen[p.Queue] {
			seen[p.Queue] = true
			queues = append(queues, p.Queue)
		}
	}
	sort.Strings(queues)
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": map[string]string{"from": ts(from), "to": ts(to)},
		"bucketMinutes": bm, "series": out, "queues": queues})
	return nil
}

func (s *Server) handleRetentionAnalytics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, 24*time.Hour)
	if err != nil {
		return err
	}
	bm := bucketMinutes(to.Sub(from))
	pts, err := s.eng.RetentionSeries(r.Context(), from, to, bm)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(pts))
	totals := map[string]int64{}
	for i, p := range pts {
		out[i] = map[string]any{"bucket": ts(p.Bucket), "queueName": p.Queue, "type": p.Kind, "deleted": p.Deleted}
		totals[p.Kind] += p.Deleted
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": map[string]string{"from": ts(from), "to": ts(to)},
		"bucketMinutes": bm, "series": out, "totals": totals})
	return nil
}

// ---- traces

type traceBody struct {
	TransactionID json.RawMessage `json:"transactionId"`
	PartitionID   json.RawMessage `json:"partitionId"`
	ConsumerGroup json.RawMessage `json:"consumerGroup"`
	EventType     json.RawMessage `json:"eventType"`
	WorkerID      json.RawMessage `json:"workerId"`
	Data          json.RawMessage `json:"data"`
	TraceNames    json.RawMessage `json:"traceNames"`
}

func (s *Server) handleRecordTrace(w http.ResponseWriter, r *http.Request) error {
	var b traceBody
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &b); err != nil {
		return err
	}
	tx, ok1 := optString(b.TransactionID)
	pidS, ok2 := optString(b.PartitionID)
	if !ok1 || !ok2 || tx == "" || pidS == "" {
		return badRequest("transactionId and partitionId are required")
	}
	pid, ok := parseUUID(pidS)
	if !ok {
		return badRequest("partitionId must be a UUID")
	}
	if !present(b.Data) {
		return badRequest("data is required")
	}
	group, ok1 := optString(b.ConsumerGroup)
	ev, ok2 := optString(b.EventType)
	worker, ok3 := optString(b.WorkerID)
	if !ok1 || !ok2 || !ok3 {
		return badRequest("consumerGroup, eventType and workerId must be strings")
	}
	if ev == "" {
		ev = "info"
	}
	var names []string
	if present(b.TraceNames) {
		if one, ok := optString(b.TraceNames); ok {
			names = []string{one}
		} else if json.Unmarshal(b.TraceNames, &names) != nil {
			return badRequest("traceNames must be a string or an array of strings")
		}
	}
	id, err := s.eng.RecordTrace(r.Context(), store.TraceParams{PartitionID: pid, TransactionID: tx, EventType: ev,
		Data: b.Data, ConsumerGroup: group, WorkerID: worker, Names: names})
	if err != nil {
		if isNotFound(err) {
			return notFound("Message not found: " + pid.String() + "/" + tx)
		}
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "traceId": id.String()})
	return nil
}

func traceJSON(t store.Trace, full bool) map[string]any {
	names := t.Names
	if names == nil {
		names = []string{}
	}
	m := map[string]any{"id": t.ID.String(), "event_type": t.EventType, "data": json.RawMessage(t.Data),
		"consumer_group": textOrNil(t.ConsumerGroup.Valid, t.ConsumerGroup.String),
		"worker_id":      textOrNil(t.WorkerID.Valid, t.WorkerID.String), "created_at": ts(t.CreatedAt), "trace_names": names}
	if full {
		m["transaction_id"], m["partition_id"] = t.TransactionID, t.PartitionID.String()
		m["queue_name"], m["partition_name"] = t.Queue, t.Partition
		m["message_payload"] = json.RawMessage(t.Payload)
	}
	return m
}

func (s *Server) handleMessageTraces(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	ts, err := s.eng.MessageTraces(r.Context(), pid, tx)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ts))
	for i, t := range ts {
		out[i] = traceJSON(t, false)
	}
	writeJSON(w, http.StatusOK, map[string]any{"traces": out})
	return nil
}

func (s *Server) handleTracesByName(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 100)
	if err != nil {
		return err
	}
	ts, total, err := s.eng.TracesByName(r.Context(), r.PathValue("traceName"), min(limit, 10_000), offset)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ts))
	for i, t := range ts {
		out[i] = traceJSON(t, true)
	}
	writeJSON(w, http.StatusOK, map[string]any{"traces": out, "total": total,
		"pagination": map[string]int{"limit": limit, "offset": offset}})
	return nil
}

func (s *Server) handleTraceNames(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 50)
	if err != nil {
		return err
	}
	ns, total, err := s.eng.TraceNames(r.Context(), min(limit, 10_000), offset)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ns))
	for i, n := range ns {
		out[i] = map[string]any{"trace_name": n.Name, "trace_count": n.Traces, "message_count": n.Messages,
			"last_seen": ts(n.LastSeen)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"trace_names": out, "total": total,
		"pagination": map[string]int{"limit": limit, "offset": offset}})
	return nil
}

// ---- metrics

func (s *Server) handleMetricsJSON(w http.ResponseWriter, r *http.Request) error {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total, idle, waiting := s.eng.PoolStats()
	body := map[string]any{
		"database": map[string]any{"poolSize": total, "idleConnections": idle, "waitingRequests": waiting},
		"memory": map[string]any{"rss": ms.Sys, "heapTotal": ms.HeapSys, "heapUsed": ms.HeapAlloc, "external": 0,
			"arrayBuffers": 0},
		"cpu": map[string]any{"user": 0, "system": 0}, "goroutines": runtime.NumGoroutine(), "parked": s.eng.Parked(),
	}
	if m := s.opt.Ops.Metrics; m != nil {
		t := m.Totals()
		up := t.Uptime.Seconds()
		body["uptime"] = int64(up)
		body["requests"] = map[string]any{"total": t.Requests, "rate": float64(t.Requests) / max(up, 1)}
		body["messages"] = map[string]any{"total": t.Messages, "rate": float64(t.Messages) / max(up, 1)}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) handleMetricsPrometheus(w http.ResponseWriter, r *http.Request) error {
	if s.opt.Ops.Gatherer == nil {
		return notFound("metrics are not enabled")
	}
	w.Header().Set("Cache-Control", "no-cache")
	promhttp.HandlerFor(s.opt.Ops.Gatherer, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}
