package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// The empty memo lets a consumer that long-polls one partition, found it empty and asks again park
// without a statement: idle consumers then cost the database nothing per request. It holds, per
// (queue, partition, group), what a pop of that partition found: nothing to claim. The memo is only
// trusted once a check of the pending-work rows (0006_pending_partitions.sql: a partition with work
// for a group always has one, leased, delayed or in a retry delay included) confirmed that the
// partition has no work at all for the group, and for at most memoAge after that check.
//
// Every announcement (a push, a seek, a retried dead letter, what comes due, here or on another broker)
// forgets the entries of the partitions it names, in the same critical section that wakes their
// waiters, so a woken pop never meets an entry the wake-up made stale. A reconnect of the LISTEN
// session forgets everything (notifications were lost). A check records the entries it covers before
// its statement starts and confirms only those still in the memo afterwards: an announcement made
// meanwhile has removed them. What a lost notification hides, the next check finds (it re-checks
// every confirmed entry still in use each memoAge/2), and it wakes the partition's waiters.

// memoTick is how often suspects are checked and aged entries re-checked.
const memoTick = 500 * time.Millisecond

// memoBatch bounds the keys of one check statement.
const memoBatch = 5000

// memoMax bounds the entries: past it the memo forgets everything, and pops go to the database.
const memoMax = 100_000

// emptyEntry is one (queue, partition, group) a pop found empty.
type emptyEntry struct {
	checked time.Time // when a check confirmed it; zero: not yet
	used    time.Time // when a pop last asked about it; unused for 2 memoAge, it is dropped
}

// memoGroups is the entries of one partition, per group.
type memoGroups map[string]*emptyEntry

// SetEmptyMemo turns the memo on with entries trusted for age after their check (the safety re-check
// interval of parked pops: a lost notification delays a delivery by no more than without the memo);
// 0 turns it off. The memo works only while the hub runs (Start), which checks it.
func (h *Hub) SetEmptyMemo(age time.Duration) {
	h.waiters.mu.Lock()
	h.waiters.memoAge = age
	h.waiters.memo = map[string]map[string]memoGroups{}
	h.waiters.memoLen = 0
	h.waiters.mu.Unlock()
}

// NoteEmpty records that a pop of partition of queue found nothing to claim for group.
func (h *Hub) NoteEmpty(queue, partition, group string) {
	w := h.waiters
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.memoOn || w.memoAge <= 0 {
		return
	}
	if w.memoLen >= memoMax {
		w.memo, w.memoLen = map[string]map[string]memoGroups{}, 0
	}
	parts := w.memo[queue]
	if parts == nil {
		parts = map[string]memoGroups{}
		w.memo[queue] = parts
	}
	groups := parts[partition]
	if groups == nil {
		groups = memoGroups{}
		parts[partition] = groups
	}
	if e := groups[group]; e != nil {
		e.used = now
		return
	}
	groups[group] = &emptyEntry{used: now}
	w.memoLen++
}

// KnownEmpty reports whether partition of queue is known to hold no work for group: a pop may park
// without trying.
func (h *Hub) KnownEmpty(queue, partition, group string) bool {
	w := h.waiters
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.memoOn {
		return false
	}
	e := w.memo[queue][partition][group]
	if e == nil || e.checked.IsZero() || now.Sub(e.checked) > w.memoAge {
		return false
	}
	e.used = now
	return true
}

// forget drops the entries of the partitions named (nil: of every partition of queue). w.mu is held.
func (w *waiters) forget(queue string, partitions []string) {
	parts := w.memo[queue]
	if parts == nil {
		return
	}
	if partitions == nil {
		for _, groups := range parts {
			w.memoLen -= len(groups)
		}
		delete(w.memo, queue)
		return
	}
	for _, p := range partitions {
		w.memoLen -= len(parts[p])
		delete(parts, p)
	}
	if len(parts) == 0 {
		delete(w.memo, queue)
	}
}

// forgetAll drops every entry. w.mu is held.
func (w *waiters) forgetAll() {
	if w.memoLen > 0 {
		w.memo, w.memoLen = map[string]map[string]memoGroups{}, 0
	}
}

// memoLoop checks the memo every memoTick until ctx ends.
func (h *Hub) memoLoop(ctx context.Context) {
	t := time.NewTicker(memoTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := h.checkMemo(ctx); err != nil && ctx.Err() == nil {
			h.log.DebugContext(ctx, "empty memo check failed", slog.Any("error", err))
		}
	}
}

// checkMemo confirms the entries not yet checked, re-checks those whose check is half their age old and
// still in use, and drops those unused for two ages.
func (h *Hub) checkMemo(ctx context.Context) error {
	w := h.waiters
	now := time.Now()
	var keys []store.PendingKey
	var entries []*emptyEntry
	w.mu.Lock()
	for q, parts := range w.memo {
		for p, groups := range parts {
			for g, e := range groups {
				switch {
				case now.Sub(e.used) > 2*w.memoAge:
					delete(groups, g)
					w.memoLen--
				case e.checked.IsZero() || now.Sub(e.checked) > w.memoAge/2:
					keys = append(keys, store.PendingKey{Queue: q, Partition: p, Group: g})
					entries = append(entries, e)
				}
			}
			if len(groups) == 0 {
				delete(parts, p)
			}
		}
		if len(parts) == 0 {
			delete(w.memo, q)
		}
	}
	w.mu.Unlock()
	for len(keys) > 0 {
		n := min(len(keys), memoBatch)
		work, err := h.st.PendingWork(ctx, keys[:n])
		if err != nil {
			return err
		}
		h.settle(keys[:n], entries[:n], work, time.Now())
		keys, entries = keys[n:], entries[n:]
	}
	return nil
}

// settle applies a check: an entry still in the memo is confirmed when its partition has no work, and
// dropped when it has some; if it had been confirmed, a notification was missed, and the partition's
// waiters are woken.
func (h *Hub) settle(keys []store.PendingKey, entries []*emptyEntry, work []bool, at time.Time) {
	w := h.waiters
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range keys {
		groups := w.memo[k.Queue][k.Partition]
		if groups[k.Group] != entries[i] {
			continue // forgotten meanwhile: an announcement came, or the memo was reset
		}
		if !work[i] {
			entries[i].checked = at
			continue
		}
		missed := !entries[i].checked.IsZero()
		delete(groups, k.Group)
		w.memoLen--
		if missed {
			signalAll(w.byPart[k.Queue][k.Partition])
		}
	}
}
