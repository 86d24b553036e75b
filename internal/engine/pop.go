package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/jsonscan"
	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
)

// PopRequest is one pop as the HTTP layer parsed it.
type PopRequest struct {
	Queue      string
	Partition  string // "" = any partition (wildcard)
	Group      string // "" = queue mode
	Batch      int
	Partitions int
	AutoAck    bool
	Wait       bool
	Timeout    time.Duration
	// Where a named group starts in partitions it meets first (see Engine.subscription).
	SubscriptionMode string
	SubscriptionFrom string
	// Namespace/task pop: Queue is empty and every queue matching these is drained, highest priority first.
	Namespace, Task string
}

// Message is a delivered message, with the wire's field names.
type Message struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	TraceID       *string         `json:"traceId"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   *string         `json:"producerSub"`
	CreatedAt     string          `json:"createdAt"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Queue         string          `json:"queue"`
	RetryCount    int32           `json:"retryCount"`
}

// PopResult is a non-empty pop. The top-level partition fields name the first claimed partition; each
// message's own fields are authoritative.
type PopResult struct {
	Success           bool      `json:"success"`
	Queue             string    `json:"queue"`
	Partition         string    `json:"partition"`
	PartitionID       string    `json:"partitionId"`
	LeaseID           string    `json:"leaseId"`
	ConsumerGroup     string    `json:"consumerGroup"`
	PartitionsClaimed int       `json:"partitionsClaimed"`
	Messages          []Message `json:"messages"`
}

// partitions names the claimed partitions, in claim order (the messages come grouped by partition).
func (res *PopResult) partitions() []string {
	parts := make([]string, 0, res.PartitionsClaimed)
	for i := range res.Messages {
		if i == 0 || res.Messages[i].Partition != res.Messages[i-1].Partition {
			parts = append(parts, res.Messages[i].Partition)
		}
	}
	return parts
}

// AppendJSON writes res as json.Marshal does, in one pass over each payload: a pop answer is written
// once per delivered batch and carries every message's payload, and json.Marshal's reflection and
// its byte-at-a-time pass over every json.RawMessage (validated, compacted and HTML-escaped on the
// way out) were a large part of the broker's CPU per delivery with several consumer groups. ok=false
// when res holds a value it does not write itself (a payload deeper than jsonscan.MaxDepth, or not
// JSON at all, which json.Marshal refuses): the caller then uses json.Marshal.
func (res *PopResult) AppendJSON(dst []byte) (_ []byte, ok bool) {
	if res == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, `{"success":`...)
	dst = strconv.AppendBool(dst, res.Success)
	dst = append(dst, `,"queue":`...)
	dst = jsonscan.AppendString(dst, res.Queue)
	dst = append(dst, `,"partition":`...)
	dst = jsonscan.AppendString(dst, res.Partition)
	dst = append(dst, `,"partitionId":`...)
	dst = jsonscan.AppendString(dst, res.PartitionID)
	dst = append(dst, `,"leaseId":`...)
	dst = jsonscan.AppendString(dst, res.LeaseID)
	dst = append(dst, `,"consumerGroup":`...)
	dst = jsonscan.AppendString(dst, res.ConsumerGroup)
	dst = append(dst, `,"partitionsClaimed":`...)
	dst = strconv.AppendInt(dst, int64(res.PartitionsClaimed), 10)
	dst = append(dst, `,"messages":`...)
	if res.Messages == nil {
		return append(dst, "null}"...), true
	}
	dst = append(dst, '[')
	for i := range res.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = res.Messages[i].appendJSON(dst); !ok {
			return nil, false
		}
	}
	return append(dst, "]}"...), true
}

func (m *Message) appendJSON(dst []byte) (_ []byte, ok bool) {
	dst = append(dst, `{"id":`...)
	dst = jsonscan.AppendString(dst, m.ID)
	dst = append(dst, `,"transactionId":`...)
	dst = jsonscan.AppendString(dst, m.TransactionID)
	dst = append(dst, `,"traceId":`...)
	dst = appendOptString(dst, m.TraceID)
	dst = append(dst, `,"data":`...)
	if m.Data == nil {
		dst = append(dst, "null"...) // what RawMessage.MarshalJSON answers for nil
	} else if dst, ok = jsonscan.AppendCompact(dst, m.Data); !ok {
		return nil, false
	}
	dst = append(dst, `,"producerSub":`...)
	dst = appendOptString(dst, m.ProducerSub)
	dst = append(dst, `,"createdAt":`...)
	dst = jsonscan.AppendString(dst, m.CreatedAt)
	dst = append(dst, `,"partitionId":`...)
	dst = jsonscan.AppendString(dst, m.PartitionID)
	dst = append(dst, `,"partition":`...)
	dst = jsonscan.AppendString(dst, m.Partition)
	dst = append(dst, `,"leaseId":`...)
	dst = jsonscan.AppendString(dst, m.LeaseID)
	dst = append(dst, `,"consumerGroup":`...)
	dst = jsonscan.AppendString(dst, m.ConsumerGroup)
	dst = append(dst, `,"queue":`...)
	dst = jsonscan.AppendString(dst, m.Queue)
	dst = append(dst, `,"retryCount":`...)
	dst = strconv.AppendInt(dst, int64(m.RetryCount), 10)
	return append(dst, '}'), true
}

// Pop claims and returns messages, or nil when there is nothing to deliver. With Wait it parks until a
// push to the queue (on any broker) makes something available or the timeout passes; the answer never
// comes after the deadline. ctx is the consumer's: when it ends while a claim runs (the client went
// away), the claim is given back (giveBack) and Pop answers nil.
func (e *Engine) Pop(ctx context.Context, r PopRequest) (*PopResult, error) {
	res, err := e.pop(ctx, r)
	if res != nil && ctx.Err() != nil {
		e.giveBack(res)
		return nil, nil
	}
	return res, err
}

// giveBack ends the lease of a pop whose answer has nobody to go to, so that its partitions are
// claimable at once rather than after leaseTime (a whole partition stalls meanwhile). It is what the
// lease's expiry would do, sooner: the cursor stays, and a redelivery is not counted as a retry. If it
// fails, the lease runs out as before. autoAck pops have no lease: their messages were consumed at
// the claim.
func (e *Engine) giveBack(res *PopResult) {
	if res.LeaseID == "" {
		return
	}
	id, err := uuid.Parse(res.LeaseID)
	if err != nil {
		return
	}
	e.leases.take(id)
	ctx, cancel := context.WithTimeout(context.Background(), e.opt.OperationTimeout)
	defer cancel()
	released, err := e.st.ReleaseLease(ctx, id)
	if err != nil {
		e.log.Warn("pop: could not give back the claim of a consumer that went away; its lease runs out",
			slog.String("queue", res.Queue), slog.String("lease", res.LeaseID), slog.Any("error", err))
		return
	}
	if len(released) == 0 {
		return
	}
	e.hub.Cancel(res.LeaseID, "")
	e.hub.AnnounceReleased(res.Queue, res.ConsumerGroup, res.partitions())
}

func (e *Engine) pop(ctx context.Context, r PopRequest) (*PopResult, error) {
	if r.Group == "" {
		r.Group = QueueMode
	}
	r.Batch = max(r.Batch, 1)
	r.Partitions = max(r.Partitions, 1)
	if r.Partition != "" {
		r.Partitions = 1
	}
	if _, popPaused := e.modes.Flags(ctx); popPaused {
		return nil, nil // pop maintenance: every pop answers empty
	}
	// tried lists the queues a try found empty; a long-poll's re-tries (after a wake-up or at the
	// safety re-check) are not pop requests of their own, so an empty answer is counted once, at the end.
	var tried []string
	try := func(ctx context.Context) (*PopResult, error) { return e.popOnce(ctx, r, &tried) }
	keys := []string{r.Queue}
	if r.Group != QueueMode {
		mode, ts, err := e.subscription(r.SubscriptionMode, r.SubscriptionFrom)
		if err != nil {
			return nil, err
		}
		try = func(ctx context.Context) (*PopResult, error) {
			if err := e.ensureSubscription(ctx, r.Queue, r.Group, mode, ts); err != nil {
				return nil, OpFailed("pop", err)
			}
			return e.popOnce(ctx, r, &tried)
		}
	}
	if r.Queue == "" {
		// Namespace/task pop: the matching queues, highest priority first, looked up on every try so
		// that a queue created while the pop is parked is found; any push wakes it.
		one := try
		keys = []string{notify.AnyQueue}
		try = func(ctx context.Context) (*PopResult, error) {
			queues, err := e.st.Queues().QueuesByNamespaceTask(ctx, r.Namespace, r.Task)
			if err != nil {
				return nil, OpFailed("pop", err)
			}
			for _, q := range queues {
				r.Queue = q
				if res, err := one(ctx); res != nil || err != nil {
					return res, err
				}
			}
			return nil, nil
		}
	}
	defer func() {
		for _, q := range tried {
			e.observePop(q, nil, nil)
		}
	}()
	if !r.Wait {
		return try(ctx)
	}
	timeout := min(max(r.Timeout, 0), e.opt.MaxPollTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	park := func() *notify.Waiter { return e.hub.Park(keys...) }
	if r.Partition != "" && r.Queue != "" {
		// A pop of one partition is woken only by what names that partition (or names none).
		park = func() *notify.Waiter { return e.hub.ParkPartition(r.Queue, r.Partition) }
	}
	for {
		// Register before trying: a push landing between the empty try and the wait still wakes us.
		w := park()
		res, err := try(ctx)
		if res != nil || err != nil {
			e.hub.Unpark(w)
			if err != nil && (ctx.Err() != nil || errors.Is(err, errDraining)) {
				return nil, nil // the deadline or a shutdown interrupted a lookup before any claim
			}
			return res, err
		}
		// The safety re-check is armed only when the request outlives the latest it could come due:
		// otherwise the client's next pop, which tries first, is that re-check. With the defaults
		// (30 s timeouts and interval) parked consumers cost one statement per timeout, not 1.5.
		var recheck <-chan time.Time
		var t *time.Timer
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > e.opt.RecheckInterval*5/4 {
			t = time.NewTimer(jitter(e.opt.RecheckInterval))
			recheck = t.C
		}
		draining := false
		select {
		case <-w.C():
		case <-recheck:
		case <-ctx.Done():
		case <-e.draining:
			draining = true
		}
		if t != nil {
			t.Stop()
		}
		e.hub.Unpark(w)
		if ctx.Err() != nil || draining {
			return nil, nil
		}
	}
}

// jitter spreads d over [3/4 d, 5/4 d), so that pops parked together do not re-check together.
func jitter(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2+1)
}

// noteTried records that a try found queue empty.
func noteTried(tried *[]string, queue string) {
	if !slices.Contains(*tried, queue) {
		*tried = append(*tried, queue)
	}
}

// popOnce runs one pop statement. An empty answer is not counted here but noted in tried (once per
// queue), for Pop to count once per request.
func (e *Engine) popOnce(ctx context.Context, r PopRequest, tried *[]string) (*PopResult, error) {
	lease := uuid.Must(uuid.NewV7())
	p := store.PopParams{
		Queue: r.Queue, Group: r.Group, MaxPartitions: r.Partitions, Batch: r.Batch, LeaseID: lease, AutoAck: r.AutoAck,
		Partition: nonEmpty(r.Partition),
	}
	// A long-poll of one partition that its group found empty, confirmed since, parks without a
	// statement (notify/empty.go): idle consumers cost the database nothing per request.
	memo := r.Wait && r.Partition != ""
	if memo && e.hub.KnownEmpty(r.Queue, r.Partition, r.Group) {
		noteTried(tried, r.Queue)
		return nil, nil
	}
	if err := e.slots.take(ctx, r.Wait, e.draining); err != nil {
		return nil, OpFailed("pop", err)
	}
	// The claim commits leases: once sent it must finish and be answered, even if the long-poll's
	// deadline passes meanwhile, or its messages would sit leased with nobody to deliver them to.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opt.OperationTimeout)
	rows, err := e.st.Pop(sctx, p)
	cancel()
	e.slots.release()
	if err != nil {
		return nil, OpFailed("pop", err)
	}
	if len(rows) == 0 {
		if memo {
			e.hub.NoteEmpty(r.Queue, r.Partition, r.Group)
		}
		noteTried(tried, r.Queue)
		return nil, nil
	}
	*tried = (*tried)[:0] // a delivery is the request's answer: no empty pop to count
	created := make([]time.Time, len(rows))
	leaseID := rows[0].LeaseID.String()
	if r.AutoAck {
		leaseID = ""
	}
	res := &PopResult{
		Success: true, Queue: r.Queue, Partition: rows[0].Partition, PartitionID: rows[0].PartitionID.String(),
		LeaseID: leaseID, ConsumerGroup: r.Group, Messages: make([]Message, len(rows)),
	}
	last, lastID := rows[0].PartitionID, res.PartitionID
	res.PartitionsClaimed = 1
	for i, m := range rows {
		if m.PartitionID != last {
			// Rows come grouped by partition: one id string per partition, not per message.
			res.PartitionsClaimed++
			last, lastID = m.PartitionID, m.PartitionID.String()
		}
		msg := Message{
			ID: m.ID.String(), TransactionID: m.TransactionID, Data: m.Payload,
			CreatedAt:   m.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
			PartitionID: lastID, Partition: m.Partition, LeaseID: leaseID,
			ConsumerGroup: r.Group, Queue: r.Queue, RetryCount: m.Retries,
		}
		msg.TraceID, msg.ProducerSub = OptUUID(m.TraceID), m.ProducerSub
		if len(msg.Data) == 0 {
			msg.Data = jsonNull
		}
		if msg.Data, err = e.DecryptPayload(msg.Data, m.Encrypted); err != nil {
			return nil, OpFailed("pop", err)
		}
		res.Messages[i], created[i] = msg, m.CreatedAt
	}
	if !r.AutoAck && res.PartitionsClaimed == 1 {
		txids := make([]string, len(res.Messages))
		for i := range res.Messages {
			txids[i] = res.Messages[i].TransactionID
		}
		e.leases.put(rows[0].LeaseID, memoLease{partition: rows[0].PartitionID, group: r.Group, queue: r.Queue,
			partitionName: rows[0].Partition, txids: txids})
	}
	parts := res.partitions()
	e.hub.Claimed(r.Queue, r.Group, parts)
	if !r.AutoAck {
		e.leaseHandedOut(r.Queue, rows[0].LeaseID, parts)
	}
	e.observePop(r.Queue, res, created)
	return res, nil
}
