package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// TxOp is one operation of an atomic transaction: an acknowledgement or a push of one item.
type TxOp struct {
	Ack  *AckItem
	Push *PushItem
}

// TxResult answers a transaction. It is returned with Success false (and no results) when the
// transaction rolled back because of what it asked for; infrastructure failures are errors instead.
type TxResult struct {
	TransactionID string `json:"transactionId"`
	Success       bool   `json:"success"`
	Error         string `json:"error,omitempty"`
	Results       []any  `json:"results"`
}

// TxAckResult is the result of an ack operation.
type TxAckResult struct {
	Index         int     `json:"index"`
	Type          string  `json:"type"`
	Success       bool    `json:"success"`
	TransactionID string  `json:"transactionId"`
	Error         *string `json:"error"`
	DLQ           bool    `json:"dlq"`
	LeaseReleased bool    `json:"leaseReleased"`
}

// TxPushResult is the result of a push operation.
type TxPushResult struct {
	Index         int    `json:"index"`
	Type          string `json:"type"`
	Success       bool   `json:"success"`
	TransactionID string `json:"transactionId"`
	MessageID     string `json:"messageId"`
	PartitionID   string `json:"partitionId"`
	QueueName     string `json:"queueName"`
}

// errTxStale means a pushed-to partition vanished between lookup and insert (its queue was deleted).
var errTxStale = errors.New("partition vanished")

// Transaction applies every operation in one PostgreSQL transaction: all take effect or none do. A
// duplicate push (QDUP), a rejected ack (QTXN) or a push into a full queue (QFULL, maxSize) rolls
// everything back and is reported with Success false; a failed ack spends the same retry budget as
// /api/v1/ack.
func (e *Engine) Transaction(ctx context.Context, ops []TxOp) (*TxResult, error) {
	var acks []AckItem
	var pushes []PushItem
	for i, op := range ops {
		switch {
		case op.Ack != nil:
			a := *op.Ack
			if err := normalizeAck(&a); err != nil {
				return nil, Invalid("operations[%d]: %s", i, err)
			}
			acks = append(acks, a)
		case op.Push != nil:
			p := *op.Push
			if p.Queue == "" {
				return nil, Invalid("operations[%d]: queue is required", i)
			}
			p.Partition = cmp.Or(p.Partition, DefaultPartition)
			p.TransactionID = cmp.Or(p.TransactionID, uuid.Must(uuid.NewV7()).String())
			if err := validatePushItem(&p, "operations", i); err != nil {
				return nil, err
			}
			pushes = append(pushes, p)
		default:
			return nil, Invalid("operations[%d]: empty operation", i)
		}
	}
	for attempt := 0; ; attempt++ {
		res, err := e.transactionOnce(ctx, ops, acks, pushes)
		if errors.Is(err, errTxStale) && attempt < 2 {
			for _, p := range pushes {
				e.parts.forget(store.PartitionKey{Queue: p.Queue, Partition: p.Partition})
			}
			continue
		}
		if err != nil {
			return nil, OpFailed("transaction", err)
		}
		return res, nil
	}
}

func (e *Engine) transactionOnce(ctx context.Context, ops []TxOp, acks []AckItem, pushes []PushItem) (*TxResult, error) {
	res := &TxResult{TransactionID: uuid.Must(uuid.NewV7()).String(), Results: []any{}}
	refused, err := e.admit(ctx, pushes)
	if err != nil {
		return nil, err
	}
	for _, why := range refused {
		if why != "" {
			res.Error = "QFULL " + why
			return res, nil
		}
	}
	pids, err := e.partitionIDs(ctx, pushes)
	if err != nil {
		return nil, err
	}
	tx, err := e.st.Begin(ctx)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	rollback := func(msg string) (*TxResult, error) {
		res.Success, res.Error = false, msg
		return res, nil
	}

	var ackRes []AckResult
	plan := ackPlan(acks, true)
	if len(acks) > 0 {
		err := tx.Ack(ctx, plan.targets, plan.decide)
		ackRes = plan.results
		if errors.Is(err, errAckRejected) {
			for _, r := range ackRes {
				if r.Error != nil && !r.Success {
					return rollback("QTXN ack rejected: " + *r.Error)
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}

	rows := make([]store.PushRow, len(pushes))
	if err := e.pushRows(ctx, pushes, pids, rows); err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		outs, err := tx.Push(ctx, rows)
		if err != nil {
			return nil, err
		}
		for i, o := range outs {
			switch {
			case o.Inserted:
			case o.ExistingID != uuid.Nil:
				return rollback(fmt.Sprintf("QDUP duplicate transactionId %s in %s/%s", pushes[i].TransactionID, pushes[i].Queue, pushes[i].Partition))
			default:
				return nil, errTxStale
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	committed = true
	e.announceReleased(plan.released)
	e.leaseAcked(acks, ackRes)
	e.announcePushed(pushes, pids)

	ai, pi := 0, 0
	for i, op := range ops {
		if op.Ack != nil {
			r := ackRes[ai]
			ai++
			res.Results = append(res.Results, TxAckResult{Index: i, Type: "ack", Success: r.Success,
				TransactionID: r.TransactionID, Error: r.Error, DLQ: r.DLQ, LeaseReleased: r.LeaseReleased})
			continue
		}
		res.Results = append(res.Results, TxPushResult{Index: i, Type: "push", Success: true,
			TransactionID: pushes[pi].TransactionID, MessageID: rows[pi].ID.String(), PartitionID: pids[pi].String(),
			QueueName: pushes[pi].Queue})
		pi++
	}
	res.Success = true
	return res, nil
}
