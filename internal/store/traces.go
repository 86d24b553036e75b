package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// TraceParams is one trace event to record.
type TraceParams struct {
	PartitionID   uuid.UUID
	TransactionID string
	EventType     string
	Data          []byte
	ConsumerGroup string // "" = none
	WorkerID      string // "" = none
	Names         []string
}

// RecordTrace stores a trace event on a message; ErrNotFound when the message does not exist.
func (tr Traces) RecordTrace(ctx context.Context, p TraceParams) (uuid.UUID, error) {
	s := tr.s
	id := uuid.Must(uuid.NewV7())
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q("TraceInsert"), id, p.PartitionID, p.TransactionID, p.EventType, p.Data,
			nullText(p.ConsumerGroup), nullText(p.WorkerID)).Scan(&id); err != nil {
			return err
		}
		if len(p.Names) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, q("TraceNamesInsert"), id, p.Names)
		return err
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("store: record trace: %w", interpret(err))
	}
	return id, nil
}

// Trace is one recorded trace event.
type Trace struct {
	ID                      uuid.UUID
	TransactionID           string
	PartitionID             uuid.UUID
	EventType               string
	Data                    []byte
	ConsumerGroup, WorkerID *string
	CreatedAt               time.Time
	Queue, Partition        string
	Payload                 []byte
	Names                   []string
}

// MessageTraces lists a message's trace events, oldest first.
func (tr Traces) MessageTraces(ctx context.Context, partitionID uuid.UUID, transactionID string) ([]Trace, error) {
	s := tr.s
	rows, err := s.pool.Query(ctx, q("TraceListByMessage"), partitionID, transactionID)
	if err != nil {
		return nil, fmt.Errorf("store: message traces: %w", interpret(err))
	}
	out, err := collectRows(rows, func(r pgx.Rows) (Trace, error) {
		t := Trace{PartitionID: partitionID, TransactionID: transactionID}
		err := r.Scan(&t.ID, &t.EventType, &t.Data, &t.ConsumerGroup, &t.WorkerID, &t.CreatedAt, &t.Names)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: message traces: %w", interpret(err))
	}
	return out, nil
}

// TracesByName lists the events carrying a trace name, newest first, with the total count.
func (tr Traces) TracesByName(ctx context.Context, name string, limit, offset int) ([]Trace, int64, error) {
	s := tr.s
	rows, err := s.pool.Query(ctx, q("TraceListByName"), name, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: traces by name: %w", interpret(err))
	}
	out, err := collectRows(rows, func(r pgx.Rows) (Trace, error) {
		var t Trace
		err := r.Scan(&t.ID, &t.TransactionID, &t.PartitionID, &t.EventType, &t.Data, &t.ConsumerGroup, &t.WorkerID,
			&t.CreatedAt, &t.Queue, &t.Partition, &t.Payload, &t.Names)
		return t, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: traces by name: %w", interpret(err))
	}
	var total int64
	if err := s.pool.QueryRow(ctx, q("TraceCountByName"), name).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: traces by name: %w", interpret(err))
	}
	return out, total, nil
}

// TraceName is one trace name with its usage.
type TraceName struct {
	Name             string
	Traces, Messages int64
	LastSeen         time.Time
}

// TraceNames lists trace names, most recently used first, with the total count of names.
func (tr Traces) TraceNames(ctx context.Context, limit, offset int) ([]TraceName, int64, error) {
	s := tr.s
	rows, err := s.pool.Query(ctx, q("TraceNameList"), limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: trace names: %w", interpret(err))
	}
	out, err := collectRows(rows, func(r pgx.Rows) (TraceName, error) {
		var t TraceName
		err := r.Scan(&t.Name, &t.Traces, &t.Messages, &t.LastSeen)
		return t, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: trace names: %w", interpret(err))
	}
	var total int64
	if err := s.pool.QueryRow(ctx, q("TraceNameCount")).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: trace names: %w", interpret(err))
	}
	return out, total, nil
}
