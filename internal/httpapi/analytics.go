package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// dashboardRoutes are the analytics series the dashboard's Operations and System pages draw, and the
// original's database-migration routes, which this broker answers with a documented 501.
var dashboardRoutes = []Route{
	{"GET", "/api/v1/analytics/worker-metrics", Read, "cluster throughput, scheduler latency, pool and lag per bucket, with each broker's latest figures", (*Server).handleWorkerMetrics},
	{"GET", "/api/v1/analytics/system-metrics", Read, "each broker's CPU, memory, pool and scheduler series (avg/min/max/last per bucket)", (*Server).handleSystemMetrics},
	{"GET", "/api/v1/analytics/queue-parked-replicas", Read, "parked long-polls per bucket, queue and broker", (*Server).handleParkedReplicas},
	{"GET", "/api/v1/analytics/postgres-stats", Read, "PostgreSQL cache hit ratios, table sizes, dead tuples, HOT updates, vacuum and active queries", (*Server).handlePostgresStats},
	{"POST", "/api/v1/migration/test-connection", Admin, "501: database migration is not built in (docs/dashboard.md)", (*Server).handleMigration},
	{"POST", "/api/v1/migration/start", Admin, "501: database migration is not built in (docs/dashboard.md)", (*Server).handleMigration},
	{"GET", "/api/v1/migration/status", Admin, "501: database migration is not built in (docs/dashboard.md)", (*Server).handleMigration},
	{"POST", "/api/v1/migration/validate", Admin, "501: database migration is not built in (docs/dashboard.md)", (*Server).handleMigration},
	{"POST", "/api/v1/migration/reset", Admin, "501: database migration is not built in (docs/dashboard.md)", (*Server).handleMigration},
}

// errMigration explains why the migration wizard's routes do nothing: copying a live database is a
// pg_dump | pg_restore job the operator runs with maintenance on, not something the broker process
// should shell out to (it would need the client binaries and the target's credentials in the broker).
var errMigration = &apiError{status: http.StatusNotImplemented, code: "not_implemented",
	msg: "database migration is not built into this broker: turn on push and pop maintenance, copy the schema with " +
		"pg_dump | pg_restore, repoint DATABASE_URL and turn maintenance off (see docs/dashboard.md)"}

func (s *Server) handleMigration(w http.ResponseWriter, r *http.Request) error { return errMigration }

func rangeJSON(from, to time.Time) map[string]string {
	return map[string]string{"from": ts(from), "to": ts(to)}
}

func (s *Server) handleWorkerMetrics(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	bm := bucketMinutes(to.Sub(from))
	reps, err := s.eng.ReplicaSeries(ctx, from, to, bm, qv.Get("hostname"), qv.Get("workerId"))
	if err != nil {
		return err
	}
	series, err := s.eng.QueueOpsSeries(ctx, from, to, "", bm)
	if err != nil {
		return err
	}
	type point struct {
		ops                         store.QueueOps
		lagAvg, lagMax              float64
		lagN                        int
		freeAvg, freeMin, conns     float64
		jobAvg, jobMax              float64
		haveSample, haveMin, haveOp bool
	}
	pts := map[time.Time]*point{}
	at := func(t time.Time) *point {
		p := pts[t]
		if p == nil {
			p = &point{}
			pts[t] = p
		}
		return p
	}
	queueLag := map[string]*store.QueueOps{}
	var total store.QueueOps
	for _, o := range series {
		p := at(o.Bucket.UTC())
		p.haveOp = true
		addOps(&p.ops, o.QueueOps)
		addOps(&total, o.QueueOps)
		ql := queueLag[o.Queue]
		if ql == nil {
			ql = &store.QueueOps{Queue: o.Queue}
			queueLag[o.Queue] = ql
		}
		addOps(ql, o.QueueOps)
	}
	var lagAll engine.Agg
	lagMaxAll := 0.0
	workers := make([]map[string]any, 0, len(reps))
	for _, rp := range reps {
		for _, b := range rp.Buckets {
			p := at(b.Bucket)
			free := b.PoolSize.Avg - b.PoolActive.Avg
			freeMin := b.PoolSize.Min - b.PoolActive.Max
			p.lagAvg += b.SchedLagAvg.Avg
			p.lagMax = max(p.lagMax, b.SchedLagMax.Max)
			p.lagN++
			p.freeAvg += free
			if !p.haveMin || freeMin < p.freeMin {
				p.freeMin, p.haveMin = freeMin, true
			}
			p.conns += b.PoolActive.Avg + b.PoolIdle.Avg
			p.jobAvg += b.PoolWaiting.Avg
			p.jobMax = max(p.jobMax, b.PoolWaiting.Max)
			p.haveSample = true
			lagMaxAll = max(lagMaxAll, b.SchedLagMax.Max)
		}
		if n := len(rp.Buckets); n > 0 {
			last := rp.Buckets[n-1]
			lagAll.Avg += last.SchedLagAvg.Avg / float64(len(reps))
			workers = append(workers, map[string]any{"workerId": rp.BrokerID, "hostname": rp.Hostname, "port": rp.Port,
				"pid": rp.PID, "avgEventLoopLagMs": round2(last.SchedLagAvg.Avg), "maxEventLoopLagMs": round2(last.SchedLagMax.Max),
				"freeSlots": round2(last.PoolSize.Last - last.PoolActive.Last), "dbConnections": round2(last.PoolActive.Last + last.PoolIdle.Last),
				"jobQueueSize": round2(last.PoolWaiting.Last), "cpuUserPct": round2(last.CPUUser.Last), "cpuSysPct": round2(last.CPUSys.Last),
				"rssMb": round2(last.RSS.Last), "goroutines": last.Goroutines.Last, "parked": last.Parked.Last,
				"lastSeen": ts(rp.LastSeen)})
		}
	}
	keys := make([]time.Time, 0, len(pts))
	for k := range pts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].Before(keys[b]) })
	secs := float64(bm * 60)
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		p := pts[k]
		o := p.ops
		acks := o.AckSuccess + o.AckFailed
		m := map[string]any{"timestamp": ts(k), "pushMessages": o.PushMessages, "popMessages": o.PopMessages,
			"ackMessages": acks, "pushRequests": o.PushRequests, "popRequests": o.PopRequests, "ackRequests": acks,
			"jobsDone":      o.PushRequests + o.PopRequests + acks,
			"pushPerSecond": float64(o.PushMessages) / secs, "popPerSecond": float64(o.PopMessages) / secs,
			"ackPerSecond": float64(acks) / secs, "avgLagMs": ratio(o.LagSumMs, o.LagCount), "maxLagMs": o.LagMaxMs,
			"lagCount": o.LagCount, "dbErrors": 0, "ackSuccess": o.AckSuccess, "ackFailed": o.AckFailed, "dlqCount": o.DLQ,
			"backoffSize": 0}
		if p.haveSample {
			n := float64(p.lagN)
			m["avgEventLoopLagMs"], m["maxEventLoopLagMs"] = round2(p.lagAvg/n), round2(p.lagMax)
			m["avgFreeSlots"], m["minFreeSlots"] = round2(p.freeAvg), round2(p.freeMin)
			m["dbConnections"] = round2(p.conns)
			m["avgJobQueueSize"], m["maxJobQueueSize"] = round2(p.jobAvg), round2(p.jobMax)
		}
		out[i] = m
	}
	queues := make([]map[string]any, 0, len(queueLag))
	for _, o := range queueLag {
		queues = append(queues, map[string]any{"queueName": o.Queue, "popCount": o.PopMessages,
			"avgLagMs": ratio(o.LagSumMs, o.LagCount), "maxLagMs": o.LagMaxMs})
	}
	sort.Slice(queues, func(a, b int) bool { return queues[a]["queueName"].(string) < queues[b]["queueName"].(string) })
	acks := total.AckSuccess + total.AckFailed
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": rangeJSON(from, to), "bucketMinutes": bm, "pointCount": len(out),
		"timeSeries": out, "workers": workers, "queues": queues,
		"summary": map[string]any{"totalPushMessages": total.PushMessages, "totalPopMessages": total.PopMessages,
			"totalAckMessages": acks, "totalPushRequests": total.PushRequests, "totalPopRequests": total.PopRequests,
			"totalAckRequests": acks, "totalAckFailed": total.AckFailed, "totalDlq": total.DLQ,
			"avgLagMs": ratio(total.LagSumMs, total.LagCount), "maxLagMs": total.LagMaxMs,
			"avgEventLoopLagMs": round2(lagAll.Avg), "maxEventLoopLagMs": round2(lagMaxAll),
			"pendingMessages": max(total.PushMessages-acks, 0), "workerCount": len(workers)}})
	return nil
}

func addOps(dst *store.QueueOps, o store.QueueOps) {
	dst.PushRequests += o.PushRequests
	dst.PushMessages += o.PushMessages
	dst.PopRequests += o.PopRequests
	dst.PopMessages += o.PopMessages
	dst.PopEmpty += o.PopEmpty
	dst.AckSuccess += o.AckSuccess
	dst.AckFailed += o.AckFailed
	dst.DLQ += o.DLQ
	dst.LagSumMs += o.LagSumMs
	dst.LagCount += o.LagCount
	dst.LagMaxMs = max(dst.LagMaxMs, o.LagMaxMs)
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

func (s *Server) handleSystemMetrics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	bm := bucketMinutes(to.Sub(from))
	reps, err := s.eng.ReplicaSeries(r.Context(), from, to, bm, qv.Get("hostname"), qv.Get("workerId"))
	if err != nil {
		return err
	}
	points := 0
	out := make([]map[string]any, len(reps))
	for i, rp := range reps {
		tsr := make([]map[string]any, len(rp.Buckets))
		for j, b := range rp.Buckets {
			tsr[j] = map[string]any{"timestamp": ts(b.Bucket), "sampleCount": b.Samples, "metrics": map[string]any{
				"cpu":        map[string]engine.Agg{"user_pct": b.CPUUser, "system_pct": b.CPUSys},
				"memory":     map[string]engine.Agg{"rss_mb": b.RSS},
				"database":   map[string]engine.Agg{"pool_size": b.PoolSize, "pool_idle": b.PoolIdle, "pool_active": b.PoolActive},
				"threadpool": map[string]engine.Agg{"db_queue_size": b.PoolWaiting, "goroutines": b.Goroutines, "sched_lag_avg_ms": b.SchedLagAvg, "sched_lag_max_ms": b.SchedLagMax},
				"registries": map[string]engine.Agg{"parked": b.Parked},
			}}
		}
		points += len(tsr)
		out[i] = map[string]any{"hostname": rp.Hostname, "port": rp.Port, "workerId": rp.BrokerID, "pid": rp.PID,
			"lastSeen": ts(rp.LastSeen), "timeSeries": tsr}
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": rangeJSON(from, to), "replicas": out, "replicaCount": len(out),
		"bucketMinutes": bm, "pointCount": points})
	return nil
}

func (s *Server) handleParkedReplicas(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	bm := bucketMinutes(to.Sub(from))
	pts, err := s.eng.ParkedSeries(r.Context(), from, to, bm, r.URL.Query().Get("queue"))
	if err != nil {
		return err
	}
	series := make([]map[string]any, len(pts))
	seen := map[string]bool{}
	replicas := []map[string]string{}
	for i, p := range pts {
		series[i] = map[string]any{"bucket": ts(p.Bucket), "queueName": p.Queue, "hostname": p.Hostname,
			"workerId": p.BrokerID, "parkedCount": p.Parked}
		if !seen[p.BrokerID] {
			seen[p.BrokerID] = true
			replicas = append(replicas, map[string]string{"hostname": p.Hostname, "workerId": p.BrokerID})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": rangeJSON(from, to), "bucketMinutes": bm,
		"series": series, "replicas": replicas})
	return nil
}

func (s *Server) handlePostgresStats(w http.ResponseWriter, r *http.Request) error {
	m, err := s.eng.PostgresStats(r.Context())
	if err != nil {
		return err
	}
	var tables, tableCache, indexCache []map[string]any
	for _, x := range []struct {
		key string
		dst *[]map[string]any
	}{{"tables", &tables}, {"tableCache", &tableCache}, {"indexCache", &indexCache}} {
		if err := json.Unmarshal(m[x.key], x.dst); err != nil {
			return err
		}
	}
	// The per-table row carries every figure; each section is the same rows seen through its columns.
	pick := func(cols ...string) []map[string]any {
		out := make([]map[string]any, len(tables))
		for i, t := range tables {
			row := map[string]any{"table": t["table"]}
			for _, c := range cols {
				row[c] = t[c]
			}
			out[i] = row
		}
		return out
	}
	var hit, read float64
	for _, t := range tableCache {
		h, _ := t["heapHit"].(float64)
		rd, _ := t["heapRead"].(float64)
		hit, read = hit+h, read+rd
	}
	var ratioPct any
	if hit+read > 0 {
		ratioPct = round2(100 * hit / (hit + read))
	}
	writeJSON(w, http.StatusOK, map[string]any{"timestamp": ts(time.Now()), "database": m["database"],
		"databaseCache": m["database"], "tableCache": tableCache, "indexCache": indexCache,
		"cacheSummary":     map[string]any{"heapHit": hit, "heapRead": read, "heapHitRatio": ratioPct},
		"deadTuples":       pick("liveTuples", "deadTuples", "deadRatio"),
		"hotUpdates":       pick("updates", "hotUpdates", "hotRatio"),
		"autovacuumStatus": pick("lastVacuum", "lastAutovacuum", "lastAutoanalyze", "autovacuumCount"),
		"tableSizes":       pick("totalBytes", "totalSize", "tableSize", "indexSize"),
		"activeQueries":    m["activeQueries"], "bufferConfig": m["bufferConfig"],
		// Buffer contents need the pg_buffercache extension, which the broker does not install.
		"bufferUsage": []any{}})
	return nil
}
