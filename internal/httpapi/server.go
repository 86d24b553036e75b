package httpapi

import (
	"cmp"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/httpx"
	"github.com/queen-go/queen/internal/metrics"
	"github.com/queen-go/queen/internal/streams"
	"github.com/queen-go/queen/internal/views"
)

// Authorizer checks a request against a route's access level. It returns the caller (empty when
// authentication is off) or an *auth.Error.
type Authorizer interface {
	Authorize(r *http.Request, level auth.Access) (auth.Principal, error)
}

// Options configure the transport.
type Options struct {
	Auth             Authorizer // nil: every route is open
	MaxBodyBytes     int64
	MaxBatchItems    int // entries of a push, ack batch or transaction (batchcap.go); 0: DefaultMaxBatchItems
	DefaultTimeout   time.Duration
	DefaultBatchSize int
	Version          string
	Metrics          *metrics.Metrics    // request counts and latencies; the JSON /metrics numbers (nil: none)
	Gatherer         prometheus.Gatherer // served by /metrics/prometheus (nil: 404)
	BodyBudget       int64               // bytes of large bodies in flight at once (bodygate.go); 0: MaxBodyBytes
	MetricsAccess    auth.Access         // access level of the metrics routes; "" = the route table's (public)
	// Dashboard serves every GET that no route claims outside /api/ (the web UI); nil: a placeholder page.
	Dashboard http.Handler
}

// Server answers the broker's HTTP API.
type Server struct {
	eng     *engine.Engine   // queue semantics: push, pop, ack, groups, DLQ, maintenance
	views   *views.Views     // the read models: status, analytics, samples, queues, messages, traces
	streams *streams.Service // the stream processor's registry, state and cycles
	log     *slog.Logger
	opt     Options
	mux     *http.ServeMux
	// bodies admits large request bodies within Options.BodyBudget.
	bodies *bodyGate
}

// New builds the handler for the route table.
func New(eng *engine.Engine, vw *views.Views, sv *streams.Service, log *slog.Logger, opt Options) *Server {
	s := &Server{eng: eng, views: vw, streams: sv, log: log, opt: opt, mux: http.NewServeMux()}
	s.bodies = newBodyGate(cmp.Or(opt.BodyBudget, opt.MaxBodyBytes, 64<<20))
	for _, rt := range Routes {
		s.mux.Handle(rt.Method+" "+rt.Pattern, s.wrap(rt))
	}
	// Everything else: a JSON 404 for the API and for any non-GET, the dashboard for the rest.
	s.mux.HandleFunc("/", s.fallback)
	return s
}

func (s *Server) wrap(rt Route) http.Handler {
	params := pathParams(rt.Pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headRefused(r, rt) {
			s.writeError(w, r, errNoSuchRoute)
			return
		}
		if s.opt.Auth != nil {
			p, err := s.opt.Auth.Authorize(r, s.access(rt))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		}
		if err := checkParams(r, params); err != nil {
			s.writeError(w, r, err)
			return
		}
		release, err := s.admitBody(r)
		if err != nil {
			return // the client went away while waiting
		}
		defer release()
		if err := rt.handle(s, w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// The CORS headers of every response, shared (canonical keys, set without h.Set's one-element slice
// per call and request): net/http only reads a response's header values, and copies them when it
// clones the header.
var (
	corsOrigin  = []string{"*"}
	corsMethods = []string{"GET, POST, PUT, DELETE, OPTIONS"}
	corsHeaders = []string{"Content-Type, Authorization"}
)

// ServeHTTP adds what every response carries (CORS, panic recovery, the access log line) around the mux.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r = withRequestID(w, r)
	h := w.Header()
	h["Access-Control-Allow-Origin"] = corsOrigin
	h["Access-Control-Allow-Methods"] = corsMethods
	h["Access-Control-Allow-Headers"] = corsHeaders
	sw := &httpx.StatusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			id := requestID(r.Context())
			s.log.ErrorContext(r.Context(), "handler panic", slog.Any("panic", p), slog.String("path", r.URL.Path),
				slog.String("request_id", id))
			if sw.Status == 0 {
				writeJSON(sw, http.StatusInternalServerError, envelope{Error: "internal error (request " + id + ")", RequestID: id})
			}
		}
		s.log.DebugContext(r.Context(), "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.Status), slog.Duration("duration", time.Since(start)))
		s.observeRequest(r, sw.Status, time.Since(start))
	}()
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Max-Age", "86400")
		writeNoContent(sw)
		return
	}
	s.mux.ServeHTTP(sw, r)
}
