package proxy

import (
	"sync"
	"time"

	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// Limiter names, used in metrics and logs.
const (
	limiterRequests = "request_rate"
	limiterMessages = "message_rate"
	limiterParked   = "parked_slots"
)

// denial says which limiter refused and when capacity returns; tooLarge means never: the request needs
// more tokens than the bucket holds when full (413, not 429), burst is then that capacity.
type denial struct {
	limiter    string
	retryAfter int
	tooLarge   bool
	burst      float64
}

// limitParams are the plan values the in-memory state was built from; a change rebuilds it.
type limitParams struct {
	reqRate, reqBurst, msgRate, msgBurst float64
	slots                                int
}

func paramsOf(p proxystore.Plan) limitParams {
	return limitParams{p.RequestRate, p.RequestBurst, p.MessageRate, p.MessageBurst, p.ParkedSlots}
}

// clusterLimits is one cluster's buckets and parked-consumer slots.
type clusterLimits struct {
	mu     sync.Mutex // protects everything below
	params limitParams
	req    *Bucket // nil: unlimited
	msg    *Bucket // nil: unlimited
	parked int     // slots in use
}

// limiter holds the rate-limit state of every cluster seen since start.
type limiter struct {
	nowFunc func() time.Time
	mu      sync.Mutex // protects byCluster
	byID    map[int64]*clusterLimits
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{nowFunc: now, byID: map[int64]*clusterLimits{}}
}

func (l *limiter) forCluster(c proxystore.Cluster) *clusterLimits {
	l.mu.Lock()
	cl, ok := l.byID[c.ID]
	if !ok {
		cl = &clusterLimits{}
		l.byID[c.ID] = cl
	}
	l.mu.Unlock()

	p := paramsOf(c.Plan)
	cl.mu.Lock()
	if !ok || cl.params != p {
		now := l.nowFunc()
		cl.params = p
		cl.req, cl.msg = nil, nil
		if p.reqRate > 0 {
			cl.req = NewBucket(p.reqRate, p.reqBurst, now)
		}
		if p.msgRate > 0 {
			cl.msg = NewBucket(p.msgRate, p.msgBurst, now)
		}
	}
	cl.mu.Unlock()
	return cl
}

// admit decides one request costing one request token and messages message tokens, which parks a
// consumer when park is set. On success the tokens are taken and, for a parked request, a slot is held
// until release is called. On denial nothing is taken (so a shadow-mode deny cannot distort later
// decisions) and the denial with the longest Retry-After is returned, or first a push larger than the
// message burst, which no wait would admit.
func (cl *clusterLimits) admit(now time.Time, messages int, park bool) (release func(), d *denial) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.msg != nil && messages > 0 && !cl.msg.Fits(float64(messages)) {
		return func() {}, &denial{limiter: limiterMessages, tooLarge: true, burst: cl.msg.Burst}
	}
	worse := func(n *denial) {
		if d == nil || n.retryAfter > d.retryAfter {
			d = n
		}
	}
	if cl.req != nil {
		if ok, ra := cl.req.Check(now, 1); !ok {
			worse(&denial{limiter: limiterRequests, retryAfter: ra})
		}
	}
	if cl.msg != nil && messages > 0 {
		if ok, ra := cl.msg.Check(now, float64(messages)); !ok {
			worse(&denial{limiter: limiterMessages, retryAfter: ra})
		}
	}
	if park && cl.params.slots > 0 && cl.parked >= cl.params.slots {
		worse(&denial{limiter: limiterParked, retryAfter: parkedRetryAfter})
	}
	if d != nil {
		return func() {}, d
	}
	if cl.req != nil {
		cl.req.Take(now, 1)
	}
	if cl.msg != nil && messages > 0 {
		cl.msg.Take(now, float64(messages))
	}
	if !park || cl.params.slots <= 0 {
		return func() {}, nil
	}
	cl.parked++
	var once sync.Once
	return func() {
		once.Do(func() {
			cl.mu.Lock()
			cl.parked--
			cl.mu.Unlock()
		})
	}, nil
}
