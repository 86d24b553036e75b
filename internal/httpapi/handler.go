package httpapi

import (
	"context"
	"net/http"
	"time"
)

// Every route decodes the request, calls the engine once and marshals the answer. Most routes differ
// only in the middle step, so they are written as a call from request to answer and adapted into a
// handler here, where the answering is written once. The few routes that pick their own status or
// write something other than one JSON value (pop's 204, /health's 503, a stream registration's 409,
// the Prometheus text) are handlers themselves.

// handler is what the route table runs; an error it returns is answered by writeError.
type handler func(s *Server, w http.ResponseWriter, r *http.Request) error

// request is what a call reads: the HTTP request, and its body through decode.
type request struct {
	*http.Request
	w   http.ResponseWriter
	max int64
}

func newRequest(s *Server, w http.ResponseWriter, r *http.Request) request {
	return request{Request: r, w: w, max: s.opt.MaxBodyBytes}
}

// decode parses the JSON body into v (decodeBody: the size cap, the input limits, `bad body:` 400s).
func (q request) decode(v any) error { return decodeBody(q.w, q.Request, q.max, v) }

// call is a route written as request → answer.
type call[T any] func(s *Server, q request) (T, error)

// ok adapts a call whose answer is 200 with its result.
func ok[T any](c call[T]) handler { return reply(http.StatusOK, c) }

// created adapts a call whose answer is 201 with its result.
func created[T any](c call[T]) handler { return reply(http.StatusCreated, c) }

func reply[T any](status int, c call[T]) handler {
	return func(s *Server, w http.ResponseWriter, r *http.Request) error {
		v, err := c(s, newRequest(s, w, r))
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// readFilter is what the read routes narrow their answer by, read from the query string in one
// place. Each route hands on the fields its engine call takes; the others stay empty.
type readFilter struct {
	From, To                                 time.Time // the window of a series (see series)
	Queue, Partition, Namespace, Task, Group string
	Hostname, WorkerID                       string // a broker of the dashboard's samples
	Interval                                 string // an ingest series' bucket width
}

func filterOf(r *http.Request) readFilter {
	v := r.URL.Query()
	return readFilter{Queue: v.Get("queue"), Partition: v.Get("partition"), Namespace: v.Get("namespace"),
		Task: v.Get("task"), Group: v.Get("consumerGroup"), Hostname: v.Get("hostname"),
		WorkerID: v.Get("workerId"), Interval: v.Get("interval")}
}

// series adapts a time-series read: the window is from/to (RFC 3339), by default the last def before now.
func series[T any](def time.Duration, read func(s *Server, ctx context.Context, f readFilter) (T, error)) handler {
	return ok(func(s *Server, q request) (T, error) {
		f := filterOf(q.Request)
		var err error
		if f.From, f.To, err = timeRange(q.Request, def); err != nil {
			var zero T
			return zero, err
		}
		return read(s, q.Context(), f)
	})
}
