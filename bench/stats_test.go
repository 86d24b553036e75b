package main

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("empty: %v", got)
	}
	one := []time.Duration{7 * time.Millisecond}
	if got := Percentile(one, 99); got != 7*time.Millisecond {
		t.Errorf("single: %v", got)
	}
}

func TestSummarizeUnsorted(t *testing.T) {
	s := make([]time.Duration, 0, 1000)
	for i := 1000; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Microsecond)
	}
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	got := Summarize(s)
	want := Summary{Count: 1000, P50: 0.5, P95: 0.95, P99: 0.99, Max: 1}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if (Summary{}).String() != "-" {
		t.Error("empty summary should render as -")
	}
	if got := (Summary{Count: 1, P50: 1.234, P95: 12.34, P99: 123.4}).String(); got != "1.23/12.3/123" {
		t.Errorf("String = %q", got)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				r.Add(time.Duration(g*100+i+1) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	s := r.Summary()
	if s.Count != 800 || s.P50 != 400 || s.Max != 800 {
		t.Fatalf("summary %+v", s)
	}
}
