package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Replica sends the read models (queue and message browsing, traces, status, analytics) to a streaming
// standby (DATABASE_READ_URL) while it is fresh enough, and to the primary otherwise. Nothing that
// writes, nor any statement of the queue semantics, ever reads from it: a pop or an ack decided on a
// stale row would break delivery, while a dashboard a second behind breaks nothing.
//
// Freshness is measured, not inferred from the standby alone (whose replay timestamp stands still when
// the primary is idle, and whose receive position stops when its stream breaks): every probe reads the
// primary's WAL position and keeps it with the time it was read, then reads how far the standby has
// replayed. The standby holds every commit made before the newest kept position it has replayed past,
// so its lag is the time since that position was read. While that lag is at most maxLag the reads go to
// the standby; past it, or when the standby does not answer or is not a standby, they go to the primary.
type Replica struct {
	primary *Store
	standby *Store
	maxLag  time.Duration
	every   time.Duration
	log     *slog.Logger

	state  atomic.Pointer[ReplicaState]
	marks  []walMark // the primary's positions not yet replayed past, oldest first; the probe's alone
	cancel context.CancelFunc
	done   chan struct{}
}

// walMark is the primary's WAL position at a time.
type walMark struct {
	at  time.Time
	lsn int64
}

// ReplicaState is what the last probe found.
type ReplicaState struct {
	Status  string        // one of the Replica* statuses
	Lag     time.Duration // ReplicaOK and ReplicaLagging: commits older than this are on the standby
	Checked time.Time     // when the probe ran; zero before the first
}

// LagMeasured reports whether Lag holds a measured lag: the standby answered as a standby and the
// primary's position was known.
func (s ReplicaState) LagMeasured() bool { return s.Status == ReplicaOK || s.Status == ReplicaLagging }

// The statuses of a read replica. Only ReplicaOK serves reads.
const (
	ReplicaStarting    = "starting"
	ReplicaOK          = "ok"
	ReplicaLagging     = "lagging"
	ReplicaUnreachable = "unreachable"
	ReplicaNotStandby  = "not a standby"
)

// replicaProbe is how often the lag is measured; a read may so see up to maxLag plus this.
const replicaProbe = time.Second

// maxWalMarks bounds the positions kept for a standby far behind: its lag is then at least the age
// of the oldest one.
const maxWalMarks = 3600

// OpenReplica opens the pools of the standby at o.URL (o as for Open; no migration, and a URL naming
// several hosts is taken as given). It connects lazily: an unreachable standby is not an error, the
// reads go to primary until it answers. Start runs the probe; Stop closes it. Each change of status is
// logged: whether the reads go to the standby must not change silently.
func OpenReplica(ctx context.Context, primary *Store, o Options, maxLag time.Duration, log *slog.Logger) (*Replica, error) {
	o.DeferMigrate, o.standby = true, true
	st, err := Open(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("store: read replica: %w", err)
	}
	r := &Replica{primary: primary, standby: st, maxLag: maxLag, every: replicaProbe, log: log}
	r.state.Store(&ReplicaState{Status: ReplicaStarting})
	return r, nil
}

// Reads returns the store the read models should use now: the standby while the last probe, made
// recently, found it fresh enough; the primary otherwise.
func (r *Replica) Reads() *Store {
	s := r.state.Load()
	if s.Status == ReplicaOK && time.Since(s.Checked) < 3*r.every {
		return r.standby
	}
	return r.primary
}

// Failed reports that a read on the standby failed with err, a fault of the standby itself
// (ReplicaFault): the reads go to the primary until the next probe finds it serving again.
func (r *Replica) Failed(ctx context.Context, err error) {
	r.set(ctx, ReplicaState{Status: ReplicaUnreachable, Checked: time.Now()}, err)
}

// ReplicaFault reports whether err, from a read on a standby, is the standby's fault rather than the
// statement's: the standby is unreachable, or it cancelled the read to replay WAL that conflicted with
// it (SQLSTATE 40001; nothing on a standby runs serializable, so that code means a recovery conflict).
// The same read on the primary should then succeed.
func ReplicaFault(err error) bool {
	var pe *PgError
	return errors.Is(err, ErrUnavailable) || errors.As(err, &pe) && pe.Code == "40001"
}

// State reports the last probe's finding.
func (r *Replica) State() ReplicaState { return *r.state.Load() }

// Start probes the standby every second until Stop.
func (r *Replica) Start(ctx context.Context) error {
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.every)
		defer t.Stop()
		for {
			r.probe(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the probe, if it runs, and closes the standby's connections; the reads go to the primary.
func (r *Replica) Stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
	r.state.Store(&ReplicaState{Status: ReplicaUnreachable, Checked: time.Now()})
	r.standby.Close()
}

// probe measures the standby's lag once; ctx ends the probing.
func (r *Replica) probe(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, 2*r.every)
	defer cancel()
	at := time.Now()
	var lsn int64
	if err := r.primary.pool.QueryRow(pctx, q("ReplicaPrimaryLSN")).Scan(&lsn); err == nil {
		if len(r.marks) == maxWalMarks {
			r.marks = append(r.marks[:0], r.marks[1:]...)
		}
		r.marks = append(r.marks, walMark{at: at, lsn: lsn})
	}
	var inRecovery bool
	var replayed *int64
	err := r.standby.pool.QueryRow(pctx, q("ReplicaReplayLSN")).Scan(&inRecovery, &replayed)
	now := time.Now()
	next := ReplicaState{Checked: now}
	switch {
	case err != nil && ctx.Err() != nil:
		return // stopping
	case err != nil: // an error, or no answer in time
		next.Status = ReplicaUnreachable
	case !inRecovery || replayed == nil:
		next.Status = ReplicaNotStandby
	case len(r.marks) == 0:
		next.Status = ReplicaStarting // the primary has not answered yet: nothing to measure against
	default:
		next.Lag, r.marks = replicaLag(r.marks, *replayed, now)
		next.Status = ReplicaOK
		if next.Lag > r.maxLag {
			next.Status = ReplicaLagging
		}
	}
	r.set(ctx, next, err)
}

// set makes next the state, and logs a change of status with err, its cause if any.
func (r *Replica) set(ctx context.Context, next ReplicaState, err error) {
	prev := r.state.Swap(&next)
	if prev.Status == next.Status {
		return
	}
	level, to := slog.LevelWarn, "primary"
	if next.Status == ReplicaOK {
		level, to = slog.LevelInfo, "standby"
	}
	r.log.Log(ctx, level, "read replica "+next.Status+": the read routes go to the "+to, slog.String("was", prev.Status),
		slog.Duration("lag", next.Lag), slog.Duration("max_lag", r.maxLag), slog.Any("error", err))
}

// replicaLag is how old the newest of marks the standby has replayed past (to replayed) is at now, and
// the marks from that one on (the older ones can no longer be the newest). A standby behind every mark
// is at least as old as the oldest one. marks is not empty.
func replicaLag(marks []walMark, replayed int64, now time.Time) (time.Duration, []walMark) {
	i := -1
	for j, m := range marks {
		if m.lsn > replayed {
			break
		}
		i = j
	}
	if i < 0 {
		return now.Sub(marks[0].at), marks
	}
	return max(now.Sub(marks[i].at), 0), marks[i:]
}
