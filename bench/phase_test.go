package main

import (
	"testing"
	"time"
)

func TestPacerSpreadsMessagesAtTheRate(t *testing.T) {
	p := newPacer(1000) // 1 ms per message
	now := time.Unix(100, 0)
	p.next = now
	if at := p.reserve(now, 10); !at.Equal(now) {
		t.Fatalf("first request at %v, want now", at.Sub(now))
	}
	if at := p.reserve(now, 10); at.Sub(now) != 10*time.Millisecond {
		t.Fatalf("second request at +%v, want +10ms", at.Sub(now))
	}
	// Far behind: at most pacerCatchUp of missed load is made up for.
	later := now.Add(time.Minute)
	if at := p.reserve(later, 10); later.Sub(at) != pacerCatchUp {
		t.Fatalf("late request %v before now, want %v", later.Sub(at), pacerCatchUp)
	}
	if newPacer(0) != nil {
		t.Fatal("rate 0 must mean no pacing")
	}
}

func TestPhaseRatesAndBetween(t *testing.T) {
	a := mark{at: time.Unix(0, 0), pushed: 100, consumed: 50}
	b := mark{at: time.Unix(10, 0), pushed: 1100, consumed: 2050}
	p := phaseRates("x", a, b)
	if p.Seconds != 10 || p.PushRate != 100 || p.ConsumeRate != 200 {
		t.Fatalf("got %+v", p)
	}
	var r Recorder
	for i := 1; i <= 10; i++ {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	if s := r.Between(5, 10); s.Count != 5 || s.P50 != 8 || s.Max != 10 {
		t.Fatalf("between 5 and 10: %+v", s)
	}
	if s := r.Between(8, 99); s.Count != 2 {
		t.Fatalf("between 8 and past the end: %+v", s)
	}
	if ratio(3, 0) != 0 || ratio(3, 2) != 1.5 {
		t.Fatal("ratio")
	}
}

func TestSoakVerdict(t *testing.T) {
	w := func(p99, rss float64, size int64) SoakWindow {
		return SoakWindow{Phase: Phase{E2E: Summary{Count: 1, P99: p99}}, RSSMB: rss, DBBytes: size}
	}
	// Six windows: the last two thirds start at the third (index 2).
	ws := []SoakWindow{w(10, 50, 100), w(12, 60, 150), w(30, 40, 200), w(11, 41, 210), w(14, 42, 200), w(10, 44, 220)}
	v := soakVerdict(ws)
	if v.P99Worst != 3 {
		t.Fatalf("worst p99 %v, want 3", v.P99Worst)
	}
	if v.RSSGrowth < 0.099 || v.RSSGrowth > 0.101 {
		t.Fatalf("RSS growth %v, want 0.10", v.RSSGrowth)
	}
	if v.SizeGrowth < 0.099 || v.SizeGrowth > 0.101 {
		t.Fatalf("size growth %v, want 0.10", v.SizeGrowth)
	}
	if (soakVerdict(ws[:1]) != SoakVerdict{}) {
		t.Fatal("one window has no verdict")
	}
}

func TestSkipLockedCounts(t *testing.T) {
	var c slCounts
	c.add([]int64{1, 2, 3})
	c.add([]int64{4})
	if err := c.check(4); err != nil {
		t.Fatal(err)
	}
	if err := c.check(5); err == nil {
		t.Fatal("a row never deleted must fail")
	}
	c.add([]int64{2})
	if err := c.check(4); err == nil {
		t.Fatal("a row deleted twice must fail")
	}
}
