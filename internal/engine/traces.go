package engine

import (
	"context"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// RecordTrace stores a trace event; a NotFoundError when the message does not exist.
func (e *Engine) RecordTrace(ctx context.Context, p store.TraceParams) (uuid.UUID, error) {
	id, err := e.st.RecordTrace(ctx, p)
	return id, opErrOr("record trace", err, "Message not found: %s/%s", p.PartitionID, p.TransactionID)
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
