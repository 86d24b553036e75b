package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Message is a delivered message. Acknowledge it with [Client.Ack] (or in a [Transaction]) using
// [Completed], [Failed], [DeadLetter] or [Release].
type Message struct {
	// ID is the broker's message id (a UUIDv7).
	ID string
	// TransactionID is the producer's idempotency key; make handlers idempotent on it, since every
	// rejected ack, lease expiry and replay is a redelivery.
	TransactionID string
	// TraceID is the producer-supplied trace id, or "".
	TraceID string
	// Data is the payload as raw JSON ("null" when pushed without one). See [Message.Decode].
	Data json.RawMessage
	// ProducerSub is the authenticated subject that pushed the message, or "".
	ProducerSub string
	// CreatedAt is when the message was stored.
	CreatedAt time.Time
	// Queue, Partition and PartitionID locate the message.
	Queue, Partition, PartitionID string
	// LeaseID is the lease this delivery holds ("" for an autoAck pop).
	LeaseID string
	// ConsumerGroup is the group it was delivered to (QueueMode in queue mode).
	ConsumerGroup string
	// RetryCount is how many times this message was delivered and failed before.
	RetryCount int
}

// Decode unmarshals the payload into v.
func (m Message) Decode(v any) error { return json.Unmarshal(m.Data, v) }

type wireMessage struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	TraceID       *string         `json:"traceId"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   *string         `json:"producerSub"`
	CreatedAt     string          `json:"createdAt"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       *string         `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Queue         string          `json:"queue"`
	RetryCount    int             `json:"retryCount"`
}

type popResponse struct {
	Success       bool          `json:"success"`
	Queue         string        `json:"queue"`
	Partition     string        `json:"partition"`
	PartitionID   string        `json:"partitionId"`
	LeaseID       *string       `json:"leaseId"`
	ConsumerGroup string        `json:"consumerGroup"`
	Messages      []wireMessage `json:"messages"`
	Error         string        `json:"error"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// PopOptions tune one pop. Zero values select the broker defaults.
type PopOptions struct {
	// Batch is the maximum number of messages returned (broker default 1).
	Batch int
	// Partitions lets a pop without [Queue.Partition] claim up to this many partitions at once.
	Partitions int
	// Wait makes the pop a long poll: the broker holds it until a message arrives or Timeout
	// passes. A long-poll pop waits out 429s indefinitely unless Retry429.MaxAttempts is set.
	Wait bool
	// Timeout is the long-poll deadline (broker default 30s); sent in milliseconds.
	Timeout time.Duration
	// AutoAck makes the broker advance the cursor at delivery (at-most-once); no lease is taken.
	AutoAck bool
}

// Pop fetches up to opts.Batch messages (GET /api/v1/pop/queue/:queue[/partition/:partition]). An
// empty result (HTTP 204) is (nil, nil), never an error; every failure, including a 401/403 or an
// exhausted 429 budget, is returned as an error and never disguised as "no messages".
func (q *Queue) Pop(ctx context.Context, opts PopOptions) ([]Message, error) {
	v := url.Values{}
	var path string
	switch {
	case q.name == "" && (q.namespace != "" || q.task != ""):
		path = "/api/v1/pop"
		if q.namespace != "" {
			v.Set("namespace", q.namespace)
		}
		if q.task != "" {
			v.Set("task", q.task)
		}
	case q.name == "":
		return nil, fmt.Errorf("queen: pop: %w", errEmptyName)
	default:
		path = "/api/v1/pop/queue/" + seg(q.name)
		if q.partition != "" {
			path += "/partition/" + seg(q.partition)
		}
	}
	if opts.Batch > 0 {
		v.Set("batch", strconv.Itoa(opts.Batch))
	}
	if opts.Partitions > 0 {
		v.Set("partitions", strconv.Itoa(opts.Partitions))
	}
	r := request{method: http.MethodGet, path: path, query: v}
	if opts.Wait {
		v.Set("wait", "true")
		r.longPoll = true
		poll := opts.Timeout
		if poll <= 0 {
			poll = 30 * time.Second
		}
		r.timeout = poll + q.c.cfg.Timeout
	}
	if opts.Timeout > 0 {
		v.Set("timeout", strconv.FormatInt(opts.Timeout.Milliseconds(), 10))
	}
	if q.group != "" {
		v.Set("consumerGroup", q.group)
	}
	if opts.AutoAck {
		v.Set("autoAck", "true")
	}
	if q.subscriptionMode != "" {
		v.Set("subscriptionMode", q.subscriptionMode)
	}
	if q.subscriptionFrom != "" {
		v.Set("subscriptionFrom", q.subscriptionFrom)
	}
	resp, err := q.c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNoContent || len(resp.body) == 0 {
		return nil, nil
	}
	var pr popResponse
	if err := json.Unmarshal(resp.body, &pr); err != nil {
		return nil, fmt.Errorf("%w: pop %s: %v", ErrMalformedResponse, q.name, err)
	}
	if len(pr.Messages) == 0 {
		if !pr.Success && pr.Error != "" && pr.Error != "no_available_partition" && pr.Error != "lease_held" && pr.Error != "partition_not_found" {
			// A snapshot-era broker passes stored-procedure failures through as 200.
			return nil, &APIError{Status: resp.status, Message: pr.Error, Method: r.method, URL: path}
		}
		return nil, nil
	}
	out := make([]Message, len(pr.Messages))
	for i, w := range pr.Messages {
		m := Message{
			ID: w.ID, TransactionID: w.TransactionID, TraceID: deref(w.TraceID), Data: w.Data,
			ProducerSub: deref(w.ProducerSub), PartitionID: w.PartitionID, Partition: w.Partition,
			LeaseID: deref(w.LeaseID), ConsumerGroup: w.ConsumerGroup, Queue: w.Queue, RetryCount: w.RetryCount,
		}
		if m.Queue == "" {
			m.Queue = pr.Queue
		}
		if m.Queue == "" {
			m.Queue = q.name
		}
		if m.LeaseID == "" && !opts.AutoAck {
			m.LeaseID = deref(pr.LeaseID)
		}
		if m.ConsumerGroup == "" {
			m.ConsumerGroup = pr.ConsumerGroup
		}
		if w.CreatedAt != "" {
			t, err := time.Parse(time.RFC3339Nano, w.CreatedAt)
			if err != nil {
				return nil, fmt.Errorf("%w: pop %s: createdAt %q: %v", ErrMalformedResponse, q.name, w.CreatedAt, err)
			}
			m.CreatedAt = t
		}
		out[i] = m
	}
	return out, nil
}
