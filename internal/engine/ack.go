package engine

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/jsonscan"
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

// AckResults is an ack's answer, one result per acknowledgment. It writes its own JSON text
// (AppendJSON): every delivered message is acknowledged, by every consumer group.
type AckResults []AckResult

// AppendJSON writes rs as json.Marshal does.
func (rs AckResults) AppendJSON(dst []byte) (_ []byte, ok bool) {
	if rs == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	for i := range rs {
		r := &rs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"index":`...)
		dst = strconv.AppendInt(dst, int64(r.Index), 10)
		dst = append(dst, `,"transactionId":`...)
		dst = jsonscan.AppendString(dst, r.TransactionID)
		dst = append(dst, `,"success":`...)
		dst = strconv.AppendBool(dst, r.Success)
		dst = append(dst, `,"error":`...)
		dst = appendOptString(dst, r.Error)
		dst = append(dst, `,"queueName":`...)
		dst = appendOptString(dst, r.QueueName)
		dst = append(dst, `,"partitionName":`...)
		dst = appendOptString(dst, r.PartitionName)
		dst = append(dst, `,"leaseReleased":`...)
		dst = strconv.AppendBool(dst, r.LeaseReleased)
		dst = append(dst, `,"dlq":`...)
		dst = strconv.AppendBool(dst, r.DLQ)
		dst = append(dst, `,"noop":`...)
		dst = strconv.AppendBool(dst, r.Noop)
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// CheckAckStatus refuses a status the engine does not apply ("" is completed). It is the one place
// the rule and its text live: the transport calls it while decoding, Ack and Transaction again.
func CheckAckStatus(s string) error {
	switch s {
	case "", AckCompleted, AckSuccess, AckFailed, AckDLQ, AckRetry:
		return nil
	}
	return Invalid("status must be one of completed, success, failed, dlq, retry (got %q)", s)
}

// normalizeAck fills an item's defaults (the queue-mode group, completed) and checks its status.
func normalizeAck(it *AckItem) error {
	it.Group = cmp.Or(it.Group, QueueMode)
	it.Status = cmp.Or(it.Status, AckCompleted)
	return CheckAckStatus(it.Status)
}

// Ack applies the items in order and answers one result per item. A rejected item changes nothing.
func (e *Engine) Ack(ctx context.Context, items []AckItem) ([]AckResult, error) {
	if len(items) == 0 {
		return []AckResult{}, nil
	}
	for i := range items {
		if err := normalizeAck(&items[i]); err != nil {
			return nil, err
		}
	}
	res, err := e.ack.do(ctx, items)
	if err != nil {
		return nil, OpFailed("ack", err)
	}
	e.leaseAcked(items, res)
	e.observeAck(items, res)
	return res, nil
}

// ackBatch applies the items of several concurrent ack requests in one transaction and splits the
// results per request (the coalescer retries each request alone when the merged one fails).
func (e *Engine) ackBatch(ctx context.Context, reqs [][]AckItem) ([][]AckResult, error) {
	var all []AckItem
	for _, r := range reqs {
		all = append(all, r...)
	}
	res, err := e.applyAcks(ctx, all)
	if err != nil {
		return nil, err
	}
	outs := make([][]AckResult, len(reqs))
	off := 0
	for i, r := range reqs {
		outs[i] = res[off : off+len(r)]
		for j := range outs[i] {
			outs[i][j].Index = j // per request, not per merged batch
		}
		off += len(r)
	}
	return outs, nil
}

func (e *Engine) applyAcks(ctx context.Context, items []AckItem) ([]AckResult, error) {
	octx, cancel := context.WithTimeout(ctx, e.opt.OperationTimeout)
	defer cancel()
	if res, ok, err := e.ackCompletions(octx, items); err != nil || ok {
		return res, err
	}
	p := ackPlan(items, false)
	if err := e.st.Ack(octx, p.targets, p.decide); err != nil {
		return nil, err
	}
	e.announceReleased(p.released)
	return p.results, nil
}

// ackOneStats counts the ack batches the one-statement path applied and those it handed on to the full
// path; off turns the path off (tests compare both paths on the same acks).
type ackOneStats struct {
	applied, declined atomic.Int64
	leases            atomic.Int64 // of applied: by the whole-lease statement
	off               bool
}

// ackCompletions applies a batch made only of completions with one statement (store.AckCompletions),
// which decides as ackDecider would for the cases it takes: every item a completion of a delivered
// message under the lease given (or with none), or a repeated completion behind the cursor, with no
// retried dead letter involved. With ok false nothing was changed and the full path must run: another
// status, a leaseId that is no lease id as the broker writes it, or any item the statement declines
// (a rejection, a redelivery, a consumer row still to create).
func (e *Engine) ackCompletions(ctx context.Context, items []AckItem) (_ []AckResult, ok bool, _ error) {
	if e.ackOne.off {
		return nil, false, nil
	}
	in := make([]store.AckCompletion, len(items))
	for i, it := range items {
		if it.Status != AckCompleted && it.Status != AckSuccess {
			return nil, false, nil
		}
		in[i].AckTarget = store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: it.PartitionID, Group: it.Group}, TransactionID: it.TransactionID}
		if it.LeaseID != "" {
			// The full path compares the lease's text with the id as written (lower case, hyphens);
			// any other spelling is a different lease to it.
			id, err := uuid.Parse(it.LeaseID)
			if err != nil || id.String() != it.LeaseID {
				return nil, false, nil
			}
			in[i].LeaseID = &id
		}
	}
	if res, ok, err := e.ackWholeLeases(ctx, items, in); err != nil || ok {
		return res, ok, err
	}
	done, ok, err := e.st.AckCompletions(ctx, in)
	if err != nil || !ok {
		if err == nil {
			e.ackOne.declined.Add(1)
		}
		return nil, false, err
	}
	e.ackOne.applied.Add(1)
	res := make([]AckResult, len(items))
	var released releasedSet
	for i, d := range done {
		res[i] = AckResult{Index: i, TransactionID: items[i].TransactionID, Success: true,
			QueueName: &d.Queue, PartitionName: &d.Partition, LeaseReleased: d.Released, Noop: d.Noop}
		if d.Released {
			released.add(d.Queue, items[i].Group, d.Partition)
		}
	}
	e.announceReleased(released)
	return res, true, nil
}

// ackWholeLeases applies, with store.AckLeases, a batch of completions that is nothing but whole leases
// this broker's pops handed out: each lease's messages in the order delivered, once, under its id. For
// those items AckCompletions would move the cursor to the lease's last message, end the lease with that
// item and report no noop; the statement checks in the database that each lease is still the claim the
// memo describes, and declines otherwise (ok false, nothing changed). Any other batch: ok false.
func (e *Engine) ackWholeLeases(ctx context.Context, items []AckItem, in []store.AckCompletion) (_ []AckResult, ok bool, _ error) {
	var leases []store.LeaseAck
	var memo []memoLease
	for i := 0; i < len(items); {
		id := in[i].LeaseID
		if id == nil {
			return nil, false, nil
		}
		l, known := e.leases.take(*id)
		if !known || len(l.txids) > len(items)-i {
			return nil, false, nil
		}
		for j, tx := range l.txids {
			it := &items[i+j]
			if it.TransactionID != tx || it.PartitionID != l.partition || it.Group != l.group || in[i+j].LeaseID == nil || *in[i+j].LeaseID != *id {
				return nil, false, nil
			}
		}
		leases = append(leases, store.LeaseAck{ConsumerKey: store.ConsumerKey{PartitionID: l.partition, Group: l.group},
			LeaseID: *id, Count: int32(len(l.txids))})
		memo = append(memo, l)
		i += len(l.txids)
	}
	if applied, err := e.st.AckLeases(ctx, leases); err != nil || !applied {
		return nil, false, err
	}
	e.ackOne.applied.Add(1)
	e.ackOne.leases.Add(1)
	res := make([]AckResult, 0, len(items))
	var released releasedSet
	for k := range memo {
		l := &memo[k]
		for j := range l.txids {
			res = append(res, AckResult{Index: len(res), TransactionID: l.txids[j], Success: true,
				QueueName: &l.queue, PartitionName: &l.partitionName, LeaseReleased: j == len(l.txids)-1})
		}
		released.add(l.queue, l.group, l.partitionName)
	}
	e.announceReleased(released)
	return res, true, nil
}

// errAckRejected aborts a transaction whose ack was rejected; the results say which and why.
var errAckRejected = errors.New("ack rejected")

// ackRun is an ack batch in preparation: the store targets, the decision to run inside the
// transaction, and what it decided (per-item results; per queue, how many leases it ended).
type ackRun struct {
	targets  []store.AckTarget
	decide   store.AckDecision
	results  []AckResult
	released releasedSet
}

// ackPlan prepares an ack batch. With strict, any rejected item aborts the whole transaction.
func ackPlan(items []AckItem, strict bool) *ackRun {
	p := &ackRun{targets: make([]store.AckTarget, len(items))}
	for i, it := range items {
		p.targets[i] = store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: it.PartitionID, Group: it.Group}, TransactionID: it.TransactionID}
	}
	p.decide = func(states map[store.ConsumerKey]*store.ConsumerState, msgs []store.ResolvedMessage) (store.AckEffects, error) {
		d := ackDecider{states: states, touched: map[store.ConsumerKey]*store.ConsumerUpdate{}}
		p.results = make([]AckResult, len(items))
		for i, it := range items {
			r := d.decide(i, it, p.targets[i].ConsumerKey, msgs[i])
			if strict && r.Noop {
				// A transaction's other operations are the processing of this message: applied
				// once per consumption. A completion that changes nothing (the message was already
				// consumed, e.g. by another consumer after this lease expired) must not apply
				// them again (docs/decisions.md "A transaction's ack must consume").
				msg := RejectCommitted
				r.Success, r.Noop, r.Error = false, false, &msg
			}
			p.results[i] = r
			if strict && !r.Success {
				return store.AckEffects{}, errAckRejected
			}
		}
		for _, k := range d.order {
			d.eff.Updates = append(d.eff.Updates, *d.touched[k])
		}
		p.released = d.released
		return d.eff, nil
	}
	return p
}

// releasedSet is, per queue and consumer group, the partitions whose lease an ack ended.
type releasedSet map[releasedKey][]string

type releasedKey struct{ queue, group string }

func (r *releasedSet) add(queue, group, partition string) {
	if *r == nil {
		*r = releasedSet{}
	}
	k := releasedKey{queue, group}
	(*r)[k] = append((*r)[k], partition)
}

// announceReleased tells parked pops, here and on the other brokers, about the partitions whose lease
// ended. Call it once the acks committed.
func (e *Engine) announceReleased(released releasedSet) {
	for k, parts := range released {
		e.hub.AnnounceReleased(k.queue, k.group, parts)
	}
}

// delivered is the ack rule for a message ahead of the cursor (docs/decisions.md, "Ack rule"): an ack
// may only settle what was delivered. Under the live lease that is (ClaimCursor, DeliveredSeq], what
// the lease's pop handed out; without a leaseId, anything up to DeliveredSeq, the last message any pop
// of the group delivered from the partition (an expired lease's messages included). An ack past that
// would move the cursor over messages nobody received.
func delivered(st *store.ConsumerState, seq int64, withLease bool) bool {
	if withLease {
		return st.ClaimCursor < seq && seq <= st.DeliveredSeq
	}
	return seq <= st.DeliveredSeq
}

// ackDecider applies ack items in order to the in-memory state of the locked consumer rows.
type ackDecider struct {
	states   map[store.ConsumerKey]*store.ConsumerState
	touched  map[store.ConsumerKey]*store.ConsumerUpdate
	order    []store.ConsumerKey
	eff      store.AckEffects
	released releasedSet // partitions whose lease ended: parked pops may claim them
}

// decide applies one item, recording the resulting row update, dead letter or settled redelivery.
// Rules (docs/decisions.md):
//   - unknown message → unresolvable;
//   - message at or behind the cursor (and not a dead letter retried for the group) → a repeated
//     completion under the lease that delivered it (or with no lease) is a harmless noop, anything
//     else is "already committed";
//   - a leaseId that is not the live lease → invalid or expired lease;
//   - completed: cursor moves to the message; the lease ends once everything it delivered is acked;
//   - failed: within the retry budget the lease ends and the partition waits retryDelay before it is
//     served again; past it, the message goes to the dead-letter queue and the cursor moves past it;
//   - dlq: dead-letter queue, cursor moves past; retry: the lease ends, no retry is counted.
func (d *ackDecider) decide(i int, it AckItem, key store.ConsumerKey, m store.ResolvedMessage) AckResult {
	r := AckResult{Index: i, TransactionID: it.TransactionID}
	reject := func(msg string) AckResult {
		r.Error = &msg
		return r
	}
	if !m.Found {
		return reject(RejectUnresolvable)
	}
	r.QueueName, r.PartitionName = &m.Queue, &m.Partition
	st := d.states[key]
	if st == nil {
		return reject(RejectUnresolvable)
	}
	completion := it.Status == AckCompleted || it.Status == AckSuccess
	isLease := func(id *uuid.UUID) bool { return id != nil && id.String() == it.LeaseID }
	if m.Seq <= st.Cursor && !m.Redelivery {
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
	if !m.Redelivery && !delivered(st, m.Seq, it.LeaseID != "") {
		return reject(RejectNotDelivered)
	}
	u := d.touched[key]
	if u == nil {
		u = &store.ConsumerUpdate{ConsumerKey: key, Cursor: st.Cursor, Retries: st.Retries}
		d.touched[key] = u
		d.order = append(d.order, key)
	}
	release := func() {
		if st.LeaseLive {
			st.LeaseLive = false
			u.Release = true
			r.LeaseReleased = true
			d.released.add(m.Queue, key.Group, m.Partition)
		}
	}
	settle := func() {
		if m.Redelivery {
			// A retried dead letter: settled without moving the cursor back.
			m.Redelivery = false
			st.Redeliveries--
			d.eff.Redelivered = append(d.eff.Redelivered, store.Redelivered{ConsumerKey: key, Seq: m.Seq})
		} else {
			// Progress past the head gives the next message a fresh retry budget.
			st.Cursor, u.Cursor = m.Seq, m.Seq
		}
		st.Retries, u.Retries = 0, 0
		if st.LeaseLive && st.Cursor >= st.DeliveredSeq && st.Redeliveries <= 0 {
			release()
		}
	}
	toDLQ := func(errText string) {
		d.eff.DeadLetters = append(d.eff.DeadLetters, store.DeadLetter{ConsumerKey: key, Seq: m.Seq, Error: errText, Retries: st.Retries})
		r.DLQ = true
		settle()
	}
	switch it.Status {
	case AckCompleted, AckSuccess:
		u.Consumed++
		settle()
	case AckFailed:
		if st.Retries < m.RetryLimit {
			st.Retries++
			u.Retries = st.Retries
			u.DelayMs = m.RetryDelayMs
			release()
		} else {
			toDLQ(cmp.Or(it.Error, "Retries exhausted"))
		}
	case AckDLQ:
		toDLQ(cmp.Or(it.Error, "Moved to DLQ"))
	case AckRetry:
		release()
	}
	r.Success = true
	return r
}
