package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// counts is the message breakdown used by every resource and status shape.
type counts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	DeadLetter int64 `json:"deadLetter"`
}

func (c *counts) add(o counts) {
	c.Total += o.Total
	c.Pending += o.Pending
	c.Processing += o.Processing
	c.Completed += o.Completed
	c.DeadLetter += o.DeadLetter
}

func partitionCounts(p store.PartitionCounts) counts {
	return counts{Total: p.Total, Pending: p.Total - p.Consumed - p.Processing, Processing: p.Processing,
		Completed: p.Consumed - p.DLQConsumed, DeadLetter: p.DeadLetter}
}

func summaryCounts(q store.QueueSummary) counts {
	return counts{Total: q.Total, Pending: q.Pending, Processing: q.Processing, Completed: q.Completed, DeadLetter: q.DeadLetter}
}

type shortCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
}

type queueListItem struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Namespace  string      `json:"namespace"`
	Task       string      `json:"task"`
	Priority   int32       `json:"priority"`
	CreatedAt  string      `json:"createdAt"`
	Partitions int64       `json:"partitions"`
	Messages   shortCounts `json:"messages"`
	StatsAt    any         `json:"statsAt"`
}

func listItem(q store.QueueSummary) queueListItem {
	return queueListItem{ID: q.ID.String(), Name: q.Name, Namespace: q.Namespace, Task: q.Task, Priority: q.Priority,
		CreatedAt: ts(q.CreatedAt), Partitions: q.Partitions,
		Messages: shortCounts{Total: q.Total, Pending: q.Pending, Processing: q.Processing},
		StatsAt:  tsOrNil(q.StatsAt.Valid, q.StatsAt.Time)}
}

// statsAge is the age in seconds of the oldest rolled-up row, -1 when the stats job never ran.
func statsAge(qs []store.QueueSummary) int64 {
	var oldest time.Time
	for _, q := range qs {
		if !q.StatsAt.Valid {
			return -1
		}
		if oldest.IsZero() || q.StatsAt.Time.Before(oldest) {
			oldest = q.StatsAt.Time
		}
	}
	if oldest.IsZero() {
		return -1
	}
	return int64(time.Since(oldest).Seconds())
}

const allRows = 100_000

func (s *Server) handleResourceQueues(w http.ResponseWriter, r *http.Request) error {
	qs, err := s.eng.ListQueues(r.Context(), store.ListQueuesParams{Limit: allRows})
	if err != nil {
		return err
	}
	out := make([]queueListItem, len(qs))
	for i, q := range qs {
		out[i] = listItem(q)
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": out, "statsAge": statsAge(qs)})
	return nil
}

type partitionDetail struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	CreatedAt      string `json:"createdAt"`
	Stats          counts `json:"stats"`
	OldestMessage  any    `json:"oldestMessage"`
	NewestMessage  any    `json:"newestMessage"`
	LastActivity   any    `json:"lastActivity"`
	TotalConsumed  int64  `json:"totalConsumed"`
	LastConsumedAt any    `json:"lastConsumedAt"`
}

// queueDetail reads a queue and counts its partitions exactly; 404 naming the queue when missing.
func (s *Server) queueDetail(r *http.Request, name string) (*store.QueueInfo, []partitionDetail, counts, error) {
	var tot counts
	q, err := s.eng.QueueInfo(r.Context(), name)
	if err != nil {
		if isNotFound(err) {
			return nil, nil, tot, notFound("Queue not found: " + name)
		}
		return nil, nil, tot, err
	}
	ps, err := s.eng.PartitionCounts(r.Context(), q.ID)
	if err != nil {
		return nil, nil, tot, err
	}
	out := make([]partitionDetail, len(ps))
	for i, p := range ps {
		c := partitionCounts(p)
		tot.add(c)
		last := p.LastPushAt
		if p.LastConsumedAt.Valid && (!last.Valid || p.LastConsumedAt.Time.After(last.Time)) {
			last = p.LastConsumedAt
		}
		out[i] = partitionDetail{ID: p.ID.String(), Name: p.Name, CreatedAt: ts(p.CreatedAt), Stats: c,
			OldestMessage: tsOrNil(p.Oldest.Valid, p.Oldest.Time), NewestMessage: tsOrNil(p.Newest.Valid, p.Newest.Time),
			LastActivity: tsOrNil(last.Valid, last.Time), TotalConsumed: p.TotalConsumed,
			LastConsumedAt: tsOrNil(p.LastConsumedAt.Valid, p.LastConsumedAt.Time)}
	}
	return q, out, tot, nil
}

func (s *Server) handleResourceQueue(w http.ResponseWriter, r *http.Request) error {
	q, parts, tot, err := s.queueDetail(r, r.PathValue("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": q.ID.String(), "name": q.Name, "namespace": q.Namespace,
		"task": q.Task, "createdAt": ts(q.CreatedAt), "partitions": parts, "totals": tot})
	return nil
}

type groupCount struct {
	queues, partitions, total, pending int64
}

func (s *Server) groupBy(r *http.Request, key func(store.QueueSummary) string) (map[string]*groupCount, []string, error) {
	qs, err := s.eng.ListQueues(r.Context(), store.ListQueuesParams{Limit: allRows})
	if err != nil {
		return nil, nil, err
	}
	m := map[string]*groupCount{}
	var keys []string
	for _, q := range qs {
		k := key(q)
		g := m[k]
		if g == nil {
			g = &groupCount{}
			m[k] = g
			keys = append(keys, k)
		}
		g.queues++
		g.partitions += q.Partitions
		g.total += q.Total
		g.pending += q.Pending
	}
	sort.Strings(keys)
	return m, keys, nil
}

func (s *Server) handleNamespaces(w http.ResponseWriter, r *http.Request) error {
	return s.writeGroups(w, r, "namespaces", "namespace", func(q store.QueueSummary) string { return q.Namespace })
}

func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) error {
	return s.writeGroups(w, r, "tasks", "task", func(q store.QueueSummary) string { return q.Task })
}

func (s *Server) writeGroups(w http.ResponseWriter, r *http.Request, list, field string, key func(store.QueueSummary) string) error {
	m, keys, err := s.groupBy(r, key)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		g := m[k]
		out = append(out, map[string]any{field: k, "queues": g.queues, "partitions": g.partitions,
			"messages": map[string]int64{"total": g.total, "pending": g.pending}})
	}
	writeJSON(w, http.StatusOK, map[string]any{list: out})
	return nil
}

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

// messageListing parses the filters shared by /messages and /status/queues/{queue}/messages.
func messageListing(r *http.Request, queue string, defLimit int) (store.ListMessagesParams, error) {
	qv := r.URL.Query()
	p := store.ListMessagesParams{Queue: queue, Partition: qv.Get("partition"), Namespace: qv.Get("ns"),
		Task: qv.Get("task"), Group: qv.Get("consumerGroup"), Status: qv.Get("status")}
	if p.Namespace == "" {
		p.Namespace = qv.Get("namespace")
	}
	switch p.Status {
	case "", "pending", "processing", "completed", "dead_letter":
	default:
		return p, badRequest("status must be one of pending, processing, completed, dead_letter")
	}
	var err error
	if p.Limit, p.Offset, err = queryPage(r, defLimit); err != nil {
		return p, err
	}
	p.Limit = min(p.Limit, 10_000)
	return p, nil
}

func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request) error {
	p, err := messageListing(r, r.URL.Query().Get("queue"), 200)
	if err != nil {
		return err
	}
	rows, err := s.eng.ListMessages(r.Context(), p)
	if err != nil {
		return err
	}
	group := p.Group
	if group == "" {
		group = engine.QueueMode
	}
	out := make([]map[string]any, len(rows))
	for i, m := range rows {
		out[i] = map[string]any{"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
			"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition,
			"namespace": m.Namespace, "task": m.Task, "status": m.Status, "consumerGroup": group,
			"traceId": uuidOrNil(m.TraceID.Valid, m.TraceID.Bytes), "producerSub": textOrNil(m.ProducerSub.Valid, m.ProducerSub.String),
			"queuePriority": m.Priority, "createdAt": ts(m.CreatedAt),
			"leaseExpiresAt": tsOrNil(m.LeaseExpiresAt.Valid, m.LeaseExpiresAt.Time)}
	}
	body := map[string]any{"messages": out, "consumerGroup": group,
		"pagination": map[string]int{"limit": p.Limit, "offset": p.Offset}}
	if p.Queue != "" {
		groups, err := s.eng.QueueGroups(r.Context(), p.Queue)
		if err != nil {
			return err
		}
		body["mode"] = modeOf(groups)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// modeOf describes how a queue is consumed: by queue mode, by named groups (bus), both, or not yet.
func modeOf(groups []string) map[string]any {
	hasQ := slices.Contains(groups, engine.QueueMode)
	bus := len(groups)
	if hasQ {
		bus--
	}
	typ := "none"
	switch {
	case hasQ && bus > 0:
		typ = "hybrid"
	case hasQ:
		typ = "queue"
	case bus > 0:
		typ = "bus"
	}
	return map[string]any{"hasQueueMode": hasQ, "busGroupsCount": bus, "type": typ}
}

func messageAddress(r *http.Request) (uuid.UUID, string, error) {
	pid, ok := parseUUID(r.PathValue("partitionId"))
	if !ok {
		return uuid.Nil, "", badRequest("partitionId must be a UUID")
	}
	return pid, r.PathValue("transactionId"), nil
}

func (s *Server) handleGetMessage(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	m, cs, err := s.eng.GetMessage(r.Context(), pid, tx)
	if err != nil {
		if isNotFound(err) {
			return notFound("Message not found: " + pid.String() + "/" + tx)
		}
		return err
	}
	groups := make([]map[string]any, len(cs))
	names := make([]string, len(cs))
	status, consumedBy, processing, dead := "pending", 0, false, false
	var errMsg, retries any
	for i, c := range cs {
		names[i] = c.Group
		if c.Consumed {
			consumedBy++
		}
		if c.LeaseExpiresAt.Valid {
			processing = true
		}
		if c.DLQError.Valid || c.DLQRetries.Valid {
			dead = true
			errMsg, retries = textOrNil(c.DLQError.Valid, c.DLQError.String), c.DLQRetries.Int32
		}
		groups[i] = map[string]any{"name": c.Group, "consumed": c.Consumed, "retryCount": c.Retries,
			"leaseExpiresAt": tsOrNil(c.LeaseExpiresAt.Valid, c.LeaseExpiresAt.Time), "deadLetter": c.DLQError.Valid || c.DLQRetries.Valid}
	}
	var leaseExp any
	for _, c := range cs {
		if c.LeaseExpiresAt.Valid {
			leaseExp = ts(c.LeaseExpiresAt.Time)
		}
	}
	switch {
	case dead:
		status = "dead_letter"
	case len(cs) > 0 && consumedBy == len(cs):
		status = "completed"
	case processing:
		status = "processing"
	}
	mode := modeOf(names)
	mode["consumedByGroups"] = consumedBy
	writeJSON(w, http.StatusOK, map[string]any{
		"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
		"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition,
		"namespace": m.Namespace, "task": m.Task, "status": status, "payload": json.RawMessage(m.Payload), "isEncrypted": m.Encrypted,
		"traceId": uuidOrNil(m.TraceID.Valid, m.TraceID.Bytes), "producerSub": textOrNil(m.ProducerSub.Valid, m.ProducerSub.String),
		"createdAt": ts(m.CreatedAt), "errorMessage": errMsg, "retryCount": retries, "leaseExpiresAt": leaseExp,
		"queueConfig": map[string]int32{"leaseTime": m.LeaseTime, "retryLimit": m.RetryLimit, "retryDelay": m.RetryDelay,
			"ttl": m.TTL, "priority": m.Priority},
		"mode": mode, "consumerGroups": groups,
	})
	return nil
}

func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	if err := s.eng.DeleteMessage(r.Context(), pid, tx); err != nil {
		if isNotFound(err) {
			return notFound("Message not found: " + pid.String() + "/" + tx)
		}
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "partitionId": pid.String(), "transactionId": tx,
		"message": "Message deleted successfully"})
	return nil
}
