package httpapi

import (
	"context"
	"net/http"
	"sync"
)

// Large request bodies are admitted through a byte budget (docs/decisions.md, "Memory bound"): a body
// costs a few times its size while it is decoded and stored, so unbounded concurrency of large bodies
// is unbounded memory. Bodies under largeBody pass freely; larger ones (or ones of unknown length)
// wait, with their request's context, until the bytes in flight leave room for them.

const (
	largeBody = 1 << 20 // smaller bodies are not gated
	gateUnit  = 1 << 20 // the budget is counted in MiB tokens
)

// bodyGate is a weighted semaphore in MiB. One acquirer at a time takes its tokens, so two large
// bodies can never each hold part of the budget and wait for the other.
type bodyGate struct {
	mu     sync.Mutex // serialises acquirers
	tokens chan struct{}
}

func newBodyGate(budget int64) *bodyGate {
	n := max(int(budget/gateUnit), 1)
	g := &bodyGate{tokens: make(chan struct{}, n)}
	for range n {
		g.tokens <- struct{}{}
	}
	return g
}

// acquire takes the tokens for a body of size bytes; release gives them back.
func (g *bodyGate) acquire(ctx context.Context, size int64) (release func(), err error) {
	n := min(int((size+gateUnit-1)/gateUnit), cap(g.tokens))
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range n {
		select {
		case <-g.tokens:
		case <-ctx.Done():
			for range i {
				g.tokens <- struct{}{}
			}
			return nil, ctx.Err()
		}
	}
	return func() {
		for range n {
			g.tokens <- struct{}{}
		}
	}, nil
}

// admitBody waits for budget when r carries a large (or unknown-length) body; release is never nil.
func (s *Server) admitBody(r *http.Request) (release func(), err error) {
	if s.bodies == nil || r.Body == nil || r.Body == http.NoBody || (r.ContentLength >= 0 && r.ContentLength < largeBody) {
		return func() {}, nil
	}
	size := r.ContentLength
	if size < 0 || size > s.opt.MaxBodyBytes {
		size = s.opt.MaxBodyBytes
	}
	return s.bodies.acquire(r.Context(), size)
}
