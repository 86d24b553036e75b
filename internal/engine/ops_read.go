package engine

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// The read side of the operations surface: thin wrappers so the HTTP layer talks to the engine only.

// ListQueues lists queues with their rolled-up counts.
func (e *Engine) ListQueues(ctx context.Context, p store.ListQueuesParams) ([]store.QueueSummary, error) {
	out, err := e.st.ListQueues(ctx, p)
	return out, opErr("list queues", err)
}

// QueueInfo reads one queue; ErrNotFound when missing.
func (e *Engine) QueueInfo(ctx context.Context, name string) (*store.QueueInfo, error) {
	q, err := e.st.QueueByName(ctx, name)
	return q, opErr("queue", err)
}

// PartitionCounts counts each partition of a queue exactly.
func (e *Engine) PartitionCounts(ctx context.Context, queueID uuid.UUID) ([]store.PartitionCounts, error) {
	out, err := e.st.PartitionCounts(ctx, queueID)
	return out, opErr("partition counts", err)
}

// ListMessages lists messages with their status for one group.
func (e *Engine) ListMessages(ctx context.Context, p store.ListMessagesParams) ([]store.MessageRow, error) {
	if p.Group == "" {
		p.Group = QueueMode
	}
	out, err := e.st.ListMessages(ctx, p)
	return out, opErr("list messages", err)
}

// QueueGroups names the consumer groups that exist on a queue.
func (e *Engine) QueueGroups(ctx context.Context, queue string) ([]string, error) {
	out, err := e.st.QueueGroups(ctx, queue)
	return out, opErr("queue groups", err)
}

// GetMessage reads one message (payload decrypted) and every group's view of it.
func (e *Engine) GetMessage(ctx context.Context, partitionID uuid.UUID, tx string) (*store.MessageDetail, []store.MessageConsumer, error) {
	m, cs, err := e.st.GetMessage(ctx, partitionID, tx)
	if err != nil {
		return nil, nil, opErr("get message", err)
	}
	if m.Payload, err = e.DecryptPayload(m.Payload, m.Encrypted); err != nil {
		return nil, nil, opErr("get message", err)
	}
	return m, cs, nil
}

// DeleteMessage deletes one message; ErrNotFound when missing.
func (e *Engine) DeleteMessage(ctx context.Context, partitionID uuid.UUID, tx string) error {
	return opErr("delete message", e.st.DeleteMessage(ctx, partitionID, tx))
}

// Overview reads the live lease and dead-letter summaries.
func (e *Engine) Overview(ctx context.Context) (store.LeaseSummary, store.DLQSummary, error) {
	l, d, err := e.st.Overview(ctx)
	return l, d, opErr("overview", err)
}

// RecordTrace stores a trace event; ErrNotFound when the message does not exist.
func (e *Engine) RecordTrace(ctx context.Context, p store.TraceParams) (uuid.UUID, error) {
	id, err := e.st.RecordTrace(ctx, p)
	return id, opErr("record trace", err)
}

// MessageTraces lists a message's trace events.
func (e *Engine) MessageTraces(ctx context.Context, partitionID uuid.UUID, tx string) ([]store.Trace, error) {
	out, err := e.st.MessageTraces(ctx, partitionID, tx)
	return out, opErr("traces", err)
}

// TracesByName lists the events carrying a trace name (message payloads decrypted).
func (e *Engine) TracesByName(ctx context.Context, name string, limit, offset int) ([]store.Trace, int64, error) {
	out, total, err := e.st.TracesByName(ctx, name, limit, offset)
	if err != nil {
		return nil, 0, opErr("traces", err)
	}
	for i := range out {
		p := out[i].Payload
		if p, err = e.DecryptPayload(p, true); err != nil {
			return nil, 0, opErr("traces", err)
		}
		out[i].Payload = p
	}
	return out, total, nil
}

// TraceNames lists trace names.
func (e *Engine) TraceNames(ctx context.Context, limit, offset int) ([]store.TraceName, int64, error) {
	out, total, err := e.st.TraceNames(ctx, limit, offset)
	return out, total, opErr("trace names", err)
}

// QueueOpsSeries reads the operation counters history.
func (e *Engine) QueueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]store.QueueOpsPoint, error) {
	out, err := e.st.QueueOpsSeries(ctx, from, to, queue, bucketMinutes)
	return out, opErr("queue ops", err)
}

// RetentionSeries reads the retention history.
func (e *Engine) RetentionSeries(ctx context.Context, from, to time.Time, bucketMinutes int) ([]store.RetentionPoint, error) {
	out, err := e.st.RetentionSeries(ctx, from, to, bucketMinutes)
	return out, opErr("retention history", err)
}

// PoolStats reports the database pool for the metrics surface.
func (e *Engine) PoolStats() (total, idle, waiting int32) { return e.st.PoolStats() }
