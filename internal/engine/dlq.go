package engine

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
)

// DeadLetters answers the dead-letter routes: listing, reading, discarding and retrying the messages
// the ack path set aside. It writes none: dead letters are made by acks (ack.go) and eviction.
type DeadLetters struct {
	st      *store.Store
	hub     *notify.Hub // a retry wakes parked pops
	decrypt func(stored []byte, encrypted bool) (json.RawMessage, error)
}

// DeadLetters is the dead-letter side of the engine.
func (e *Engine) DeadLetters() *DeadLetters { return e.dlq }

// DLQFilter selects dead letters for the listing.
type DLQFilter = store.DLQFilter

// DeadLetter is a dead-lettered message as the API shows it.
type DeadLetter struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	ConsumerGroup string          `json:"consumerGroup"`
	ErrorMessage  *string         `json:"errorMessage"`
	RetryCount    int32           `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   *string         `json:"producerSub"`
	TraceID       *string         `json:"traceId"`
	CreatedAt     string          `json:"createdAt"`
	FailedAt      string          `json:"failedAt"`
}

// DLQPage is one page of the dead-letter listing.
type DLQPage struct {
	Messages   []DeadLetter   `json:"messages"`
	Total      int64          `json:"total"`
	Pagination map[string]int `json:"pagination"`
}

func (dl *DeadLetters) deadLetter(d store.DeadLetterRow) (DeadLetter, error) {
	out := DeadLetter{ID: d.MessageID.String(), TransactionID: d.TransactionID, PartitionID: d.PartitionID.String(),
		Queue: d.Queue, Partition: d.Partition, ConsumerGroup: d.Group, RetryCount: d.RetryCount,
		CreatedAt: ISOMillis(d.CreatedAt), FailedAt: ISOMillis(d.FailedAt), Data: jsonNull,
		ErrorMessage: d.Error, ProducerSub: d.ProducerSub, TraceID: OptUUID(d.TraceID)}
	if len(d.Payload) > 0 {
		data, err := dl.decrypt(d.Payload, (d.Encrypted != nil && *d.Encrypted))
		if err != nil {
			return DeadLetter{}, err
		}
		out.Data = data
	}
	return out, nil
}

// ListDLQ lists dead letters, newest failure first, with the filtered total.
func (dl *DeadLetters) ListDLQ(ctx context.Context, f DLQFilter) (*DLQPage, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	rows, total, err := dl.st.DeadLetters().ListDeadLetters(ctx, f)
	if err != nil {
		return nil, OpFailed("dlq", err)
	}
	page := &DLQPage{Messages: make([]DeadLetter, 0, len(rows)), Total: total,
		Pagination: map[string]int{"limit": f.Limit, "offset": f.Offset}}
	for _, r := range rows {
		d, err := dl.deadLetter(r)
		if err != nil {
			return nil, OpFailed("dlq", err)
		}
		page.Messages = append(page.Messages, d)
	}
	return page, nil
}

// GetDLQ returns the dead letter of one message: the given group's, or the most recent failure.
func (dl *DeadLetters) GetDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (*DeadLetter, error) {
	rows, err := dl.st.DeadLetters().GetDeadLetters(ctx, partitionID, txID, group)
	if err != nil {
		return nil, OpFailed("dlq", err)
	}
	if len(rows) == 0 {
		return nil, dlqNotFound(partitionID, txID, group)
	}
	d, err := dl.deadLetter(rows[0])
	if err != nil {
		return nil, OpFailed("dlq", err)
	}
	return &d, nil
}

// DeleteDLQ discards the dead letters of one message (the given group's, or every group's).
func (dl *DeadLetters) DeleteDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	return dlqChange(ctx, "dlq delete", dl.st.DeadLetters().DeleteDeadLetters, partitionID, txID, group)
}

// RetryDLQ serves a dead-lettered message again to the group(s) it failed for, and only to them.
func (dl *DeadLetters) RetryDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	n, err := dlqChange(ctx, "dlq retry", dl.st.DeadLetters().RetryDeadLetters, partitionID, txID, group)
	if err == nil {
		dl.hub.WakeAll()
	}
	return n, err
}

// dlqChange applies change to the dead letters of one message; changing none of them is not found.
func dlqChange(ctx context.Context, op string, change func(context.Context, uuid.UUID, string, string) (int64, error),
	partitionID uuid.UUID, txID, group string) (int64, error) {
	n, err := change(ctx, partitionID, txID, group)
	if err != nil {
		return 0, OpFailed(op, err)
	}
	if n == 0 {
		return 0, dlqNotFound(partitionID, txID, group)
	}
	return n, nil
}

func dlqNotFound(partitionID uuid.UUID, txID, group string) error {
	if group != "" {
		return notFound("dead letter %s/%s of consumer group %q not found", partitionID, txID, group)
	}
	return notFound("dead letter %s/%s not found", partitionID, txID)
}

// DLQAddress names the dead letters of one message, optionally of one group.
type DLQAddress struct {
	PartitionID   uuid.UUID
	TransactionID string
	Group         string
}
