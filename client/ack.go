package client

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// AckStatus is the outcome reported for a message.
type AckStatus string

// Acknowledgement statuses.
const (
	// StatusCompleted moves the group's cursor past the message.
	StatusCompleted AckStatus = "completed"
	// StatusFailed counts a retry: the lease is released and the rest of the delivered batch
	// redelivers, until the queue's retryLimit sends the message to the dead-letter queue.
	StatusFailed AckStatus = "failed"
	// StatusDLQ sends the message straight to the dead-letter queue.
	StatusDLQ AckStatus = "dlq"
	// StatusRetry releases the lease without counting a retry (redelivery).
	StatusRetry AckStatus = "retry"
)

// Ack is one acknowledgement. Build it from a delivered message with [Completed], [Failed],
// [DeadLetter] or [Release]; the message's partition, lease and consumer group are carried over.
type Ack struct {
	TransactionID string    // the message's transaction id (required)
	PartitionID   string    // the message's partition id (required)
	LeaseID       string    // the delivering lease; when empty the broker does not check it
	ConsumerGroup string    // the consuming group; empty means queue mode
	Status        AckStatus // default StatusCompleted
	Error         string    // failure reason recorded with failed and dead-lettered messages
}

func ackOf(m Message, s AckStatus, reason string) Ack {
	return Ack{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		ConsumerGroup: m.ConsumerGroup, Status: s, Error: reason}
}

// Completed acknowledges m as processed.
func Completed(m Message) Ack { return ackOf(m, StatusCompleted, "") }

// Failed reports m as failed with reason (subject to the queue's retry budget).
func Failed(m Message, reason string) Ack { return ackOf(m, StatusFailed, reason) }

// DeadLetter sends m to the dead-letter queue with reason.
func DeadLetter(m Message, reason string) Ack { return ackOf(m, StatusDLQ, reason) }

// Release gives m back for redelivery without counting a retry.
func Release(m Message) Ack { return ackOf(m, StatusRetry, "") }

// AckResult is the broker's verdict on one acknowledgement. Success is the only signal: a
// rejected ack still arrives with HTTP 200.
type AckResult struct {
	Index         int     `json:"index"`         // position in the request (checked by the SDK)
	TransactionID string  `json:"transactionId"` // the acknowledged transaction id (checked)
	Success       bool    `json:"success"`       // false: rejected, the cursor did not move
	Error         *string `json:"error"`         // the rejection reason, nil on success
	QueueName     string  `json:"queueName"`     // the message's queue
	PartitionName string  `json:"partitionName"` // the message's partition
	LeaseReleased bool    `json:"leaseReleased"` // this ack completed the lease's batch
	DLQ           bool    `json:"dlq"`           // the message went to the dead-letter queue
	Noop          bool    `json:"noop"`          // a harmless repeat of an earlier completion
}

// Err returns an [*AckError] when the ack was rejected, else nil.
func (r AckResult) Err() error {
	if r.Success {
		return nil
	}
	return &AckError{Index: r.Index, TransactionID: r.TransactionID, Reason: deref(r.Error)}
}

type wireAck struct {
	TransactionID string  `json:"transactionId"`
	PartitionID   string  `json:"partitionId"`
	LeaseID       *string `json:"leaseId,omitempty"`
	Status        string  `json:"status"`
	ConsumerGroup string  `json:"consumerGroup,omitempty"`
	Error         *string `json:"error,omitempty"`
}

func (a Ack) wire() wireAck {
	w := wireAck{TransactionID: a.TransactionID, PartitionID: a.PartitionID, Status: string(a.Status), ConsumerGroup: a.ConsumerGroup}
	if w.Status == "" {
		w.Status = string(StatusCompleted)
	}
	if a.LeaseID != "" {
		w.LeaseID = &a.LeaseID
	}
	if a.Error != "" {
		w.Error = &a.Error
	}
	return w
}

// Ack sends one acknowledgement (POST /api/v1/ack). A rejection (success:false, e.g. "invalid or
// expired lease") is returned as an [*AckError] together with the result; the message will be
// redelivered.
func (c *Client) Ack(ctx context.Context, a Ack) (AckResult, error) {
	if a.TransactionID == "" || a.PartitionID == "" {
		return AckResult{}, fmt.Errorf("queen: ack needs TransactionID and PartitionID")
	}
	var out []AckResult
	if err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/ack", body: a.wire()}, &out); err != nil {
		return AckResult{}, err
	}
	if err := checkAcks([]Ack{a}, out); err != nil {
		return AckResult{}, err
	}
	return out[0], out[0].Err()
}

// AckBatch sends many acknowledgements in one request (POST /api/v1/ack/batch) and returns one
// result per ack, in order. Per-item rejections are reported in the results (see
// [AckResult.Err]), not as the error; the error reports a failed request or a response that does
// not line up with the request. All acks must share one consumer group, because the batch route
// applies a single group to every item.
func (c *Client) AckBatch(ctx context.Context, acks []Ack) ([]AckResult, error) {
	if len(acks) == 0 {
		return []AckResult{}, nil
	}
	groupOf := func(a Ack) string {
		if a.ConsumerGroup == "" {
			return QueueMode
		}
		return a.ConsumerGroup
	}
	group := groupOf(acks[0])
	items := make([]wireAck, len(acks))
	for i, a := range acks {
		if a.TransactionID == "" || a.PartitionID == "" {
			return nil, fmt.Errorf("queen: ack %d needs TransactionID and PartitionID", i)
		}
		if groupOf(a) != group {
			return nil, fmt.Errorf("queen: ack batch mixes consumer groups %q and %q", group, groupOf(a))
		}
		items[i] = a.wire()
		items[i].ConsumerGroup = ""
	}
	body := map[string]any{"acknowledgments": items, "consumerGroup": group}
	var out []AckResult
	if err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/ack/batch", body: body}, &out); err != nil {
		return nil, err
	}
	if err := checkAcks(acks, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkAcks refuses an ack response that cannot be matched item by item to the request.
func checkAcks(sent []Ack, got []AckResult) error {
	if len(got) != len(sent) {
		return malformed("%d acknowledgements answered with %d results", len(sent), len(got))
	}
	for i := range got {
		if got[i].Index != i {
			return malformed("ack result %d carries index %d", i, got[i].Index)
		}
		if got[i].TransactionID != "" && got[i].TransactionID != sent[i].TransactionID {
			return malformed("ack result %d is for transaction %q, sent %q", i, got[i].TransactionID, sent[i].TransactionID)
		}
		if got[i].TransactionID == "" {
			got[i].TransactionID = sent[i].TransactionID
		}
	}
	return nil
}

// LeaseResult is the answer to [Client.ExtendLease].
type LeaseResult struct {
	Index     int       `json:"index"`     // always 0
	LeaseID   string    `json:"leaseId"`   // the extended lease
	Success   bool      `json:"success"`   // false: unknown, expired or inactive lease
	Error     *string   `json:"error"`     // the failure reason
	ExpiresAt time.Time `json:"expiresAt"` // the new expiry
}

// ExtendLease extends every partition lease held under leaseID to at least now+d
// (POST /api/v1/lease/:leaseId/extend); it never shortens a lease. d is rounded up to whole
// seconds (minimum 1). A lease that is unknown, expired or inactive is reported as an error
// wrapping [ErrLeaseLost] (HTTP 200 with success:false, or a 404).
func (c *Client) ExtendLease(ctx context.Context, leaseID string, d time.Duration) (LeaseResult, error) {
	if leaseID == "" {
		return LeaseResult{}, fmt.Errorf("queen: extend lease: %w", errEmptyName)
	}
	secs := max(int((d+time.Second-1)/time.Second), 1)
	var raw []struct {
		Index     int     `json:"index"`
		LeaseID   string  `json:"leaseId"`
		Success   bool    `json:"success"`
		Error     *string `json:"error"`
		ExpiresAt *string `json:"expiresAt"`
	}
	if err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/lease/" + seg(leaseID) + "/extend",
		body: map[string]int{"seconds": secs}}, &raw); err != nil {
		if isMissing(err) {
			return LeaseResult{}, fmt.Errorf("%w: %w", ErrLeaseLost, err)
		}
		return LeaseResult{}, err
	}
	if len(raw) != 1 || raw[0].Index != 0 || (raw[0].LeaseID != "" && raw[0].LeaseID != leaseID) {
		return LeaseResult{}, malformed("lease extend of %s answered %d results", leaseID, len(raw))
	}
	r := LeaseResult{Index: 0, LeaseID: leaseID, Success: raw[0].Success, Error: raw[0].Error}
	if s := deref(raw[0].ExpiresAt); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return LeaseResult{}, malformed("lease expiresAt %q: %v", s, err)
		}
		r.ExpiresAt = t
	}
	if !r.Success {
		return r, fmt.Errorf("%w: %s: %s", ErrLeaseLost, leaseID, deref(r.Error))
	}
	return r, nil
}
