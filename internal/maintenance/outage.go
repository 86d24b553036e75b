package maintenance

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// OutageLog words what the background jobs see while PostgreSQL is unreachable: every job's pass fails
// then, several times a second across the jobs, and a warning per failed pass buries everything else
// in the log. The outage is logged once when a job first meets it, then summarised every SummaryEvery
// while it lasts, and its end once every job that met it has run a pass again. One OutageLog is shared
// by all the loops of a broker (Loop.ReportOutages).
type OutageLog struct {
	log *slog.Logger
	now func() time.Time

	mu          sync.Mutex
	since       time.Time       // zero: no outage
	lastSummary time.Time       // when the outage was last logged
	failing     map[string]bool // the loops whose last pass met the outage
	skipped     int             // passes failed since the outage began
}

// SummaryEvery is how often a lasting outage is logged again.
const SummaryEvery = time.Minute

// NewOutageLog logs to log.
func NewOutageLog(log *slog.Logger) *OutageLog {
	return &OutageLog{log: log, now: time.Now, failing: map[string]bool{}}
}

// Unreachable reports whether err means PostgreSQL could not be reached (or no connection could be had
// from it), rather than a failure of the pass itself.
func Unreachable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrPool)
}

// failed records a pass of loop that met the outage (err).
func (o *OutageLog) failed(loop string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	o.failing[loop] = true
	o.skipped++
	switch {
	case o.since.IsZero():
		o.since, o.lastSummary = now, now
		o.log.Warn("PostgreSQL unreachable: the background jobs skip their passes until it returns",
			slog.String("loop", loop), slog.String("error", oneLine(err)))
	case now.Sub(o.lastSummary) >= SummaryEvery:
		o.lastSummary = now
		o.log.Warn("PostgreSQL still unreachable", slog.Duration("for", now.Sub(o.since).Round(time.Second)),
			slog.Int("skipped_passes", o.skipped), slog.String("error", oneLine(err)))
	}
}

// succeeded records a pass of loop that ran; the outage ends when no loop that met it still fails.
func (o *OutageLog) succeeded(loop string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.failing[loop] {
		return
	}
	delete(o.failing, loop)
	if len(o.failing) > 0 || o.since.IsZero() {
		return
	}
	o.log.Info("PostgreSQL reachable again: the background jobs run", slog.Duration("after", o.now().Sub(o.since).Round(time.Second)),
		slog.Int("skipped_passes", o.skipped))
	o.since, o.skipped = time.Time{}, 0
}

// oneLine is err's text on one line: joined errors (the store's ErrUnavailable with the driver's
// cause) print one per line, the same one several times when wrapped at several levels.
func oneLine(err error) string {
	var parts []string
	for p := range strings.SplitSeq(err.Error(), "\n") {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}
