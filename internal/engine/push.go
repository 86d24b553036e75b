package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/jsonscan"
	"github.com/queen-go/queen/internal/store"
)

// DefaultPartition is the partition of items that name none.
const DefaultPartition = "Default"

// PushItem is one message to push.
type PushItem struct {
	Queue         string
	Partition     string            // "" = Default
	Payload       jsonguard.Payload // zero = JSON null; checked when it was made
	TransactionID string            // "" = generated
	TraceID       *uuid.UUID
	ProducerSub   string // stamped by the caller from the authenticated subject; "" = none
	// minted: TransactionID was generated for this push (not the client's, not a spool replay), so it
	// cannot already be stored and the insert skips the duplicate lookup.
	minted bool
}

// PushResult is the per-item answer, in the wire's own (mostly snake_case) field names.
type PushResult struct {
	Index         int    `json:"index"`
	TransactionID string `json:"transaction_id"`
	Status        string `json:"status"`
	MessageID     string `json:"message_id,omitempty"`
	PartitionID   string `json:"partition_id,omitempty"`
	TraceID       any    `json:"trace_id,omitempty"` // explicit null on queued items without a trace
	QueueName     string `json:"queueName"`
	Queue         string `json:"queue,omitempty"`
	Partition     string `json:"partition,omitempty"`
	Error         string `json:"error,omitempty"`
}

// PushResults is a push's answer. It writes its own JSON text (AppendJSON): json.Marshal's reflection
// over it was the largest part of the broker's CPU per pushed message.
type PushResults []PushResult

// AppendJSON writes rs as json.Marshal does; ok=false when one holds a value it does not write itself
// (the caller then uses json.Marshal).
func (rs PushResults) AppendJSON(dst []byte) (_ []byte, ok bool) {
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
		dst = append(dst, `,"transaction_id":`...)
		dst = jsonscan.AppendString(dst, r.TransactionID)
		dst = append(dst, `,"status":`...)
		dst = jsonscan.AppendString(dst, r.Status)
		if r.MessageID != "" {
			dst = append(dst, `,"message_id":`...)
			dst = jsonscan.AppendString(dst, r.MessageID)
		}
		if r.PartitionID != "" {
			dst = append(dst, `,"partition_id":`...)
			dst = jsonscan.AppendString(dst, r.PartitionID)
		}
		switch tr := r.TraceID.(type) {
		case nil:
		case string:
			dst = append(dst, `,"trace_id":`...)
			dst = jsonscan.AppendString(dst, tr)
		case json.RawMessage:
			if string(tr) != "null" {
				return nil, false
			}
			dst = append(dst, `,"trace_id":null`...)
		default:
			return nil, false
		}
		dst = append(dst, `,"queueName":`...)
		dst = jsonscan.AppendString(dst, r.QueueName)
		if r.Queue != "" {
			dst = append(dst, `,"queue":`...)
			dst = jsonscan.AppendString(dst, r.Queue)
		}
		if r.Partition != "" {
			dst = append(dst, `,"partition":`...)
			dst = jsonscan.AppendString(dst, r.Partition)
		}
		if r.Error != "" {
			dst = append(dst, `,"error":`...)
			dst = jsonscan.AppendString(dst, r.Error)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// Push statuses.
const (
	StatusQueued    = "queued"
	StatusDuplicate = "duplicate"
	StatusBuffered  = "buffered"
	StatusFailed    = "failed"
)

var jsonNull = json.RawMessage("null")

// nullTraceID is the TraceID of a result without one, boxed once: converting jsonNull to any per
// result allocated per pushed message.
var nullTraceID any = jsonNull

// Push stores items and answers one result per item, in order. Items sharing a partition are stored in
// slice order; an item whose transactionId is already stored in its partition (earlier, or earlier in
// this same request) is a duplicate and stores nothing.
func (e *Engine) Push(ctx context.Context, items []PushItem) ([]PushResult, error) {
	if len(items) == 0 {
		return []PushResult{}, nil
	}
	if err := validatePushItems(items); err != nil {
		return nil, err
	}
	if e.divert(ctx) {
		return e.spoolPush(ctx, items)
	}
	refused, err := e.admit(ctx, items)
	if err != nil {
		return e.pushFailed(ctx, items, err)
	}
	// Items over their queue's maxSize are refused one by one; the others go through.
	admitted := items
	if slices.ContainsFunc(refused, func(why string) bool { return why != "" }) {
		admitted = make([]PushItem, 0, len(items))
		for i, it := range items {
			if refused[i] == "" {
				admitted = append(admitted, it)
			}
		}
	}
	res, err := e.pushStored(ctx, admitted)
	if err != nil {
		if res, err = e.pushFailed(ctx, admitted, err); err != nil {
			return nil, err
		}
	}
	if len(admitted) == len(items) {
		return res, nil
	}
	all := make([]PushResult, len(items))
	j := 0
	for i, it := range items {
		if refused[i] != "" {
			all[i] = PushResult{Index: i, TransactionID: it.TransactionID, Status: StatusFailed, QueueName: it.Queue,
				Queue: it.Queue, Partition: it.Partition, Error: refused[i]}
			continue
		}
		all[i] = res[j]
		all[i].Index = i
		j++
	}
	return all, nil
}

func (e *Engine) pushOnce(ctx context.Context, items []PushItem) ([]PushResult, []store.PartitionKey, error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	pids, err := e.partitionIDs(ctx, items)
	if err != nil {
		return nil, nil, err
	}
	buf := requestRows.Get().(*[]store.PushRow)
	job := pushJob{rows: slices.Grow((*buf)[:0], len(items))[:len(items)]}
	if err := e.pushRows(ctx, items, pids, job.rows); err != nil {
		return nil, nil, err
	}

	outs, err := e.push.do(ctx, job)
	if err != nil {
		// The rows are not recycled: a request that stopped waiting may still be in a worker's batch.
		return nil, nil, err
	}
	res := make([]PushResult, len(items))
	ids := rowIDTexts(job.rows)
	// The worker has answered and keeps nothing of the job, so its rows can serve the next request.
	if cap(job.rows) <= 1<<14 {
		clear(job.rows) // they point at the payloads
		*buf = job.rows[:0]
		requestRows.Put(buf)
	}
	var stale []store.PartitionKey
	var pidText string // pidOf as text: a request's items mostly share their partition
	var pidOf uuid.UUID
	for i, o := range outs {
		it := &items[i]
		switch {
		case o.Inserted && (pidText == "" || pids[i] != pidOf):
			pidText, pidOf = pids[i].String(), pids[i]
		case !o.Inserted && o.ExistingID == uuid.Nil:
			stale = append(stale, store.PartitionKey{Queue: it.Queue, Partition: it.Partition})
		}
		res[i] = pushResult(i, it, o, idText(ids, i), pidText)
	}
	e.announcePushed(items, pids)
	e.observePush(res)
	return res, stale, nil
}

// pushResult answers item i of a push from its stored outcome: queued with the new message's id and
// partition, or a duplicate naming the message already stored.
func pushResult(i int, it *PushItem, o store.PushOutcome, id, partitionID string) PushResult {
	r := PushResult{Index: i, TransactionID: it.TransactionID, QueueName: it.Queue}
	switch {
	case o.Inserted:
		r.Status, r.MessageID, r.PartitionID, r.TraceID = StatusQueued, id, partitionID, nullTraceID
		if it.TraceID != nil {
			r.TraceID = it.TraceID.String()
		}
	case o.ExistingID != uuid.Nil:
		r.Status, r.MessageID = StatusDuplicate, o.ExistingID.String()
	}
	return r
}

// announcePushed wakes, per queue, as many parked pops as the push filled partitions, and those parked
// on these partitions (items[i] went to partition pids[i]).
func (e *Engine) announcePushed(items []PushItem, pids []uuid.UUID) {
	parts := map[string]map[uuid.UUID]string{}
	for i, it := range items {
		if parts[it.Queue] == nil {
			parts[it.Queue] = map[uuid.UUID]string{}
		}
		parts[it.Queue][pids[i]] = it.Partition
	}
	for q, ps := range parts {
		names := slices.Collect(maps.Values(ps))
		e.hub.AnnouncePartitions(q, names)
		e.pushedLater(q, names)
	}
}

// pushFailed answers a push that PostgreSQL did not take: spooled when the database is unreachable
// and a spool is configured (the items keep their transactionIds, so a push that did commit before the
// connection broke is deduplicated on replay), an error otherwise.
func (e *Engine) pushFailed(ctx context.Context, items []PushItem, err error) ([]PushResult, error) {
	if e.spool != nil && unreachable(err) {
		e.dbDown.Store(true)
		return e.spoolPush(ctx, items)
	}
	return nil, OpFailed("push", err)
}

// pushStored inserts items (with their transactionIds assigned), retrying when a cached partition
// vanished because its queue was deleted meanwhile.
func (e *Engine) pushStored(ctx context.Context, items []PushItem) ([]PushResult, error) {
	for attempt := 0; ; attempt++ {
		res, stale, err := e.pushOnce(ctx, items)
		if err != nil {
			return nil, err
		}
		if len(stale) == 0 || attempt == 2 {
			return res, nil
		}
		e.parts.forget(stale...)
		// The items this attempt stored are pushed again and must be found: no id counts as fresh.
		for i := range items {
			items[i].minted = false
		}
	}
}

// partitionIDs resolves every item's partition, creating missing queues and partitions.
func (e *Engine) partitionIDs(ctx context.Context, items []PushItem) ([]uuid.UUID, error) {
	// A request's items mostly name one partition: each run of items naming the same one is looked up
	// once (a lookup takes the cache's lock).
	newRun := func(i int) bool {
		return i == 0 || items[i].Queue != items[i-1].Queue || items[i].Partition != items[i-1].Partition
	}
	var keys []store.PartitionKey
	for i := range items {
		if newRun(i) {
			keys = append(keys, store.PartitionKey{Queue: items[i].Queue, Partition: items[i].Partition})
		}
	}
	ids, err := e.partitionIDsOf(ctx, keys)
	if err != nil || len(keys) == len(items) {
		return ids, err
	}
	out := make([]uuid.UUID, len(items))
	k := -1
	for i := range items {
		if newRun(i) {
			k++
		}
		out[i] = ids[k]
	}
	return out, nil
}

// partitionIDsOf resolves keys, creating missing queues and partitions.
func (e *Engine) partitionIDsOf(ctx context.Context, keys []store.PartitionKey) ([]uuid.UUID, error) {
	return readThrough(e.parts, keys, func(missing []store.PartitionKey) (map[store.PartitionKey]uuid.UUID, error) {
		ids, err := e.st.EnsurePartitions(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, k := range missing {
			if _, ok := ids[k]; !ok {
				return nil, errors.New("partition not created")
			}
		}
		return ids, nil
	})
}

type pushJob struct {
	rows []store.PushRow
}

// pushFill is how many rows in flight a push worker takes before pushes to other partitions go to the
// next worker (coalescer.sharded).
const pushFill = 100

// pushShard keys a push job by the partition of its first row (see coalescer.sharded).
func pushShard(j pushJob) uint64 {
	if len(j.rows) == 0 {
		return 0
	}
	return binary.BigEndian.Uint64(j.rows[0].PartitionID[8:])
}

// requestRows recycles the rows of one push request, which live until the push coalescer answers it.
var requestRows = sync.Pool{New: func() any { return new([]store.PushRow) }}

// mergedRows recycles the rows of merged push batches, which the store needs only until it answers.
var mergedRows = sync.Pool{New: func() any { return new([]store.PushRow) }}

// pushBatch stores the rows of several concurrent push requests with one statement and splits the
// outcomes per request (the coalescer retries each request alone when the merged one fails).
func (e *Engine) pushBatch(ctx context.Context, jobs []pushJob) ([][]store.PushOutcome, error) {
	rows := jobs[0].rows
	if len(jobs) > 1 {
		n := 0
		for _, j := range jobs {
			n += len(j.rows)
		}
		buf := mergedRows.Get().(*[]store.PushRow)
		rows = slices.Grow((*buf)[:0], n)
		for _, j := range jobs {
			rows = append(rows, j.rows...)
		}
		defer func() {
			// The rows hold the requests' payloads: cleared so the pool keeps none of them alive.
			clear(rows)
			if cap(rows) <= 1<<14 { // a rare huge merge is not kept for the next ones
				*buf = rows[:0]
				mergedRows.Put(buf)
			}
		}()
	}
	octx, cancel := context.WithTimeout(ctx, e.opt.OperationTimeout)
	defer cancel()
	all, err := e.st.Push(octx, rows)
	if err != nil {
		return nil, err
	}
	outs := make([][]store.PushOutcome, len(jobs))
	off := 0
	for i, j := range jobs {
		outs[i] = all[off : off+len(j.rows)]
		off += len(j.rows)
	}
	return outs, nil
}

// pushRows builds the stored rows of items (items[i] goes to partition pids[i]) into rows: new UUIDv7
// ids in item order (so ids minted in order sort in order), a JSON null for an empty payload, and the
// payload sealed when the queue is encrypted. Every path that stores pushes (push, transaction, stream
// cycle) goes through it, so none can skip encryption.
func (e *Engine) pushRows(ctx context.Context, items []PushItem, pids []uuid.UUID, rows []store.PushRow) error {
	ids := make([]uuid.UUID, len(items))
	newMessageIDs(ids)
	var sub *string // the items of a request share their producer
	seal := rowSealer{e: e}
	for i := range items {
		it := &items[i]
		if sub == nil || *sub != it.ProducerSub {
			sub = nonEmpty(it.ProducerSub)
		}
		r := store.PushRow{
			PartitionID:   pids[i],
			TransactionID: it.TransactionID,
			ID:            ids[i],
			Payload:       it.Payload.JSON(),
			ProducerSub:   sub,
			TraceID:       it.TraceID,
			Minted:        it.minted,
		}
		if len(r.Payload) == 0 {
			r.Payload = jsonNull
		}
		if err := seal.seal(ctx, it.Queue, &r); err != nil {
			return err
		}
		rows[i] = r
	}
	return nil
}
