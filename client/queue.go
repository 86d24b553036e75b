package client

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"
)

// QueueMode is the consumer-group name the broker uses for queue mode (competing consumers sharing
// one cursor per partition). A [Queue] without [Queue.Group] consumes in queue mode.
const QueueMode = "__QUEUE_MODE__"

// Subscription modes for a named consumer group's first contact with a partition.
const (
	// SubscribeAll starts a new group at the beginning of the queue (the default).
	SubscribeAll = "all"
	// SubscribeNew starts a new group at "now", skipping history.
	SubscribeNew = "new"
)

// Queue addresses a queue, optionally one partition of it and a consumer group. It is a cheap
// immutable value: every builder method returns a modified copy, so a base handle can be shared.
//
//	orders := c.Queue("orders")
//	orders.Partition("user-1").Push(ctx, client.Payload(order))
//	msgs, err := orders.Group("billing").Pop(ctx, client.PopOptions{Batch: 10})
type Queue struct {
	c                *Client
	name             string
	partition        string
	group            string
	subscriptionMode string
	subscriptionFrom string
	namespace, task  string
	opts             *QueueOptions
}

// Queue returns a handle on the named queue. Queues are created on first push; use
// [Queue.Config] and [Queue.Create] to configure one explicitly.
func (c *Client) Queue(name string) *Queue { return &Queue{c: c, name: name} }

// Matching returns a consume-only handle over every queue of a namespace and/or task: its
// [Queue.Pop] and [Queue.Consume] use GET /api/v1/pop?namespace=&task=, which serves the queue
// with the highest priority first. Each [Message] names its queue. An empty argument does not
// filter, but at least one must be set.
func (c *Client) Matching(namespace, task string) *Queue {
	return &Queue{c: c, namespace: namespace, task: task}
}

// Name returns the queue name.
func (q *Queue) Name() string { return q.name }

// Partition returns a copy addressing one partition. Pushes go to it (default partition
// "Default") and pops read only it.
func (q *Queue) Partition(name string) *Queue { n := *q; n.partition = name; return &n }

// Group returns a copy consuming as the named consumer group (bus/fan-out mode: every group sees
// every message). An empty name means queue mode.
func (q *Queue) Group(name string) *Queue { n := *q; n.group = name; return &n }

// SubscriptionMode returns a copy whose pops ask for subscription mode mode ([SubscribeAll] or
// [SubscribeNew]) the first time the group meets a partition. Only named groups use it.
func (q *Queue) SubscriptionMode(mode string) *Queue { n := *q; n.subscriptionMode = mode; return &n }

// SubscriptionFrom returns a copy whose group starts after t the first time it meets a partition.
// It takes precedence over SubscriptionMode.
func (q *Queue) SubscriptionFrom(t time.Time) *Queue {
	n := *q
	n.subscriptionFrom = t.UTC().Format("2006-01-02T15:04:05.000Z")
	return &n
}

// SubscriptionFromNow returns a copy whose group starts at the current end of each partition.
func (q *Queue) SubscriptionFromNow() *Queue { n := *q; n.subscriptionFrom = "now"; return &n }

// Namespace returns a copy that [Queue.Create] registers under namespace ns.
func (q *Queue) Namespace(ns string) *Queue { n := *q; n.namespace = ns; return &n }

// Task returns a copy that [Queue.Create] registers under task t.
func (q *Queue) Task(t string) *Queue { n := *q; n.task = t; return &n }

// Config returns a copy carrying options for [Queue.Create].
func (q *Queue) Config(opts QueueOptions) *Queue { n := *q; o := opts; n.opts = &o; return &n }

// QueueOptions are a queue's settings (POST /api/v1/configure). Every option is a pointer so that
// an option set to zero is told apart from one left unset: configure has full-replace semantics,
// and every option left nil is reset to the broker default (leaseTime 300 s, retryLimit 3,
// retryDelay 1000 ms, ttl 3600 s, the rest 0/false), while one set to zero is stored as zero. [Int]
// and [Bool] make the pointers:
//
//	client.QueueOptions{LeaseTime: client.Int(60), RetryLimit: client.Int(0)} // no retries
//
// [Queue.Options] reads a queue's options back with every field set, ready to configure again.
type QueueOptions struct {
	LeaseTime                 *int  `json:"leaseTime,omitempty"`                 // seconds a pop's lease lasts
	RetryLimit                *int  `json:"retryLimit,omitempty"`                // failed acks before the DLQ
	RetryDelay                *int  `json:"retryDelay,omitempty"`                // ms before a failed message redelivers
	MaxSize                   *int  `json:"maxSize,omitempty"`                   // maximum queued messages (0 = unlimited)
	TTL                       *int  `json:"ttl,omitempty"`                       // seconds
	Priority                  *int  `json:"priority,omitempty"`                  // higher is served first by namespace/task pops
	DelayedProcessing         *int  `json:"delayedProcessing,omitempty"`         // seconds invisible after push
	WindowBuffer              *int  `json:"windowBuffer,omitempty"`              // seconds a partition must be quiet before it is served
	RetentionSeconds          *int  `json:"retentionSeconds,omitempty"`          // delete pending messages older than this
	CompletedRetentionSeconds *int  `json:"completedRetentionSeconds,omitempty"` // delete consumed messages older than this
	RetentionEnabled          *bool `json:"retentionEnabled,omitempty"`          // enables the two retention settings
	EncryptionEnabled         *bool `json:"encryptionEnabled,omitempty"`         // encrypt payloads at rest (needs QUEEN_ENCRYPTION_KEY)
	DeadLetterQueue           *bool `json:"deadLetterQueue,omitempty"`           // keep dead letters
	DLQAfterMaxRetries        *bool `json:"dlqAfterMaxRetries,omitempty"`        // dead-letter when retryLimit is exhausted
	MaxWaitTimeSeconds        *int  `json:"maxWaitTimeSeconds,omitempty"`        // dead-letter messages waiting longer than this
}

// Int returns a pointer to v, for the integer fields of [QueueOptions].
func Int(v int) *int { return &v }

// Bool returns a pointer to v, for the boolean fields of [QueueOptions].
func Bool(v bool) *bool { return &v }

// QueueOptionNames returns the wire (camelCase) name of every field of [QueueOptions], in field
// order: the options configure accepts.
func QueueOptionNames() []string {
	t := reflect.TypeFor[QueueOptions]()
	out := make([]string, t.NumField())
	for i := range out {
		out[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return out
}

// Options reads the queue's configuration (GET /api/v1/status/queues/:queue) with every option set:
// passed to [Queue.Config] and [Queue.Create] it configures the queue to what it is. An unknown
// queue is a 404 ([IsNotFound]).
func (q *Queue) Options(ctx context.Context) (QueueOptions, error) {
	var out struct {
		Queue struct {
			Config QueueOptions `json:"config"`
		} `json:"queue"`
	}
	if q.name == "" {
		return QueueOptions{}, fmt.Errorf("queen: options: %w", errEmptyName)
	}
	err := q.c.call(ctx, request{method: http.MethodGet, path: "/api/v1/status/queues/" + seg(q.name)}, &out)
	return out.Queue.Config, err
}

// QueueConfigured is the answer to [Queue.Create].
type QueueConfigured struct {
	Configured  bool            `json:"configured"`
	QueueID     string          `json:"queueId"`
	PartitionID string          `json:"partitionId"`
	Queue       string          `json:"queue"`
	Namespace   string          `json:"namespace"`
	Task        string          `json:"task"`
	Options     json.RawMessage `json:"options"`
}

// Create creates the queue or replaces its configuration (POST /api/v1/configure) with the options
// given to [Queue.Config], the namespace and the task.
func (q *Queue) Create(ctx context.Context) (QueueConfigured, error) {
	body := map[string]any{"queue": q.name}
	if q.namespace != "" {
		body["namespace"] = q.namespace
	}
	if q.task != "" {
		body["task"] = q.task
	}
	if q.opts != nil {
		body["options"] = q.opts
	} else {
		body["options"] = struct{}{}
	}
	var out QueueConfigured
	err := q.c.call(ctx, request{method: http.MethodPost, path: "/api/v1/configure", body: body}, &out)
	return out, err
}

// PushItem is one message to push. TransactionID is the idempotency key within the partition:
// when empty the SDK generates one, so that a push retried after a 5xx or a network failure is
// reported "duplicate" instead of being stored twice. TraceID, when set, must be a UUID.
type PushItem struct {
	Payload       any    // any JSON-encodable value; nil is stored as JSON null
	TransactionID string // idempotency key within the partition; generated when empty
	TraceID       string // optional UUID
}

// Payload is shorthand for PushItem{Payload: v}.
func Payload(v any) PushItem { return PushItem{Payload: v} }

// Payloads turns values into push items, one each.
func Payloads(vs ...any) []PushItem {
	out := make([]PushItem, len(vs))
	for i, v := range vs {
		out[i] = PushItem{Payload: v}
	}
	return out
}

// Push statuses reported in [PushResult.Status].
const (
	PushQueued    = "queued"    // stored
	PushDuplicate = "duplicate" // the transaction id was already stored; nothing inserted
	PushBuffered  = "buffered"  // spooled to the broker's disk (database down or maintenance)
	PushFailed    = "failed"    // the broker could not store or spool it
)

// PushResult is the broker's answer for one pushed item, in request order.
type PushResult struct {
	Index         int     `json:"index"`          // position in the request (checked by the SDK)
	TransactionID string  `json:"transaction_id"` // the item's transaction id (checked)
	Status        string  `json:"status"`         // PushQueued, PushDuplicate, PushBuffered or PushFailed
	MessageID     string  `json:"message_id"`     // the stored (or, for a duplicate, the existing) message
	PartitionID   string  `json:"partition_id"`   // set for queued items
	TraceID       *string `json:"trace_id"`       // the stored trace id, if any
	QueueName     string  `json:"queueName"`      // the queue
	Error         string  `json:"error"`          // why a failed item failed
}

type wirePushItem struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitempty"`
	Payload       any    `json:"payload"`
	TransactionID string `json:"transactionId"`
	TraceID       string `json:"traceId,omitempty"`
}

func (q *Queue) wireItems(items []PushItem) []wirePushItem {
	out := make([]wirePushItem, len(items))
	for i, it := range items {
		tx := it.TransactionID
		if tx == "" {
			tx = newUUID()
		}
		out[i] = wirePushItem{Queue: q.name, Partition: q.partition, Payload: it.Payload, TransactionID: tx, TraceID: it.TraceID}
	}
	return out
}

// Push pushes items to the queue (to the partition chosen with [Queue.Partition], else "Default")
// in one request, and returns one result per item in order. A duplicate is not an error; check
// each Status. An item the broker reports "failed" makes the request a 500 ([APIError]).
func (q *Queue) Push(ctx context.Context, items ...PushItem) ([]PushResult, error) {
	if q.name == "" {
		return nil, fmt.Errorf("queen: push: %w", errEmptyName)
	}
	return q.c.push(ctx, q.wireItems(items))
}

func (c *Client) push(ctx context.Context, items []wirePushItem) ([]PushResult, error) {
	if len(items) == 0 {
		return []PushResult{}, nil
	}
	var out []PushResult
	if err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/push", body: map[string]any{"items": items}}, &out); err != nil {
		return nil, err
	}
	if len(out) != len(items) {
		return nil, malformed("push of %d items answered %d results", len(items), len(out))
	}
	for i, r := range out {
		if r.Index != i {
			return nil, malformed("push result %d carries index %d", i, r.Index)
		}
		if r.TransactionID != "" && r.TransactionID != items[i].TransactionID {
			return nil, malformed("push result %d is for transaction %q, sent %q", i, r.TransactionID, items[i].TransactionID)
		}
		if r.TransactionID == "" {
			out[i].TransactionID = items[i].TransactionID
		}
	}
	return out, nil
}

// Delete deletes the queue with its partitions, messages and dead letters
// (DELETE /api/v1/resources/queues/:queue). It reports whether the queue existed.
func (q *Queue) Delete(ctx context.Context) (existed bool, err error) {
	var out struct {
		Deleted bool `json:"deleted"`
		Existed bool `json:"existed"`
	}
	err = q.c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/resources/queues/" + seg(q.name)}, &out)
	if isMissing(err) {
		return false, nil
	}
	return out.Existed, err
}

// newUUID returns a random (version 4) UUID string.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
