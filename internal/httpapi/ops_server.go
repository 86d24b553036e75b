package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/metrics"
)

// BufferStats is the disk spool as the operations surface sees it; the broker's spool satisfies it.
type BufferStats interface {
	Pending() int64
	Failed() int64
}

// OpsOptions wire the operations surface into the transport. Zero values disable each part.
type OpsOptions struct {
	Metrics  *metrics.Metrics    // request counts and latencies; the JSON /metrics numbers
	Gatherer prometheus.Gatherer // served by /metrics/prometheus
	Buffers  BufferStats         // nil: the spool reports zeros
}

// observeRequest records one answered request under its route pattern (set by the mux).
func (s *Server) observeRequest(r *http.Request, status int, d time.Duration) {
	if s.opt.Ops.Metrics == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	s.opt.Ops.Metrics.ObserveRequest(r.Pattern, r.Method, status, d)
}

func notFound(msg string) error { return &apiError{status: http.StatusNotFound, msg: msg} }

// isNotFound reports whether an engine error means the addressed row does not exist.
func isNotFound(err error) bool { return errors.Is(err, engine.ErrNotFound) }

const msLayout = "2006-01-02T15:04:05.000Z"

func ts(t time.Time) string { return t.UTC().Format(msLayout) }

func tsOrNil(valid bool, t time.Time) any {
	if !valid {
		return nil
	}
	return ts(t)
}

func textOrNil(valid bool, s string) any {
	if !valid {
		return nil
	}
	return s
}

func uuidOrNil(valid bool, b [16]byte) any {
	if !valid {
		return nil
	}
	return uuid.UUID(b).String()
}

// timeRange reads from/to (RFC 3339) with defaults now-def .. now.
func timeRange(r *http.Request, def time.Duration) (time.Time, time.Time, error) {
	now := time.Now().UTC()
	from, to := now.Add(-def), now
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := r.URL.Query().Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return from, to, badRequest(p.name + " must be an RFC 3339 timestamp")
			}
			*p.dst = t.UTC()
		}
	}
	if to.Before(from) {
		return from, to, badRequest("from must not be after to")
	}
	return from, to, nil
}

// bucketMinutes picks the bucket width for a time span (as the original: 1/5/15/60/360 minutes).
func bucketMinutes(span time.Duration) int {
	switch {
	case span <= 2*time.Hour:
		return 1
	case span <= 12*time.Hour:
		return 5
	case span <= 48*time.Hour:
		return 15
	case span <= 14*24*time.Hour:
		return 60
	}
	return 360
}

func itoa(n int) string { return strconv.Itoa(n) }
