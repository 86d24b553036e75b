package engine

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

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

func (e *Engine) deadLetter(d store.DeadLetterRow) (DeadLetter, error) {
	out := DeadLetter{ID: d.MessageID.String(), TransactionID: d.TransactionID, PartitionID: d.PartitionID.String(),
		Queue: d.Queue, Partition: d.Partition, ConsumerGroup: d.Group, RetryCount: d.RetryCount,
		CreatedAt: isoMillis(d.CreatedAt), FailedAt: isoMillis(d.FailedAt), Data: jsonNull,
		ErrorMessage: d.Error, ProducerSub: d.ProducerSub, TraceID: optUUID(d.TraceID)}
	if len(d.Payload) > 0 {
		data, err := e.DecryptPayload(d.Payload, (d.Encrypted != nil && *d.Encrypted))
		if err != nil {
			return DeadLetter{}, err
		}
		out.Data = data
	}
	return out, nil
}

// ListDLQ lists dead letters, newest failure first, with the filtered total.
func (e *Engine) ListDLQ(ctx context.Context, f DLQFilter) (*DLQPage, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	rows, total, err := e.st.ListDeadLetters(ctx, f)
	if err != nil {
		return nil, opErr("dlq", err)
	}
	page := &DLQPage{Messages: make([]DeadLetter, 0, len(rows)), Total: total,
		Pagination: map[string]int{"limit": f.Limit, "offset": f.Offset}}
	for _, r := range rows {
		d, err := e.deadLetter(r)
		if err != nil {
			return nil, opErr("dlq", err)
		}
		page.Messages = append(page.Messages, d)
	}
	return page, nil
}

// GetDLQ returns the dead letter of one message: the given group's, or the most recent failure.
func (e *Engine) GetDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (*DeadLetter, error) {
	rows, err := e.st.GetDeadLetters(ctx, partitionID, txID, group)
	if err != nil {
		return nil, opErr("dlq", err)
	}
	if len(rows) == 0 {
		return nil, dlqNotFound(partitionID, txID, group)
	}
	d, err := e.deadLetter(rows[0])
	if err != nil {
		return nil, opErr("dlq", err)
	}
	return &d, nil
}

// DeleteDLQ discards the dead letters of one message (the given group's, or every group's).
func (e *Engine) DeleteDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	return dlqChange(ctx, "dlq delete", e.st.DeleteDeadLetters, partitionID, txID, group)
}

// RetryDLQ serves a dead-lettered message again to the group(s) it failed for, and only to them.
func (e *Engine) RetryDLQ(ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error) {
	n, err := dlqChange(ctx, "dlq retry", e.st.RetryDeadLetters, partitionID, txID, group)
	if err == nil {
		e.hub.WakeAll()
	}
	return n, err
}

// dlqChange applies change to the dead letters of one message; changing none of them is not found.
func dlqChange(ctx context.Context, op string, change func(context.Context, uuid.UUID, string, string) (int64, error),
	partitionID uuid.UUID, txID, group string) (int64, error) {
	n, err := change(ctx, partitionID, txID, group)
	if err != nil {
		return 0, opErr(op, err)
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
