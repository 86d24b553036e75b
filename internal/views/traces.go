package views

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// TraceRecord is a trace event to store on a message.
type TraceRecord = store.TraceParams

// RecordTrace stores a trace event; a NotFoundError when the message does not exist.
func (v *Views) RecordTrace(ctx context.Context, t TraceRecord) (uuid.UUID, error) {
	id, err := v.st.Traces().RecordTrace(ctx, t)
	return id, engine.OpFailedOr("record trace", err, "Message not found: %s/%s", t.PartitionID, t.TransactionID)
}

// TraceEvent is one recorded trace event.
type TraceEvent struct {
	ID            string          `json:"id"`
	EventType     string          `json:"event_type"`
	Data          json.RawMessage `json:"data"`
	ConsumerGroup *string         `json:"consumer_group"`
	WorkerID      *string         `json:"worker_id"`
	CreatedAt     string          `json:"created_at"`
	TraceNames    []string        `json:"trace_names"`
}

// NamedTraceEvent is a trace event found by name, with the message it is about.
type NamedTraceEvent struct {
	TraceEvent
	TransactionID  string          `json:"transaction_id"`
	PartitionID    string          `json:"partition_id"`
	QueueName      string          `json:"queue_name"`
	PartitionName  string          `json:"partition_name"`
	MessagePayload json.RawMessage `json:"message_payload"`
}

func traceEvent(t store.Trace) TraceEvent {
	names := t.Names
	if names == nil {
		names = []string{}
	}
	return TraceEvent{ID: t.ID.String(), EventType: t.EventType, Data: json.RawMessage(t.Data), ConsumerGroup: t.ConsumerGroup,
		WorkerID: t.WorkerID, CreatedAt: engine.ISOMillis(t.CreatedAt), TraceNames: names}
}

// MessageTraces lists a message's trace events, oldest first.
func (v *Views) MessageTraces(ctx context.Context, partitionID uuid.UUID, tx string) ([]TraceEvent, error) {
	var ts []store.Trace
	err := v.read(ctx, func(st *store.Store) (err error) {
		ts, err = st.Traces().MessageTraces(ctx, partitionID, tx)
		return err
	})
	if err != nil {
		return nil, engine.OpFailed("traces", err)
	}
	out := make([]TraceEvent, len(ts))
	for i, t := range ts {
		out[i] = traceEvent(t)
	}
	return out, nil
}

// TracesByName lists the events carrying a trace name, with their messages' payloads decrypted.
func (v *Views) TracesByName(ctx context.Context, name string, limit, offset int) ([]NamedTraceEvent, int64, error) {
	var ts []store.Trace
	var total int64
	err := v.read(ctx, func(st *store.Store) (err error) {
		ts, total, err = st.Traces().TracesByName(ctx, name, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, engine.OpFailed("traces", err)
	}
	out := make([]NamedTraceEvent, len(ts))
	for i, t := range ts {
		p, err := v.payloads.DecryptPayload(t.Payload, true)
		if err != nil {
			return nil, 0, engine.OpFailed("traces", err)
		}
		out[i] = NamedTraceEvent{TraceEvent: traceEvent(t), TransactionID: t.TransactionID, PartitionID: t.PartitionID.String(),
			QueueName: t.Queue, PartitionName: t.Partition, MessagePayload: p}
	}
	return out, total, nil
}

// TraceNameUsage is one trace name with how often it is used.
type TraceNameUsage struct {
	Name         string `json:"trace_name"`
	TraceCount   int64  `json:"trace_count"`
	MessageCount int64  `json:"message_count"`
	LastSeen     string `json:"last_seen"`
}

// TraceNames lists trace names with their usage.
func (v *Views) TraceNames(ctx context.Context, limit, offset int) ([]TraceNameUsage, int64, error) {
	var ns []store.TraceName
	var total int64
	err := v.read(ctx, func(st *store.Store) (err error) {
		ns, total, err = st.Traces().TraceNames(ctx, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, engine.OpFailed("trace names", err)
	}
	out := make([]TraceNameUsage, len(ns))
	for i, n := range ns {
		out[i] = TraceNameUsage{Name: n.Name, TraceCount: n.Traces, MessageCount: n.Messages, LastSeen: engine.ISOMillis(n.LastSeen)}
	}
	return out, total, nil
}
