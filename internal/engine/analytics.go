package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// SampleOptions configure the sampler loop.
type SampleOptions struct {
	Interval time.Duration
	Hostname string // "" = os.Hostname
	Port     int
	KeepDays int // samples older than this are deleted (METRICS_RETENTION_DAYS)
	NowFunc  func() time.Time
}

// NewSampleLoop builds the loop that records this broker's vital signs (CPU, memory, pool, scheduler
// latency, parked long-polls per queue) for the worker-metrics, system-metrics and parked-replica series.
// The Go runtime has no event loop: the scheduler latency (time a runnable goroutine waited for a CPU)
// stands in for the original's event-loop lag, and acquires that waited for a pool connection for its
// job queue.
func (e *Engine) NewSampleLoop(o SampleOptions) *Loop {
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname()
	}
	if o.KeepDays < 1 {
		o.KeepDays = 90
	}
	sm := &sampler{id: uuid.Must(uuid.NewV7()).String(), host: o.Hostname, port: o.Port, pid: os.Getpid()}
	return newLoop("samples", o.Interval, e.log, func(ctx context.Context) error {
		return e.st.AddBrokerSample(ctx, sm.sample(e, o.NowFunc()), o.KeepDays)
	})
}

// sampler keeps the running totals between two samples; only the loop goroutine uses it.
type sampler struct {
	id, host  string
	port, pid int

	prevAt        time.Time
	prevCPU       [2]time.Duration // user, system
	prevSched     []uint64
	prevWaited    int64
	haveBaselines bool
}

func (sm *sampler) sample(e *Engine, now time.Time) store.BrokerSample {
	b := store.BrokerSample{At: now, BrokerID: sm.id, Hostname: sm.host, Port: sm.port, PID: sm.pid,
		Goroutines: runtime.NumGoroutine(), RSSMB: rssMB()}
	user, sys := cpuTimes()
	size, idle, active, waited := e.st.PoolSnapshot()
	b.PoolSize, b.PoolIdle, b.PoolActive = size, idle, active
	sched := readSched()
	if sm.haveBaselines {
		if wall := now.Sub(sm.prevAt); wall > 0 {
			b.CPUUserPct = 100 * float64(user-sm.prevCPU[0]) / float64(wall)
			b.CPUSysPct = 100 * float64(sys-sm.prevCPU[1]) / float64(wall)
		}
		b.PoolWaiting = int(waited - sm.prevWaited)
		b.SchedLagAvgMs, b.SchedLagMaxMs = schedDelta(sched, sm.prevSched)
	}
	sm.prevAt, sm.prevCPU, sm.prevWaited, sm.haveBaselines = now, [2]time.Duration{user, sys}, waited, true
	if sched.counts != nil {
		sm.prevSched = sched.counts
	}
	b.ParkedByQueue = e.waiters.countByQueue()
	b.Parked = e.waiters.count()
	return b
}

func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// rssMB is the resident set size from /proc (Linux); elsewhere the memory the Go runtime holds.
func rssMB() float64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return float64(pages*int64(os.Getpagesize())) / (1 << 20)
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.Sys) / (1 << 20)
}

type schedHist struct {
	counts  []uint64
	buckets []float64
}

func readSched() schedHist {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedHist{}
	}
	h := s[0].Value.Float64Histogram()
	return schedHist{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// schedDelta turns two readings of the scheduler-latency histogram into the interval's mean and
// maximum (the upper edge of the highest bucket that gained a count), in milliseconds.
func schedDelta(cur schedHist, prev []uint64) (avg, maxMs float64) {
	if cur.counts == nil || len(prev) != len(cur.counts) {
		return 0, 0
	}
	var n, sum float64
	for i, c := range cur.counts {
		d := float64(c - prev[i])
		if d == 0 {
			continue
		}
		lo, hi := cur.buckets[i], cur.buckets[i+1]
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(hi, 1) {
			hi = lo
		}
		n += d
		sum += d * (lo + hi) / 2
		maxMs = hi * 1000
	}
	if n == 0 {
		return 0, 0
	}
	return sum / n * 1000, maxMs
}

// countByQueue reports the parked long-polls per queue (cross-queue pops under "*").
func (w *waiters) countByQueue() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.byQueue))
	for q, set := range w.byQueue {
		if q == anyQueue {
			q = "*"
		}
		out[q] = len(set)
	}
	return out
}

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

// ReplicaSeries buckets every broker's samples between from and to (bucketMinutes wide); hostname and
// brokerID filter when not empty. Replicas are ordered by hostname, then port.
func (e *Engine) ReplicaSeries(ctx context.Context, from, to time.Time, bucketMinutes int, hostname, brokerID string) ([]Replica, error) {
	samples, err := e.st.BrokerSamples(ctx, from, to, hostname, brokerID)
	if err != nil {
		return nil, opErr("analytics", err)
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

// ParkedSeries reads the parked long-polls per bucket, queue and broker between from and to; queue ""
// = every queue. Newest bucket first.
func (e *Engine) ParkedSeries(ctx context.Context, from, to time.Time, bucketMinutes int, queue string) ([]ParkedPoint, error) {
	samples, err := e.st.BrokerSamples(ctx, from, to, "", "")
	if err != nil {
		return nil, opErr("analytics", err)
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

// PostgresStats reads the database's health figures for the dashboard's Postgres page.
func (e *Engine) PostgresStats(ctx context.Context) (map[string]json.RawMessage, error) {
	m, err := e.st.PostgresStats(ctx)
	if err != nil {
		return nil, opErr("postgres stats", err)
	}
	return m, nil
}
