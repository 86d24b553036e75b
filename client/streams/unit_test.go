package streams

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The cross-language vectors of the config hash (computed with the original JavaScript runtime).
func TestConfigHashVectors(t *testing.T) {
	id := func(v any, _ Context) (any, error) { return v, nil }
	yes := func(any, Context) (bool, error) { return true, nil }
	one := func(any) any { return 1 }
	cases := []struct {
		s    *Stream
		want string
	}{
		{From("orders").WindowTumbling(60).Aggregate(map[string]Extractor{"count": one, "sum": one}, "count", "sum").To("orders.totals"),
			"88cc729bb90114d58754c19385312d96123d01e2469a2602533e0f422e96872c"},
		{From("orders").Map(id).Filter(yes).To("orders.totals"),
			"49419fae86f4929aeea29577c850512fd91e7261d2bea33ec37c47f71963cbfd"},
		{From("orders").Gate(TokenBucketGate(10, 1, nil)).To("orders.totals"),
			"2543d402d87468be01db3a2ce8a18f4e25a617160fd47f4e622d426b3762b093"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.s.ConfigHash())
	}
	// Structure changes the hash, functions do not.
	a := From("q").WindowTumbling(60).Reduce(func(acc, v any) (any, error) { return acc, nil }, 0.0)
	b := From("q").WindowTumbling(60).Reduce(func(acc, v any) (any, error) { return v, nil }, 5.0)
	require.Equal(t, a.ConfigHash(), b.ConfigHash())
	require.NotEqual(t, a.ConfigHash(), From("q").WindowTumbling(30).Reduce(nil, 0.0).ConfigHash())
	require.NotEqual(t, a.ConfigHash(), From("q").WindowTumbling(60, WithGracePeriod(1)).Reduce(nil, 0.0).ConfigHash())
}

func TestCompileRules(t *testing.T) {
	red := func(acc, v any) (any, error) { return acc, nil }
	gate := TokenBucketGate(1, 1, nil)
	key := func(any, Context) (string, error) { return "", nil }
	bad := map[string]*Stream{
		"sink not last":        From("q").To("s").Map(func(v any, _ Context) (any, error) { return v, nil }),
		"reduce no window":     From("q").Reduce(red, 0),
		"window after reduce":  From("q").WindowTumbling(1).Reduce(red, 0).WindowTumbling(2),
		"two windows":          From("q").WindowTumbling(1).WindowSliding(2, 1).Reduce(red, 0),
		"gate and window":      From("q").WindowTumbling(1).Gate(gate),
		"two gates":            From("q").Gate(gate).Gate(gate),
		"keyBy after gate":     From("q").Gate(gate).KeyBy(key),
		"two keyBy":            From("q").KeyBy(key).KeyBy(key),
		"window no reducer":    From("q").WindowSession(5).To("s"),
		"sliding not multiple": From("q").WindowSliding(10, 3).Reduce(red, 0),
		"bad cron":             From("q").WindowCron("fortnight").Reduce(red, 0),
		"bad onLate":           From("q").WindowTumbling(1, WithOnLate("keep")).Reduce(red, 0),
	}
	for name, s := range bad {
		_, err := s.compile()
		require.Error(t, err, name)
	}
	p, err := From("q").Map(func(v any, _ Context) (any, error) { return v, nil }).KeyBy(key).WindowTumbling(1).Reduce(red, 0).
		Filter(func(any, Context) (bool, error) { return true, nil }).To("s").compile()
	require.NoError(t, err)
	require.Len(t, p.pre, 2)
	require.Len(t, p.post, 1)
}

func TestWindowArithmetic(t *testing.T) {
	tw := &window{kind: tumbling, seconds: 60}
	require.Equal(t, []int64{120_000}, tw.starts(179_999))
	require.Equal(t, "tumb:60", tw.tag())
	sw := &window{kind: sliding, size: 60, slide: 10}
	require.Equal(t, []int64{20_000, 10_000, 0, -10_000, -20_000, -30_000}, sw.starts(25_000))
	require.Len(t, sw.starts(125_000), 6, "a 60 s window sliding by 10 s: 6 windows per event")
	require.Equal(t, "slide:60:10", sw.tag())
	week := &window{kind: cron, every: "week"}
	mon := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	require.Equal(t, []int64{mon.UnixMilli()}, week.starts(mon.Add(3*24*time.Hour+5*time.Hour).UnixMilli()))
	require.Equal(t, "2026-03-02T00:00:00.000Z", isoMs(mon.UnixMilli()))
	hour := &window{kind: cron, every: "hour"}
	require.Equal(t, []int64{mon.Add(7 * time.Hour).UnixMilli()}, hour.starts(mon.Add(7*time.Hour+59*time.Minute).UnixMilli()))
	ms, err := eventTimeMs("2026-03-02T00:00:01.500Z")
	require.NoError(t, err)
	require.Equal(t, mon.UnixMilli()+1500, ms)
}

func TestAggregate(t *testing.T) {
	amount := func(v any) any { return v.(map[string]any)["amount"] }
	r := &reducer{aggregate: true, fields: []string{"count", "sum", "min", "max", "avg", "total"},
		extract: map[string]Extractor{"count": nil, "sum": amount, "min": amount, "max": amount, "avg": amount, "total": amount}}
	acc, err := r.fresh()
	require.NoError(t, err)
	for _, v := range []any{map[string]any{"amount": 4.0}, map[string]any{"amount": "n/a"}, map[string]any{"amount": 2.0}} {
		acc, err = r.fold(acc, v)
		require.NoError(t, err)
	}
	require.Equal(t, map[string]any{"count": 3.0, "sum": 6.0, "min": 2.0, "max": 4.0, "avg": 3.0, "__avg_sum": 6.0,
		"__avg_count": 2.0, "total": 6.0}, acc)
}

func TestGateHelpers(t *testing.T) {
	g := TokenBucketGate(2, 1, nil)
	st := map[string]any{}
	at := func(ms int64) bool {
		ok, err := g(nil, &GateContext{State: st, StreamTimeMs: ms})
		require.NoError(t, err)
		return ok
	}
	require.True(t, at(1000))
	require.True(t, at(1000))
	require.False(t, at(1000), "bucket empty")
	require.True(t, at(2000), "refilled one token after a second")
	require.False(t, at(2000))
	require.Equal(t, 3.0, st["allowedTotal"])
	free := TokenBucketGate(1, 0, func(any) float64 { return 0 })
	st2 := map[string]any{}
	for range 5 {
		ok, _ := free(nil, &GateContext{State: st2, StreamTimeMs: 1})
		require.True(t, ok, "zero cost always passes")
	}

	sw := SlidingWindowGate(2, 10, nil)
	s3 := map[string]any{}
	pass := func(ms int64) bool { ok, _ := sw(nil, &GateContext{State: s3, StreamTimeMs: ms}); return ok }
	require.True(t, pass(10_000))
	require.True(t, pass(11_000))
	require.False(t, pass(12_000))
	require.False(t, pass(21_000), "previous window still weighs 90 %")
	require.True(t, pass(39_000), "two windows later everything expired")
}

// scripted answers a fixed list of statuses, then 200.
func scripted(t *testing.T, statuses ...int) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var seen []string
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("Authorization"))
		if n < len(statuses) {
			s := statuses[n]
			n++
			if s == 0 { // a network failure: drop the connection
				hj, _ := w.(http.Hijacker)
				c, _, _ := hj.Hijack()
				_ = c.Close()
				return
			}
			w.WriteHeader(s)
			_, _ = w.Write([]byte(`{"error":"scripted"}`))
			return
		}
		_, _ = w.Write([]byte(`{"success":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestHTTPClientRetries(t *testing.T) {
	run := func(statuses ...int) (error, []time.Duration, int) {
		srv, seen := scripted(t, statuses...)
		c := newHTTPClient(srv.URL, "tok", 3)
		var slept []time.Duration
		c.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
		c.rand = func() float64 { return 0.999 }
		var out struct{ Success bool }
		err := c.post(context.Background(), "/streams/v1/cycle", map[string]any{"a": 1}, &out)
		if err == nil {
			require.True(t, out.Success)
		}
		for _, s := range *seen {
			require.Equal(t, "POST /streams/v1/cycle application/json Bearer tok", s)
		}
		return err, slept, len(*seen)
	}
	// 5xx, network failure, 408 and 429 are retried with growing, jittered delays.
	err, slept, n := run(500, 0, 429)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Len(t, slept, 3)
	for i, lo := range []time.Duration{100, 200, 400} {
		require.GreaterOrEqual(t, slept[i], lo*time.Millisecond)
		require.LessOrEqual(t, slept[i], lo*13/10*time.Millisecond)
	}
	err, _, n = run(408, 503)
	require.NoError(t, err)
	require.Equal(t, 3, n)

	// Four attempts at most, then the last answer is the error.
	err, slept, n = run(502, 502, 502, 504, 500)
	require.Equal(t, 4, n)
	require.Len(t, slept, 3)
	var he *HTTPError
	require.True(t, errors.As(err, &he))
	require.Equal(t, 504, he.Status)

	// Every other 4xx is final at once.
	for _, s := range []int{400, 401, 403, 404, 409, 413} {
		err, slept, n = run(s)
		require.Equal(t, 1, n, "status %d", s)
		require.Empty(t, slept)
		require.True(t, errors.As(err, &he))
		require.Equal(t, s, he.Status)
	}
	err, _, _ = run(409)
	require.True(t, IsConfigMismatch(err))

	// The cap: later retries never wait more than 5 s (+30 %).
	c := newHTTPClient("http://x", "", 10)
	c.rand = func() float64 { return 0 }
	require.Equal(t, 5*time.Second, c.backoff(9))
	require.Equal(t, 3200*time.Millisecond, c.backoff(5))
	require.True(t, errors.As(err, &he))
	require.True(t, strings.HasPrefix(he.Error(), "streams: POST /streams/v1/cycle: HTTP 409"), he.Error())
}
