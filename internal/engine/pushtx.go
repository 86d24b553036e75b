package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// PushTx is one PostgreSQL transaction that may also store pushes: the transaction API's push
// operations and a stream cycle's sink pushes. Its statements are the embedded store.Tx's; its pushes
// go through InsertPushes, so they keep every rule of the push path (maxSize, partition creation,
// UUIDv7 ids in item order, encryption) and wake the parked pops of their partitions once committed.
type PushTx struct {
	*store.Tx
	e      *Engine
	items  []PushItem
	pids   []uuid.UUID
	rows   []store.PushRow
	stored []PushResult // set by InsertPushes
	wake   []string     // queues whose parked pops a released lease may serve
}

// PushRefused reports the first push of a transaction that its queue's maxSize refuses: nothing of the
// transaction was applied.
type PushRefused struct {
	Index int
	Why   string
}

func (r *PushRefused) Error() string { return fmt.Sprintf("push %d refused: %s", r.Index, r.Why) }

// ErrRollback ends InPushTx's transaction without applying anything and without an error: fn found
// that there is nothing to do (a repeat of a committed stream cycle).
var ErrRollback = errors.New("roll back")

// errTxStale means a pushed-to partition vanished between lookup and insert (its queue was deleted).
var errTxStale = errors.New("partition vanished")

// InPushTx runs fn in one transaction whose pushes are items (fn stores them with InsertPushes).
// Before the transaction begins, the items are admitted against maxSize (a refusal is a *PushRefused)
// and their partitions created: creation must not hold locks inside a transaction. A partition that
// vanished before the insert (its queue was deleted meanwhile) retries the whole transaction, twice
// at most; so fn must not keep effects of an attempt outside the transaction.
func (e *Engine) InPushTx(ctx context.Context, items []PushItem, fn func(*PushTx) error) error {
	for attempt := 0; ; attempt++ {
		err := e.pushTxOnce(ctx, items, fn)
		if errors.Is(err, errTxStale) && attempt < 2 {
			for _, p := range items {
				e.parts.forget(store.PartitionKey{Queue: p.Queue, Partition: p.Partition})
			}
			continue
		}
		return err
	}
}

func (e *Engine) pushTxOnce(ctx context.Context, items []PushItem, fn func(*PushTx) error) error {
	t := &PushTx{e: e, items: items}
	if len(items) > 0 {
		refused, err := e.admit(ctx, items)
		if err != nil {
			return err
		}
		for i, why := range refused {
			if why != "" {
				return &PushRefused{Index: i, Why: why}
			}
		}
		if t.pids, err = e.partitionIDs(ctx, items); err != nil {
			return err
		}
		t.rows = make([]store.PushRow, len(items))
		if err := e.pushRows(ctx, items, t.pids, t.rows); err != nil {
			return err
		}
	}
	tx, err := e.st.Begin(ctx)
	if err != nil {
		return err
	}
	t.Tx = tx
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(t); err != nil {
		if errors.Is(err, ErrRollback) {
			return nil
		}
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	committed = true
	for _, q := range t.wake {
		e.hub.Announce(q, 1)
	}
	if t.stored != nil {
		e.announcePushed(items, t.pids)
		e.observePush(t.stored)
	}
	return nil
}

// InsertPushes stores the transaction's pushes, one result per item in order: queued, or duplicate
// when the item's transactionId is already stored in its partition.
func (t *PushTx) InsertPushes(ctx context.Context) ([]PushResult, error) {
	if len(t.rows) == 0 {
		return []PushResult{}, nil
	}
	outs, err := t.Tx.Push(ctx, t.rows)
	if err != nil {
		return nil, err
	}
	res := make([]PushResult, len(outs))
	for i, o := range outs {
		if !o.Inserted && o.ExistingID == uuid.Nil {
			return nil, errTxStale
		}
		res[i] = pushResult(i, &t.items[i], o, t.rows[i].ID.String(), t.pids[i].String())
	}
	t.stored = res
	return res, nil
}

// WakeOnCommit has a parked pop of queue try again once the transaction commits: it released a lease.
func (t *PushTx) WakeOnCommit(queue string) { t.wake = append(t.wake, queue) }
