package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// step is one scripted answer. The last step of a script repeats forever.
type step struct {
	status int
	body   string
	header map[string]string
}

type recorded struct {
	method, path, query string
	body                []byte
}

// scripted is an httptest server answering from a script and recording every request.
type scripted struct {
	*httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []recorded
}

func newScripted(t *testing.T, steps ...step) *scripted {
	t.Helper()
	s := &scripted{steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{r.Method, r.URL.Path, r.URL.RawQuery, b})
		st := s.steps[min(n, len(s.steps)-1)]
		s.mu.Unlock()
		for k, v := range st.header {
			w.Header().Set(k, v)
		}
		if st.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(st.status)
		_, _ = io.WriteString(w, st.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.reqs) }

func (s *scripted) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// sleeps records the delays the client asked for instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newTestClient builds a client whose sleeps are recorded and whose jitter draw is u.
func newTestClient(t *testing.T, cfg Config, u float64, urls ...string) (*Client, *sleeps) {
	t.Helper()
	cfg.URLs = urls
	c, err := New(cfg)
	require.NoError(t, err)
	sl := &sleeps{}
	c.sleep = sl.sleep
	c.rand = func() float64 { return u }
	return c, sl
}

const okPush = `[{"index":0,"transaction_id":"","status":"queued","message_id":"m","partition_id":"p","trace_id":null,"queueName":"q"}]`

func pushOne(ctx context.Context, c *Client) error {
	_, err := c.Queue("q").Push(ctx, Payload(1))
	return err
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := New(Config{URLs: []string{"http://localhost:6632/"}})
	require.NoError(t, err)
	cfg := c.Config()
	require.Equal(t, 3, cfg.RetryAttempts)
	require.Equal(t, time.Second, cfg.RetryDelay)
	require.Equal(t, 500*time.Millisecond, cfg.Retry429.Base)
	require.Equal(t, 30*time.Second, cfg.Retry429.Cap)
	require.Equal(t, 10, cfg.Retry429.max429(false))
	require.Equal(t, 0, cfg.Retry429.max429(true), "long-poll pops are unbounded by default")
	require.Equal(t, 7, Retry429{MaxAttempts: 7}.max429(true), "an explicit bound applies to long polls too")
	require.NotNil(t, cfg.HTTPClient)
	require.NotNil(t, cfg.Logger)

	_, err = New(Config{})
	require.Error(t, err)
	_, err = New(Config{URLs: []string{"localhost:6632"}})
	require.Error(t, err)
}

func TestLayerOne5xxAttemptsWithExponentialBackoff(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 503, body: `{"error":"pool"}`})
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL)

	err := pushOne(t.Context(), c)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 503, ae.Status)
	require.Equal(t, "pool", ae.Message)
	require.Equal(t, 3, srv.count(), "RetryAttempts defaults to 3 attempts")
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, sl.all(), "exponential from RetryDelay, no jitter")
}

func TestLayerOneCustomAttemptsAndRecovery(t *testing.T) {
	t.Parallel()
	srv := newScripted(t,
		step{status: 502, body: `{"error":"upstream","code":"bad_gateway"}`},
		step{status: 504, body: `{"error":"slow","code":"upstream_timeout"}`},
		step{status: 500, body: `{"error":"x"}`},
		step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{RetryAttempts: 5, RetryDelay: 100 * time.Millisecond}, 0.5, srv.URL)

	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 4, srv.count())
	require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, sl.all())
	// The retried push carried the same generated transaction id every time, so the broker can
	// deduplicate it.
	var first, last struct {
		Items []wirePushItem `json:"items"`
	}
	reqs := srv.requests()
	require.NoError(t, json.Unmarshal(reqs[0].body, &first))
	require.NoError(t, json.Unmarshal(reqs[3].body, &last))
	require.NotEmpty(t, first.Items[0].TransactionID)
	require.Equal(t, first.Items[0].TransactionID, last.Items[0].TransactionID)
}

func TestLayerOneNetworkErrorsRetriedThenTransportError(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c, sl := newTestClient(t, Config{}, 0.5, dead.URL)

	err := pushOne(t.Context(), c)
	require.True(t, IsTransport(err), "%v", err)
	require.False(t, IsTerminal(err))
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, sl.all())
}

func TestLayerOne5xxFailsOverToNextURL(t *testing.T) {
	t.Parallel()
	a := newScripted(t, step{status: 500, body: `{"error":"push failed: boom"}`})
	b := newScripted(t, step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{}, 0.5, a.URL, b.URL)

	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 1, a.count())
	require.Equal(t, 1, b.count())
	require.Equal(t, []time.Duration{time.Second}, sl.all())
	require.Equal(t, map[string]bool{a.URL: false, b.URL: true}, c.BackendHealth())

	// While A is quarantined, requests go straight to B.
	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 1, a.count())
	require.Equal(t, 2, b.count())

	// After the quarantine A is preferred again only if B fails; health recovers on success.
	now := time.Now().Add(time.Minute)
	c.now = func() time.Time { return now }
	require.Equal(t, map[string]bool{a.URL: true, b.URL: true}, c.BackendHealth())
}

func TestLayerOneNetworkFailureFailsOver(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	b := newScripted(t, step{status: 201, body: okPush})
	c, _ := newTestClient(t, Config{}, 0.5, dead.URL, b.URL)

	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 1, b.count())
	require.False(t, c.BackendHealth()[dead.URL])
}

func TestAny4xxShortCircuits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		code   string
	}{
		{400, `{"error":"bad body: unexpected EOF"}`, ""},
		{401, `{"error":"Authentication required","code":"unauthorized"}`, "unauthorized"},
		{403, `{"error":"monthly quota","code":"quota_exceeded"}`, "quota_exceeded"},
		{404, `{"error":"Not Found","code":"no_such_route"}`, "no_such_route"},
		{409, `{"error":"conflict","success":false}`, ""},
		{413, `{"error":"batch of 20000 items exceeds max_batch_items (10000)","code":"payload_too_large"}`, "payload_too_large"},
		{421, `{"error":"unknown host","code":"cluster_unknown"}`, "cluster_unknown"},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			a := newScripted(t, step{status: tc.status, body: tc.body})
			b := newScripted(t, step{status: 201, body: okPush})
			c, sl := newTestClient(t, Config{}, 0.5, a.URL, b.URL)

			err := pushOne(t.Context(), c)
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.status, ae.Status)
			require.Equal(t, tc.code, ae.Code)
			require.True(t, IsTerminal(err))
			require.False(t, IsRateLimited(err))
			require.Equal(t, 1, a.count(), "a 4xx is never retried")
			require.Equal(t, 0, b.count(), "a 4xx never fails over")
			require.Empty(t, sl.all())
			require.True(t, c.BackendHealth()[a.URL], "a 4xx is not a health signal")
		})
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 413, body: "request body exceeds cap"})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	err := pushOne(t.Context(), c)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "request body exceeds cap", ae.Message)
}

func TestLayerTwoHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	limited := step{status: 429, body: `{"error":"request rate limit exceeded","code":"rate_limited"}`, header: map[string]string{"Retry-After": "7"}}
	srv := newScripted(t, limited, limited, step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL) // u=0.5: jitter factor exactly 1.0

	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 3, srv.count())
	require.Equal(t, []time.Duration{7 * time.Second, 7 * time.Second}, sl.all(), "Retry-After × 1000 ms, not the computed backoff")
}

func TestLayerTwoRetryAfterIsNotCapped(t *testing.T) {
	t.Parallel()
	srv := newScripted(t,
		step{status: 429, header: map[string]string{"Retry-After": "60"}},
		step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{Retry429: Retry429{Cap: time.Second}}, 0.5, srv.URL)
	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, []time.Duration{time.Minute}, sl.all())
}

func TestLayerTwoExponentialWithCap(t *testing.T) {
	t.Parallel()
	limited := step{status: 429, body: `{"error":"slow down","code":"rate_limited"}`}
	srv := newScripted(t, limited, limited, limited, limited, limited, limited, step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{Retry429: Retry429{Base: 500 * time.Millisecond, Cap: 5 * time.Second}}, 0.5, srv.URL)

	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 7, srv.count())
	require.Equal(t, []time.Duration{
		500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second,
	}, sl.all(), "min(Cap, Base × 2^attempt)")
}

func TestLayerTwoDefaultsBaseAndCap(t *testing.T) {
	t.Parallel()
	steps := make([]step, 0, 10)
	for range 9 {
		steps = append(steps, step{status: 429})
	}
	srv := newScripted(t, append(steps, step{status: 201, body: okPush})...)
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL)
	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, []time.Duration{
		500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second,
	}, sl.all())
}

func TestLayerTwoJitterBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u      float64
		lo, hi time.Duration
	}{
		{0, 8 * time.Second, 8 * time.Second},                  // -20%
		{0.999999, 11999 * time.Millisecond, 12 * time.Second}, // just under +20%
		{0.25, 9 * time.Second, 9 * time.Second},               // -10%
		{0.5, 10 * time.Second, 10 * time.Second},              // exact
		{0, 400 * time.Millisecond, 400 * time.Millisecond},    // computed delay is jittered too
		{0.999999, 599 * time.Millisecond, 600 * time.Millisecond},
	} {
		header := map[string]string{"Retry-After": "10"}
		if tc.hi < time.Second {
			header = nil // exercises the computed 500 ms base
		}
		srv := newScripted(t, step{status: 429, header: header}, step{status: 201, body: okPush})
		c, sl := newTestClient(t, Config{}, tc.u, srv.URL)
		require.NoError(t, pushOne(t.Context(), c))
		got := sl.all()
		require.Len(t, got, 1)
		require.GreaterOrEqual(t, got[0], tc.lo, "u=%v", tc.u)
		require.LessOrEqual(t, got[0], tc.hi, "u=%v", tc.u)
	}
	// Real randomness always stays within ±20%.
	for range 1000 {
		d := jitter(10*time.Second, rand.Float64())
		require.GreaterOrEqual(t, d, 8*time.Second)
		require.Less(t, d, 12*time.Second)
	}
}

func TestLayerTwoBudgetTenForOrdinaryRequests(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 429, body: `{"error":"request rate limit exceeded","code":"rate_limited"}`, header: map[string]string{"Retry-After": "2"}})
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL)

	err := pushOne(t.Context(), c)
	require.True(t, IsRateLimited(err), "%v", err)
	require.False(t, IsTerminal(err))
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "rate_limited", ae.Code)
	require.Equal(t, 2*time.Second, ae.RetryAfter)
	require.Equal(t, 10, srv.count(), "10 attempts")
	require.Len(t, sl.all(), 9, "9 waits between them")
}

func TestLayerTwoNeverFailsOver(t *testing.T) {
	t.Parallel()
	a := newScripted(t, step{status: 429, header: map[string]string{"Retry-After": "1"}})
	b := newScripted(t, step{status: 201, body: okPush})
	c, _ := newTestClient(t, Config{}, 0.5, a.URL, b.URL)

	err := pushOne(t.Context(), c)
	require.True(t, IsRateLimited(err))
	require.Equal(t, 10, a.count())
	require.Equal(t, 0, b.count(), "429 never fails over, even when exhausted")
	require.True(t, c.BackendHealth()[a.URL], "429 does not mark the backend unhealthy")

	a2 := newScripted(t, step{status: 429}, step{status: 429}, step{status: 201, body: okPush})
	c2, _ := newTestClient(t, Config{}, 0.5, a2.URL, b.URL)
	require.NoError(t, pushOne(t.Context(), c2))
	require.Equal(t, 3, a2.count())
	require.Equal(t, 0, b.count())
}

const popBody = `{"success":true,"queue":"q","partition":"Default","partitionId":"p1","leaseId":"L","consumerGroup":"__QUEUE_MODE__","partitionsClaimed":1,
"messages":[{"id":"m1","transactionId":"t1","traceId":null,"data":{"n":1},"producerSub":null,"createdAt":"2026-04-26T10:59:28.267966Z","partitionId":"p1","partition":"Default","leaseId":"L","consumerGroup":"__QUEUE_MODE__","queue":"q","retryCount":2}]}`

func TestLongPoll429WaitedOutPastTen(t *testing.T) {
	t.Parallel()
	steps := make([]step, 0, 26)
	for range 25 {
		steps = append(steps, step{status: 429, body: `{"error":"parked consumers","code":"rate_limited"}`, header: map[string]string{"Retry-After": "5"}})
	}
	srv := newScripted(t, append(steps, step{status: 200, body: popBody})...)
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL)

	msgs, err := c.Queue("q").Pop(t.Context(), PopOptions{Wait: true, Timeout: time.Second})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, 26, srv.count())
	require.Len(t, sl.all(), 25)
	for _, d := range sl.all() {
		require.Equal(t, 5*time.Second, d)
	}

	// A non-waiting pop gets the ordinary budget of 10.
	srv2 := newScripted(t, step{status: 429})
	c2, _ := newTestClient(t, Config{}, 0.5, srv2.URL)
	_, err = c2.Queue("q").Pop(t.Context(), PopOptions{})
	require.True(t, IsRateLimited(err))
	require.Equal(t, 10, srv2.count())
}

func TestExplicitMaxAttemptsBoundsBothKinds(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 429, body: `{"error":"x","code":"rate_limited"}`})
	c, _ := newTestClient(t, Config{Retry429: Retry429{MaxAttempts: 4}}, 0.5, srv.URL)

	_, err := c.Queue("q").Pop(t.Context(), PopOptions{Wait: true})
	require.True(t, IsRateLimited(err), "a long-poll pop must surface the 429, not report no messages")
	require.Equal(t, 4, srv.count())

	err = pushOne(t.Context(), c)
	require.True(t, IsRateLimited(err))
	require.Equal(t, 8, srv.count())
}

func TestLayerTwoInsideLayerOne(t *testing.T) {
	t.Parallel()
	// A 429 is retried in place; a following 5xx is a layer-one failure that fails over.
	a := newScripted(t, step{status: 429}, step{status: 500, body: `{"error":"x"}`})
	b := newScripted(t, step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{}, 0.5, a.URL, b.URL)
	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, 2, a.count())
	require.Equal(t, 1, b.count())
	require.Equal(t, []time.Duration{500 * time.Millisecond, time.Second}, sl.all())
}

func TestContextCancelStopsRetries(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 429})
	c, err := New(Config{URLs: []string{srv.URL}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Queue("q").Pop(ctx, PopOptions{Wait: true})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, IsRateLimited(err))
}

func TestPop204IsEmptyNotError(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 204})
	c, sl := newTestClient(t, Config{}, 0.5, srv.URL)
	msgs, err := c.Queue("q").Partition("p").Group("g").SubscriptionMode(SubscribeNew).
		Pop(t.Context(), PopOptions{Batch: 5, Wait: true, Timeout: 2 * time.Second, AutoAck: true})
	require.NoError(t, err)
	require.Empty(t, msgs)
	require.Empty(t, sl.all())
	r := srv.requests()[0]
	require.Equal(t, "/api/v1/pop/queue/q/partition/p", r.path)
	require.Equal(t, "autoAck=true&batch=5&consumerGroup=g&subscriptionMode=new&timeout=2000&wait=true", r.query)
}

func TestPopTerminalErrorIsNeverEmpty(t *testing.T) {
	t.Parallel()
	for _, st := range []int{401, 403} {
		srv := newScripted(t, step{status: st, body: `{"error":"Insufficient permissions","code":"cluster_suspended"}`})
		c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
		msgs, err := c.Queue("q").Pop(t.Context(), PopOptions{Wait: true})
		require.Nil(t, msgs)
		require.True(t, IsTerminal(err))
		require.Equal(t, st, HTTPStatus(err))
		require.Equal(t, 1, srv.count())
	}
}

func TestPopDecodesMessages(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 200, body: popBody})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	msgs, err := c.Queue("q").Pop(t.Context(), PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, "m1", m.ID)
	require.Equal(t, "t1", m.TransactionID)
	require.Equal(t, "L", m.LeaseID)
	require.Equal(t, "p1", m.PartitionID)
	require.Equal(t, QueueMode, m.ConsumerGroup)
	require.Equal(t, 2, m.RetryCount)
	require.Equal(t, 267966000, m.CreatedAt.Nanosecond())
	var v struct{ N int }
	require.NoError(t, m.Decode(&v))
	require.Equal(t, 1, v.N)
}

func TestAuthorizationHeader(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{URLs: []string{srv.URL}, Token: "tok"})
	require.NoError(t, err)
	_, err = c.Queue("q").Pop(t.Context(), PopOptions{})
	require.NoError(t, err)
	require.Equal(t, "Bearer tok", got)
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}
	d, ok := retryAfter(h, now)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, d)
	_, ok = retryAfter(http.Header{}, now)
	require.False(t, ok)
	_, ok = retryAfter(http.Header{"Retry-After": {"soon"}}, now)
	require.False(t, ok)
}

func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	err := error(&APIError{Status: 404, Code: "no_such_route", Message: "Not Found"})
	require.True(t, IsNotFound(err))
	require.False(t, isMissing(err))
	require.True(t, isMissing(&APIError{Status: 404, Message: "Queue not found"}))
	require.Equal(t, 0, HTTPStatus(errors.New("x")))
}

func TestPopMatchingNamespaceTask(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 204})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	msgs, err := c.Matching("billing", "invoice").Pop(t.Context(), PopOptions{Batch: 3})
	require.NoError(t, err)
	require.Empty(t, msgs)
	r := srv.requests()[0]
	require.Equal(t, "/api/v1/pop", r.path)
	require.Equal(t, "batch=3&namespace=billing&task=invoice", r.query)

	_, err = c.Queue("").Pop(t.Context(), PopOptions{})
	require.Error(t, err)
}

func TestFailoverRotatesThroughThreeURLs(t *testing.T) {
	t.Parallel()
	a := newScripted(t, step{status: 502})
	b := newScripted(t, step{status: 503})
	cc := newScripted(t, step{status: 201, body: okPush})
	c, sl := newTestClient(t, Config{}, 0.5, a.URL, b.URL, cc.URL)
	require.NoError(t, pushOne(t.Context(), c))
	require.Equal(t, []int{1, 1, 1}, []int{a.count(), b.count(), cc.count()})
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, sl.all())
	require.Equal(t, map[string]bool{a.URL: false, b.URL: false, cc.URL: true}, c.BackendHealth())
}
