package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// A spooled push that PostgreSQL refuses for a reason other than being unreachable can never be
// replayed: kept at the head of the spool it would hold back every later push for good. It is moved
// aside to the dead-spool file (docs/decisions.md, "Poisoned spool") and replay goes on.

// DeadSpoolFile is the dead-spool file's name inside the spool directory.
const DeadSpoolFile = "dead-spool.jsonl"

// deadRecord is one line of the dead-spool file: the spooled push as it was, and why it was refused.
type deadRecord struct {
	At     time.Time       `json:"at"`
	Reason string          `json:"reason"`
	Item   json.RawMessage `json:"item"`
}

// spoolHealth is what /health and the metrics say about the spool's ability to drain.
type spoolHealth struct {
	dead     atomic.Int64 // records moved to the dead-spool file
	failures atomic.Int64 // consecutive failed replay attempts
	warned   atomic.Int64 // unix ns of the last "spool replay paused" warning
	writeErr atomic.Bool  // the last spool append failed (a full or broken disk)
	mu       sync.Mutex   // protects lastErr
	lastErr  string
}

// SpoolHealth is the spool's drain state.
type SpoolHealth struct {
	Pending         int64  `json:"pending"`
	DeadSpooled     int64  `json:"deadSpooled"`
	ReplayFailures  int64  `json:"replayFailures"`
	Stalled         bool   `json:"stalled"`
	LastReplayError string `json:"lastReplayError,omitempty"`
}

// stalledAfter is the number of consecutive failed replay attempts after which the spool is reported
// stalled (it holds pushes and cannot drain them).
const stalledAfter = 3

// SpoolAccepts reports whether a push the database cannot take now would still be answered 201: a
// spool is configured and its last append did not fail.
func (e *Engine) SpoolAccepts() bool {
	return e.spool != nil && !e.spoolHealth.writeErr.Load()
}

// SpoolHealth reports whether the spool drains; zero without a spool.
func (e *Engine) SpoolHealth() SpoolHealth {
	if e.spool == nil {
		return SpoolHealth{}
	}
	h := &e.spoolHealth
	h.mu.Lock()
	last := h.lastErr
	h.mu.Unlock()
	f := h.failures.Load()
	p := e.spool.Pending()
	return SpoolHealth{Pending: p, DeadSpooled: h.dead.Load(), ReplayFailures: f, Stalled: p > 0 && f >= stalledAfter,
		LastReplayError: last}
}

// replayed records the outcome of one replay attempt and returns how many attempts in a row had failed
// before it. The public text never carries driver details.
func (h *spoolHealth) replayed(err error) (before int64) {
	if err == nil {
		before = h.failures.Swap(0)
		h.mu.Lock()
		h.lastErr = ""
		h.mu.Unlock()
		return before
	}
	before = h.failures.Add(1) - 1
	msg := "replay failed"
	if unreachable(err) {
		msg = "database unreachable"
	}
	h.mu.Lock()
	h.lastErr = msg
	h.mu.Unlock()
	return before
}

// warnNow reports whether a failed attempt, the failures-th in a row, is logged: attempts come every
// FILE_BUFFER_FLUSH_MS, so an outage is one warning when it starts and one a minute while it lasts, not
// ten a second.
func (h *spoolHealth) warnNow(failures int64) bool {
	now := time.Now().UnixNano()
	last := h.warned.Load()
	if failures > 1 && now-last < int64(time.Minute) {
		return false
	}
	return h.warned.CompareAndSwap(last, now)
}

// replayApart pushes items one by one after their batch was refused: refused ones go to the dead-spool
// file, the others are stored in order. An unreachable database stops it with the error, so the batch
// is retried later (what was stored meanwhile is deduplicated by transactionId).
func (e *Engine) replayApart(ctx context.Context, items []PushItem) error {
	for _, it := range items {
		_, err := e.pushStored(ctx, []PushItem{it})
		if err == nil {
			continue
		}
		if !refusedForGood(err) || ctx.Err() != nil {
			return err
		}
		if err := e.deadSpool(ctx, spooledOf(it), err); err != nil {
			return err
		}
	}
	return nil
}

// refusedForGood tells a statement PostgreSQL refused because of the item itself from failures that
// may pass on a later attempt (unreachable, timeouts, locks, serialization, resources, shutdown).
func refusedForGood(err error) bool {
	var pe *store.PgError
	if unreachable(err) || !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "40", "53", "55", "57", "58", "XX":
		return false
	}
	return true
}

// deadSpool appends an item's record to the dead-spool file (fsynced), logs it and counts it.
func (e *Engine) deadSpool(ctx context.Context, it spooledItem, cause error) error {
	item, err := json.Marshal(it)
	if err != nil {
		return err
	}
	line, err := json.Marshal(deadRecord{At: time.Now().UTC(), Reason: cause.Error(), Item: item})
	if err != nil {
		return err
	}
	if e.opt.DeadSpoolPath != "" {
		f, err := os.OpenFile(e.opt.DeadSpoolPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("dead spool: %w", err)
		}
		_, werr := f.Write(append(line, '\n'))
		serr := f.Sync()
		if err := errors.Join(werr, serr, f.Close()); err != nil {
			return fmt.Errorf("dead spool: %w", err)
		}
	}
	e.spoolHealth.dead.Add(1)
	e.log.ErrorContext(ctx, "spooled push refused by the database: moved to the dead spool",
		slog.String("queue", it.Queue), slog.String("partition", it.Partition), slog.String("transaction_id", it.TransactionID),
		slog.String("file", e.opt.DeadSpoolPath), slog.Any("error", cause))
	return nil
}
