package engine

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queen-go/queen/internal/store"
)

// Ack statuses.
const (
	AckCompleted = "completed"
	AckSuccess   = "success"
	AckFailed    = "failed"
	AckDLQ       = "dlq"
	AckRetry     = "retry"
)

// AckItem acknowledges one delivered message.
type AckItem struct {
	TransactionID string
	PartitionID   uuid.UUID
	LeaseID       string // "" = not validated
	Status        string // "" = completed
	Group         string // "" = queue mode
	Error         string
}

// AckResult is the per-item answer. Success is the only signal: the HTTP status is 200 either way.
type AckResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transactionId"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	QueueName     *string `json:"queueName"`
	PartitionName *string `json:"partitionName"`
	LeaseReleased bool    `json:"leaseReleased"`
	DLQ           bool    `json:"dlq"`
	Noop          bool    `json:"noop"`
}

// ValidAckStatus reports whether s is an acknowledgement status the engine applies.
func ValidAckStatus(s string) bool {
	switch s {
	case "", AckCompleted, AckSuccess, AckFailed, AckDLQ, AckRetry:
		return true
	}
	return false
}

// Ack applies the items in order and answers one result per item. A rejected item changes nothing.
func (e *Engine) Ack(ctx context.Context, items []AckItem) ([]AckResult, error) {
	if len(items) == 0 {
		return []AckResult{}, nil
	}
	for i := range items {
		if items[i].Group == "" {
			items[i].Group = QueueMode
		}
		if items[i].Status == "" {
			items[i].Status = AckCompleted
		}
		if !ValidAckStatus(items[i].Status) {
			return nil, invalid("status must be one of completed, success, failed, dlq, retry (got %q)", items[i].Status)
		}
	}
	res, err := e.ack.do(ctx, items)
	if err != nil {
		return nil, opErr("ack", err)
	}
	return res, nil
}

// ackBatch applies the items of several concurrent ack requests in one transaction; on a failure that
// is not the database being out of reach, each request is retried alone.
func (e *Engine) ackBatch(ctx context.Context, reqs [][]AckItem) ([][]AckResult, []error) {
	outs := make([][]AckResult, len(reqs))
	errs := make([]error, len(reqs))
	var all []AckItem
	for _, r := range reqs {
		all = append(all, r...)
	}
	res, err := e.applyAcks(ctx, all)
	if err == nil {
		off := 0
		for i, r := range reqs {
			outs[i] = res[off : off+len(r)]
			for j := range outs[i] {
				outs[i][j].Index = j // per request, not per merged batch
			}
			off += len(r)
		}
		return outs, errs
	}
	if len(reqs) == 1 || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrPool) {
		for i := range errs {
			errs[i] = err
		}
		return outs, errs
	}
	for i, r := range reqs {
		outs[i], errs[i] = e.applyAcks(ctx, r)
	}
	return outs, errs // applyAcks numbers each request's items from 0
}

func (e *Engine) applyAcks(ctx context.Context, items []AckItem) ([]AckResult, error) {
	targets := make([]store.AckTarget, len(items))
	for i, it := range items {
		targets[i] = store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: it.PartitionID, Group: it.Group}, TransactionID: it.TransactionID}
	}
	var results []AckResult
	decide := func(states map[store.ConsumerKey]*store.ConsumerState, msgs []store.ResolvedMessage) ([]store.ConsumerUpdate, []store.DeadLetter) {
		results = make([]AckResult, len(items))
		touched := map[store.ConsumerKey]*store.ConsumerUpdate{}
		var order []store.ConsumerKey
		var dead []store.DeadLetter
		for i, it := range items {
			results[i] = decideAck(i, it, targets[i].ConsumerKey, states, msgs[i], touched, &order, &dead)
		}
		updates := make([]store.ConsumerUpdate, 0, len(order))
		for _, k := range order {
			updates = append(updates, *touched[k])
		}
		return updates, dead
	}
	octx, cancel := context.WithTimeout(ctx, e.opt.OperationTimeout)
	defer cancel()
	if err := e.st.Ack(octx, targets, decide); err != nil {
		return nil, err
	}
	return results, nil
}

// decideAck applies one item to the in-memory state of its (partition, group) row, recording the
// resulting row update and dead letter. Rules (docs/decisions.md):
//   - unknown message → unresolvable;
//   - message at or behind the cursor → a repeated completion (no lease, or the lease that delivered
//     it) is a harmless noop, anything else is "already committed";
//   - a leaseId that is not the live lease → invalid or expired lease;
//   - completed: cursor moves to the message; the lease ends once everything it delivered is acked;
//   - failed: within the retry budget the lease ends and the partition waits retryDelay before it is
//     served again; past it, the message goes to the dead-letter queue and the cursor moves past it;
//   - dlq: dead-letter queue, cursor moves past; retry: the lease ends, no retry is counted.
func decideAck(i int, it AckItem, key store.ConsumerKey, states map[store.ConsumerKey]*store.ConsumerState,
	m store.ResolvedMessage, touched map[store.ConsumerKey]*store.ConsumerUpdate, order *[]store.ConsumerKey,
	dead *[]store.DeadLetter) AckResult {
	r := AckResult{Index: i, TransactionID: it.TransactionID}
	reject := func(msg string) AckResult {
		r.Error = &msg
		return r
	}
	if !m.Found {
		return reject(RejectUnresolvable)
	}
	r.QueueName, r.PartitionName = &m.Queue, &m.Partition
	st := states[key]
	if st == nil {
		return reject(RejectUnresolvable)
	}
	completion := it.Status == AckCompleted || it.Status == AckSuccess
	isLease := func(id pgtype.UUID) bool { return id.Valid && uuid.UUID(id.Bytes).String() == it.LeaseID }
	if m.Seq <= st.Cursor {
		delivering := it.LeaseID == "" ||
			(isLease(st.LeaseID) && st.ClaimCursor < m.Seq && m.Seq <= st.DeliveredSeq) ||
			(isLease(st.PrevLeaseID) && st.PrevClaimCursor < m.Seq && m.Seq <= st.PrevDeliveredSeq)
		if completion && delivering {
			r.Success, r.Noop = true, true
			return r
		}
		return reject(RejectCommitted)
	}
	if it.LeaseID != "" && !(isLease(st.LeaseID) && st.LeaseLive) {
		return reject(RejectLease)
	}
	u := touched[key]
	if u == nil {
		u = &store.ConsumerUpdate{ConsumerKey: key, Cursor: st.Cursor, Retries: st.Retries}
		touched[key] = u
		*order = append(*order, key)
	}
	release := func() {
		if st.LeaseLive {
			st.LeaseLive = false
			u.Release = true
			r.LeaseReleased = true
		}
	}
	advance := func() {
		// Progress past the head gives the next message a fresh retry budget.
		st.Cursor, u.Cursor = m.Seq, m.Seq
		st.Retries, u.Retries = 0, 0
		if st.LeaseLive && st.Cursor >= st.DeliveredSeq {
			release()
		}
	}
	toDLQ := func(errText string) {
		*dead = append(*dead, store.DeadLetter{ConsumerKey: key, Seq: m.Seq, Error: errText, Retries: st.Retries})
		r.DLQ = true
		advance()
	}
	switch it.Status {
	case AckCompleted, AckSuccess:
		u.Consumed++
		advance()
	case AckFailed:
		if st.Retries < m.RetryLimit {
			st.Retries++
			u.Retries = st.Retries
			u.DelayMs = m.RetryDelayMs
			release()
		} else {
			errText := it.Error
			if errText == "" {
				errText = "Retries exhausted"
			}
			toDLQ(errText)
		}
	case AckDLQ:
		errText := it.Error
		if errText == "" {
			errText = "Moved to DLQ"
		}
		toDLQ(errText)
	case AckRetry:
		release()
	}
	r.Success = true
	return r
}
