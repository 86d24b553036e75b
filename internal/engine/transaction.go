package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
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
			if err := NormalizePushItem(&p, "operations", i); err != nil {
				return nil, err
			}
			pushes = append(pushes, p)
		default:
			return nil, Invalid("operations[%d]: empty operation", i)
		}
	}
	res := &TxResult{TransactionID: uuid.Must(uuid.NewV7()).String(), Results: []any{}}
	var plan *ackRun
	var ackRes []AckResult
	var pushRes []PushResult
	err := e.InPushTx(ctx, pushes, func(tx *PushTx) error {
		plan, ackRes = ackPlan(acks, true), nil
		if len(acks) > 0 {
			err := tx.Ack(ctx, plan.targets, plan.decide)
			ackRes = plan.results
			if errors.Is(err, errAckRejected) {
				for _, r := range ackRes {
					if r.Error != nil && !r.Success {
						return &txRolledBack{"QTXN ack rejected: " + *r.Error}
					}
				}
			}
			if err != nil {
				return err
			}
		}
		var err error
		if pushRes, err = tx.InsertPushes(ctx); err != nil {
			return err
		}
		for i, r := range pushRes {
			if r.Status == StatusDuplicate {
				return &txRolledBack{fmt.Sprintf("QDUP duplicate transactionId %s in %s/%s", pushes[i].TransactionID, pushes[i].Queue, pushes[i].Partition)}
			}
		}
		return nil
	})
	var refused *PushRefused
	var rolledBack *txRolledBack
	switch {
	case errors.As(err, &refused):
		res.Error = "QFULL " + refused.Why
		return res, nil
	case errors.As(err, &rolledBack):
		res.Error = rolledBack.msg
		return res, nil
	case err != nil:
		return nil, OpFailed("transaction", err)
	}
	e.announceReleased(plan.released)
	e.leaseAcked(acks, ackRes)

	ai, pi := 0, 0
	for i, op := range ops {
		if op.Ack != nil {
			r := ackRes[ai]
			ai++
			res.Results = append(res.Results, TxAckResult{Index: i, Type: "ack", Success: r.Success,
				TransactionID: r.TransactionID, Error: r.Error, DLQ: r.DLQ, LeaseReleased: r.LeaseReleased})
			continue
		}
		p := pushRes[pi]
		res.Results = append(res.Results, TxPushResult{Index: i, Type: "push", Success: true,
			TransactionID: p.TransactionID, MessageID: p.MessageID, PartitionID: p.PartitionID, QueueName: p.QueueName})
		pi++
	}
	res.Success = true
	return res, nil
}

// txRolledBack rolls a transaction back because of what it asked for: answered Success false.
type txRolledBack struct{ msg string }

func (r *txRolledBack) Error() string { return r.msg }
