package httpapi

import (
	"net/http"
	"sort"
	"time"
)

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
