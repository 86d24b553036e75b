package engine

import (
	"context"
	"sync"
)

// coalescer merges concurrent requests of one kind into few database round-trips. At most `workers`
// batches run at once (per shard when sharded). A slot is free only while no request waits, so a
// request that finds one runs at once, alone, on its caller's goroutine. Requests that arrive while
// every slot is taken wait; the batch that ends next answers its caller and leaves its slot to a new
// goroutine that runs everything waiting, up to maxItems per batch, until nothing waits. So an idle
// broker answers a lone request at once and a busy one batches by itself. Compared with worker
// goroutines that every request is handed to, a lone request is spared two wake-ups (the worker's,
// then its caller's), each of which waits for a core on a busy host: in fanout-g10 on the 2-core bench
// host the workers waited 0.4-0.6 ms per wake-up.
type coalescer[Req any, Resp any] struct {
	shards   []*batchQueue[Req, Resp] // one per worker when sharded, else one shared by all
	shard    func(Req) uint64         // nil: any slot takes any request
	route    *router                  // when sharded: the shard of each key in flight
	maxItems int
	size     func(Req) int
	exec     func(ctx context.Context, reqs []Req) ([]Resp, error) // runs reqs merged, answers per request
	// ctx is the engine's (start): batches run under it, not under any one request's context, since one
	// client hanging up must not cancel the others' writes. started is closed once ctx is set.
	ctx     context.Context
	started chan struct{}
	wg      sync.WaitGroup // batches running
}

// batchQueue is the requests waiting for one shard's batches, and how many of its batch slots are taken.
type batchQueue[Req any, Resp any] struct {
	mu      sync.Mutex
	waiting []*call[Req, Resp]
	running int
	slots   int
}

type call[Req any, Resp any] struct {
	req  Req
	key  uint64 // shard(req), when sharded
	resp Resp
	err  error
	done chan struct{}
}

func newCoalescer[Req any, Resp any](workers, maxItems int, size func(Req) int,
	exec func(ctx context.Context, reqs []Req) ([]Resp, error)) *coalescer[Req, Resp] {
	return &coalescer[Req, Resp]{shards: []*batchQueue[Req, Resp]{{slots: max(workers, 1)}}, maxItems: maxItems,
		size: size, exec: exec, started: make(chan struct{})}
}

// sharded gives every worker slot its own queue and keys each request by shard(req): a request goes
// to the queue that holds requests of its key, waiting or running, so requests with the same key are
// never in two concurrent batches. Pushes use it with the partition as key: concurrent batches then
// never wait for each other's partition locks, and commit in parallel instead of one after the other.
// A key with nothing in flight goes to the first queue with fewer than fill items in flight (or, all
// full, the one with fewest): a light load is merged into few large batches, which cost the database
// least per item, and a heavy one spreads over every worker.
func (c *coalescer[Req, Resp]) sharded(workers, fill int, shard func(Req) uint64) *coalescer[Req, Resp] {
	c.shard = shard
	c.shards = make([]*batchQueue[Req, Resp], max(workers, 1))
	for i := range c.shards {
		c.shards[i] = &batchQueue[Req, Resp]{slots: 1}
	}
	c.route = &router{keys: map[uint64]routed{}, load: make([]int, len(c.shards)), fill: fill}
	return c
}

// router places the keys of a sharded coalescer. Locking: mu is a leaf.
type router struct {
	mu   sync.Mutex
	keys map[uint64]routed // keys with requests in flight
	load []int             // items in flight per shard
	fill int
}

type routed struct{ shard, calls int }

// place returns the shard of key for a request of size items.
func (r *router) place(key uint64, items int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[key]
	if !ok {
		k.shard = -1
		least := 0
		for i, l := range r.load {
			if l < r.fill {
				k.shard = i
				break
			}
			if l < r.load[least] {
				least = i
			}
		}
		if k.shard < 0 {
			k.shard = least
		}
	}
	k.calls++
	r.keys[key] = k
	r.load[k.shard] += items
	return k.shard
}

// done takes back what place counted for a request of key that was answered.
func (r *router) done(key uint64, items int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.keys[key]
	r.load[k.shard] -= items
	if k.calls--; k.calls == 0 {
		delete(r.keys, key)
	} else {
		r.keys[key] = k
	}
}

// start lets batches run, under ctx, until it ends; a request submitted before waits for it.
func (c *coalescer[Req, Resp]) start(ctx context.Context) {
	c.ctx = ctx
	close(c.started)
}

// wait returns once no batch is running.
func (c *coalescer[Req, Resp]) wait() { c.wg.Wait() }

// do submits req and waits for its answer or for ctx to end. A submitted request runs either way, as
// it did when it was handed to a worker; a caller that runs the batch itself waits for it whatever ctx
// says.
func (c *coalescer[Req, Resp]) do(ctx context.Context, req Req) (Resp, error) {
	var zero Resp
	select {
	case <-c.started:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	q := c.shards[0]
	cl := &call[Req, Resp]{req: req, done: make(chan struct{})}
	if c.route != nil {
		cl.key = c.shard(req)
		q = c.shards[c.route.place(cl.key, c.size(req))]
	}
	q.mu.Lock()
	q.waiting = append(q.waiting, cl)
	lead := q.running < q.slots
	if lead {
		q.running++
		c.wg.Add(1)
	}
	q.mu.Unlock()
	if lead {
		if c.lead(q, cl) {
			return cl.resp, cl.err
		}
		// Another slot's batch took the request before this slot's first did: the answer comes from
		// there.
	}
	select {
	case <-cl.done:
		return cl.resp, cl.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// lead runs batches of q's waiting requests in a slot it holds. With own, the request of the caller
// that took the slot, it returns once own is answered and hands the slot on to a new goroutine if
// requests wait, so that the caller is answered now; with own nil it runs batches until none waits.
// answered is false when nothing waited: with several slots, another's batch may have taken own.
func (c *coalescer[Req, Resp]) lead(q *batchQueue[Req, Resp], own *call[Req, Resp]) (answered bool) {
	var batch []*call[Req, Resp]
	var reqs []Req
	defer func() {
		// A batch that panics must not keep its slot: every later request would wait for it. The panic
		// goes on. A slot is free only while nothing waits, so a caller that takes one runs a batch of
		// its own request alone, and its goroutine is an HTTP handler's, whose server logs the panic; in
		// a goroutine that took over the slot it ends the process, as in any goroutine.
		if r := recover(); r != nil {
			for _, cl := range batch {
				if cl != nil { // nil: answered before the panic
					c.settled(cl)
				}
			}
			q.mu.Lock()
			q.running--
			q.mu.Unlock()
			c.wg.Done()
			panic(r)
		}
	}()
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 {
			q.running--
			q.mu.Unlock()
			c.wg.Done()
			return answered
		}
		if answered {
			// Requests wait, and the caller that took the slot has its answer: a new goroutine
			// takes over the slot (and the wg count) so that the caller goes on now.
			q.mu.Unlock()
			go c.lead(q, nil)
			return true
		}
		n := 0
		k := 0
		for k < len(q.waiting) && (k == 0 || n < c.maxItems) {
			n += c.size(q.waiting[k].req)
			k++
		}
		batch = append(batch[:0], q.waiting[:k]...)
		clear(q.waiting[:k]) // the queue's array must not keep answered requests (a large push's payloads)
		q.waiting = q.waiting[k:]
		q.mu.Unlock()
		reqs = reqs[:0]
		for _, cl := range batch {
			reqs = append(reqs, cl.req)
		}
		resps, errs := c.run(c.ctx, reqs)
		for i, cl := range batch {
			c.settled(cl)
			batch[i] = nil
			cl.resp, cl.err = resps[i], errs[i]
			if cl == own {
				answered = true
			} else {
				close(cl.done)
			}
		}
		clear(reqs)
	}
}

// settled tells the router that cl's batch ended.
func (c *coalescer[Req, Resp]) settled(cl *call[Req, Resp]) {
	if c.route != nil {
		c.route.done(cl.key, c.size(cl.req))
	}
}

// run executes a merged batch. When it fails, a batch that could not reach the database fails as a
// whole (each request alone would only wait for it again); otherwise each request is retried alone,
// so that one bad request does not fail the others merged with it.
func (c *coalescer[Req, Resp]) run(ctx context.Context, reqs []Req) ([]Resp, []error) {
	errs := make([]error, len(reqs))
	resps, err := c.exec(ctx, reqs)
	if err == nil {
		return resps, errs
	}
	resps = make([]Resp, len(reqs))
	if len(reqs) == 1 || unreachable(err) {
		for i := range errs {
			errs[i] = err
		}
		return resps, errs
	}
	for i, r := range reqs {
		out, err := c.exec(ctx, []Req{r})
		if err == nil {
			resps[i] = out[0]
		}
		errs[i] = err
	}
	return resps, errs
}
