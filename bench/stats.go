package main

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Recorder collects latency samples from many goroutines. It keeps every sample: a scenario of a few
// hundred thousand requests costs a few MB, and exact percentiles are worth it.
type Recorder struct {
	mu      sync.Mutex
	samples []time.Duration
}

// Add records one sample.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.samples = append(r.samples, d)
	r.mu.Unlock()
}

// Summary computes count and percentiles of everything recorded so far.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	s := slices.Clone(r.samples)
	r.mu.Unlock()
	return Summarize(s)
}

// Summary is the distribution of a latency series, in milliseconds for JSON.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize sorts samples in place and returns their percentiles (nearest-rank method).
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	return Summary{
		Count: len(samples),
		P50:   ms(Percentile(samples, 50)),
		P95:   ms(Percentile(samples, 95)),
		P99:   ms(Percentile(samples, 99)),
		Max:   ms(samples[len(samples)-1]),
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted samples: the smallest
// sample such that at least p% of the samples are less than or equal to it.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1000 }

// String renders "p50/p95/p99 ms" or "-" when there is no sample.
func (s Summary) String() string {
	if s.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%s/%s/%s", fmtMS(s.P50), fmtMS(s.P95), fmtMS(s.P99))
}

func fmtMS(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
