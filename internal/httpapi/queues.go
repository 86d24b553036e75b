package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

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

func (s *Server) handleQueueDelete(w http.ResponseWriter, r *http.Request) error {
	q := r.PathValue("queue")
	if err := s.eng.DeleteQueue(r.Context(), q); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "queue": q, "existed": true})
	return nil
}

func (s *Server) handleConfigure(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Queue     json.RawMessage     `json:"queue"`
		Namespace json.RawMessage     `json:"namespace"`
		Task      json.RawMessage     `json:"task"`
		Options   engine.QueueOptions `json:"options"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	q, ok := optString(body.Queue)
	if !ok || q == "" {
		return badRequest("queue is required")
	}
	ns, ok := optString(body.Namespace)
	if !ok {
		return badRequest("namespace must be a string")
	}
	task, ok := optString(body.Task)
	if !ok {
		return badRequest("task must be a string")
	}
	res, err := s.eng.Configure(r.Context(), q, ns, task, body.Options)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
