package engine

import (
	"context"
	"sync"
)

// coalescer merges concurrent requests of one kind into few database round-trips. Each of its workers
// takes one waiting request and, without waiting for more, everything else already queued up to
// maxItems; so an idle broker answers a lone request at once and a busy one batches by itself.
type coalescer[Req any, Resp any] struct {
	ins      []chan *call[Req, Resp] // one per worker when sharded, else one shared by all
	shard    func(Req) uint64        // nil: any worker takes any request
	maxItems int
	size     func(Req) int
	exec     func(ctx context.Context, reqs []Req) ([]Resp, error) // runs reqs merged, answers per request
	wg       sync.WaitGroup
}

type call[Req any, Resp any] struct {
	req  Req
	resp Resp
	err  error
	done chan struct{}
}

func newCoalescer[Req any, Resp any](workers, maxItems int, size func(Req) int,
	exec func(ctx context.Context, reqs []Req) ([]Resp, error)) *coalescer[Req, Resp] {
	return &coalescer[Req, Resp]{ins: []chan *call[Req, Resp]{make(chan *call[Req, Resp], workers*64)}, maxItems: maxItems, size: size, exec: exec}
}

// sharded gives every worker its own queue and sends each request to the worker shard(req) picks, so
// requests with the same key are never in two concurrent batches. Pushes use it with the partition as
// key: batches of different workers then never wait for each other's partition locks, and commit in
// parallel instead of one after the other.
func (c *coalescer[Req, Resp]) sharded(workers int, shard func(Req) uint64) *coalescer[Req, Resp] {
	c.shard = shard
	c.ins = make([]chan *call[Req, Resp], workers)
	for i := range c.ins {
		c.ins[i] = make(chan *call[Req, Resp], 64)
	}
	return c
}

// start runs the workers until ctx ends. Batches run under ctx, not under any one request's context:
// one client hanging up must not cancel the others' writes.
func (c *coalescer[Req, Resp]) start(ctx context.Context, workers int) {
	for i := range workers {
		in := c.ins[i%len(c.ins)]
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.work(ctx, in)
		}()
	}
}

func (c *coalescer[Req, Resp]) wait() { c.wg.Wait() }

func (c *coalescer[Req, Resp]) work(ctx context.Context, in chan *call[Req, Resp]) {
	var batch []*call[Req, Resp]
	reqs := make([]Req, 0, 16)
	for {
		var first *call[Req, Resp]
		select {
		case <-ctx.Done():
			return
		case first = <-in:
		}
		batch = append(batch[:0], first)
		n := c.size(first.req)
	drain:
		for n < c.maxItems {
			select {
			case next := <-in:
				batch = append(batch, next)
				n += c.size(next.req)
			default:
				break drain
			}
		}
		reqs = reqs[:0]
		for _, cl := range batch {
			reqs = append(reqs, cl.req)
		}
		resps, errs := c.run(ctx, reqs)
		for i, cl := range batch {
			cl.resp, cl.err = resps[i], errs[i]
			close(cl.done)
		}
		// The slices are kept for the next round; zeroing them lets the requests just served (a large
		// push's payloads) be collected now rather than whenever this worker next runs.
		clear(batch)
		clear(reqs)
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

// do submits req and waits for its answer or for ctx to end.
func (c *coalescer[Req, Resp]) do(ctx context.Context, req Req) (Resp, error) {
	cl := &call[Req, Resp]{req: req, done: make(chan struct{})}
	var zero Resp
	in := c.ins[0]
	if c.shard != nil {
		in = c.ins[c.shard(req)%uint64(len(c.ins))]
	}
	select {
	case in <- cl:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case <-cl.done:
		return cl.resp, cl.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
