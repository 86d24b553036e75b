package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
)

// spooledItem is a push as the disk spool keeps it: everything needed to insert it later exactly as
// it would have been inserted now, including the transactionId that makes the replay idempotent.
// spooledOf is the record of it.
func spooledOf(it PushItem) spooledItem {
	return spooledItem{Queue: it.Queue, Partition: it.Partition, Payload: it.Payload.JSON(),
		TransactionID: it.TransactionID, TraceID: it.TraceID, ProducerSub: it.ProducerSub}
}

type spooledItem struct {
	Queue         string          `json:"q"`
	Partition     string          `json:"p"`
	Payload       json.RawMessage `json:"d,omitempty"`
	TransactionID string          `json:"t"`
	TraceID       *uuid.UUID      `json:"r,omitempty"`
	ProducerSub   string          `json:"s,omitempty"`
}

// SpoolFailedError is a push that could reach neither PostgreSQL nor the disk spool. Results has every
// item marked failed; the HTTP answer is 500 with them.
type SpoolFailedError struct {
	Results []PushResult
	Err     error
}

func (e *SpoolFailedError) Error() string { return "spool write failed: " + e.Err.Error() }
func (e *SpoolFailedError) Unwrap() error { return e.Err }

// ErrorBody is the answer's body: every item marked failed, not the one-line error envelope.
func (e *SpoolFailedError) ErrorBody() any { return e.Results }

// divert reports whether a push must go to the spool rather than to PostgreSQL: push maintenance is
// on, the database was found unreachable and has not come back, or the spool still holds pushes that
// must be inserted first (so that per-partition order stays push order across an outage).
func (e *Engine) divert(ctx context.Context) bool {
	if e.spool == nil {
		return false
	}
	if e.dbDown.Load() || e.unmigrated.Load() || !e.spool.Empty() {
		return true
	}
	push, _ := e.modes.Flags(ctx)
	return push
}

// unreachable tells the failures that mean "PostgreSQL is not there" (spool and retry later) from
// those that mean "this push is wrong" (answer 500, never spool).
func unreachable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrPool)
}

// spoolPush appends items to the spool, fsynced, and answers them buffered.
func (e *Engine) spoolPush(ctx context.Context, items []PushItem) ([]PushResult, error) {
	recs := make([][]byte, len(items))
	for i, it := range items {
		b, err := json.Marshal(spooledOf(it))
		if err != nil {
			return nil, err
		}
		recs[i] = b
	}
	err := e.spool.Append(context.WithoutCancel(ctx), recs)
	e.spoolHealth.writeErr.Store(err != nil)
	res := make([]PushResult, len(items))
	for i, it := range items {
		res[i] = PushResult{Index: i, TransactionID: it.TransactionID, Status: StatusBuffered, QueueName: it.Queue,
			Queue: it.Queue, Partition: it.Partition}
		if err != nil {
			res[i].Status, res[i].Error = StatusFailed, "File buffer write failed"
		}
	}
	if err != nil {
		e.log.ErrorContext(ctx, "spool write failed", slog.Any("error", err), slog.Int("items", len(items)))
		return nil, &SpoolFailedError{Results: res, Err: err}
	}
	signal(e.replayKick)
	return res, nil
}

// SpoolWake receives when a push was spooled: the replay loop (internal/maintenance) runs a pass at
// once instead of waiting for its interval.
func (e *Engine) SpoolWake() <-chan struct{} { return e.replayKick }

// ReplaySpool is one pass of the spool replay: it inserts spooled pushes into PostgreSQL, oldest
// first, when the database is reachable and push maintenance is off. Duplicates (a push whose commit
// was not seen before the database went away) are dropped by the transactionId dedup. It logs its own
// outcome: a paused replay is a state /health reports, not a failed pass.
func (e *Engine) ReplaySpool(ctx context.Context) error {
	if e.spool == nil || e.unmigrated.Load() {
		return nil // nothing to replay, or no tables to replay into yet
	}
	if e.spool.Empty() {
		e.dbDown.Store(false)
		return nil
	}
	if push, _ := e.modes.Flags(ctx); push {
		return nil
	}
	n, err := e.spool.Replay(ctx, e.opt.SpoolReplayBatch, e.replay)
	var before int64 // failed attempts in a row before this one
	if !errors.Is(err, spool.ErrReplayInProgress) {
		before = e.spoolHealth.replayed(err)
	}
	switch {
	case err != nil && !errors.Is(err, spool.ErrReplayInProgress):
		e.dbDown.Store(true)
		if ctx.Err() == nil && e.spoolHealth.warnNow(before+1) {
			e.log.WarnContext(ctx, "spool replay paused", slog.Any("error", err), slog.Int64("pending", e.spool.Pending()),
				slog.Int64("failed_attempts", before+1))
		}
	case before > 0:
		e.log.InfoContext(ctx, "spool replay resumed", slog.Int("items", n), slog.Int64("pending", e.spool.Pending()),
			slog.Int64("failed_attempts", before))
	case n > 0:
		e.log.InfoContext(ctx, "spool replayed", slog.Int("items", n), slog.Int64("pending", e.spool.Pending()))
	}
	if e.spool.Empty() {
		e.dbDown.Store(false)
	}
	return nil
}

func (e *Engine) replay(ctx context.Context, recs [][]byte) error {
	items := make([]PushItem, 0, len(recs))
	for _, r := range recs {
		var s spooledItem
		if err := json.Unmarshal(r, &s); err != nil {
			// A checksummed record that does not decode was written by another version: keep the
			// rest flowing and say so.
			e.log.ErrorContext(ctx, "spool record skipped: undecodable", slog.Any("error", err))
			continue
		}
		it := PushItem{Queue: s.Queue, Partition: s.Partition,
			TransactionID: s.TransactionID, TraceID: s.TraceID, ProducerSub: s.ProducerSub}
		// Spooled by a version with looser rules: PostgreSQL would refuse it, so it never goes there.
		err := NormalizePushItem(&it, "spooled item", -1)
		if err == nil {
			it.Payload, err = payloadOf(s.Payload, "spooled item")
		}
		if err != nil {
			if err := e.deadSpool(ctx, s, err); err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			continue
		}
		items = append(items, it)
	}
	_, err := e.pushStored(ctx, items)
	if refusedForGood(err) && ctx.Err() == nil {
		err = e.replayApart(ctx, items) // one of them is refused: set it aside, keep the rest flowing
	}
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// SpoolStats reports the spool's pending records and failed replay attempts (zeros without a spool).
func (e *Engine) SpoolStats() (pending, failed int64, dbHealthy bool) {
	if e.spool == nil {
		return 0, 0, !e.dbDown.Load()
	}
	return e.spool.Pending(), e.spool.Failed(), !e.dbDown.Load()
}

// signal wakes a loop waiting on ch without blocking; one pending wake-up is enough.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
