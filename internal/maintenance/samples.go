package maintenance

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// Parked reports the long-poll pops waiting for messages; the engine implements it.
type Parked interface {
	Parked() int
	ParkedByQueue() map[string]int
}

// SampleOptions configure the sampler loop.
type SampleOptions struct {
	Interval time.Duration
	Hostname string // "" = os.Hostname
	Port     int
	KeepDays int // samples older than this are deleted (METRICS_RETENTION_DAYS)
	NowFunc  func() time.Time
}

// NewSamples builds the loop that records this broker's vital signs (CPU, memory, pool, scheduler
// latency, parked long-polls per queue) for the worker-metrics, system-metrics and parked-replica series.
// The Go runtime has no event loop: the scheduler latency (time a runnable goroutine waited for a CPU)
// stands in for the original's event-loop lag, and acquires that waited for a pool connection for its
// job queue.
func NewSamples(st *store.Store, parked Parked, log *slog.Logger, o SampleOptions) *Loop {
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
	return NewLoop("samples", o.Interval, log, func(ctx context.Context) error {
		return st.Analytics().AddBrokerSample(ctx, sm.sample(st, parked, o.NowFunc()), o.KeepDays)
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

func (sm *sampler) sample(st *store.Store, parked Parked, now time.Time) store.BrokerSample {
	b := store.BrokerSample{At: now, BrokerID: sm.id, Hostname: sm.host, Port: sm.port, PID: sm.pid,
		Goroutines: runtime.NumGoroutine(), RSSMB: rssMB()}
	user, sys := cpuTimes()
	size, idle, active, waited := st.PoolSnapshot()
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
	b.ParkedByQueue = parked.ParkedByQueue()
	b.Parked = parked.Parked()
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
