package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ---- queues (/api/v1/resources/queues) ----

// MessageCounts are per-status message counts. The listings' counts are rolled up in the
// background, so they lag by a few seconds. Counts of a queue or partition as a whole are relative
// to its slowest consumer group (a message is completed once every group consumed it); the counts of
// one group are in [GroupCounts].
type MessageCounts struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	Processing int `json:"processing"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	DeadLetter int `json:"deadLetter"`
}

// QueueSummary is one entry of [Client.Queues].
type QueueSummary struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Task       string `json:"task"`
	CreatedAt  string `json:"createdAt"`
	Partitions int    `json:"partitions"`
	Priority   int    `json:"priority"`
	// Messages are the rolled-up counts of the whole queue (no Failed); per-group figures are in
	// [Client.ConsumerGroups].
	Messages MessageCounts `json:"messages"`
	// StatsAt is when the counts were rolled up; nil before the first rollup.
	StatsAt *string `json:"statsAt"`
}

// Queues lists the queues, newest first (GET /api/v1/resources/queues).
func (c *Client) Queues(ctx context.Context) ([]QueueSummary, error) {
	var out struct {
		Queues []QueueSummary `json:"queues"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/resources/queues"}, &out)
	return out.Queues, err
}

// PartitionDetail is one partition in [QueueDetail].
type PartitionDetail struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	CreatedAt      string          `json:"createdAt"`
	Stats          MessageCounts   `json:"stats"`
	OldestMessage  json.RawMessage `json:"oldestMessage"`
	NewestMessage  json.RawMessage `json:"newestMessage"`
	LastActivity   *string         `json:"lastActivity"`
	LastConsumedAt *string         `json:"lastConsumedAt"`
	TotalConsumed  int             `json:"totalConsumed"`
	// ConsumerGroups has the partition's figures for every group of the queue.
	ConsumerGroups []GroupCounts `json:"consumerGroups"`
}

// GroupCounts are one consumer group's figures on a queue or on one partition. The groups of a
// queue are the named groups subscribed to it or holding a cursor on it, and queue mode when it
// holds a cursor or no named group belongs to the queue. A partition a group never read counts
// from its first message.
type GroupCounts struct {
	ConsumerGroup string `json:"consumerGroup"` // the group's name; QueueMode for queue mode
	QueueMode     bool   `json:"queueMode"`
	// Cursor is the group's position on the partition (partition entries only); nil when the group
	// never read it.
	Cursor   *int64        `json:"cursor,omitempty"`
	Messages GroupMessages `json:"messages"`
	Lag      GroupLag      `json:"lag"`
}

// GroupMessages are the message counts as one consumer group sees them: completed is what the
// group consumed, pending what is after its position.
type GroupMessages struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	Processing int `json:"processing"`
	Completed  int `json:"completed"`
	DeadLetter int `json:"deadLetter"`
}

// GroupLag is how far a group is behind: the messages after its position, the age of the first of
// them in seconds (0 when none), and (queue entries only) the partitions with any.
type GroupLag struct {
	Messages   int     `json:"messages"`
	Seconds    float64 `json:"seconds"`
	Partitions int     `json:"partitions,omitempty"`
}

// QueueDetail is the answer of [Queue.Info].
type QueueDetail struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Namespace  string            `json:"namespace"`
	Task       string            `json:"task"`
	CreatedAt  string            `json:"createdAt"`
	Partitions []PartitionDetail `json:"partitions"`
	Totals     MessageCounts     `json:"totals"`
	// ConsumerGroups has the queue's figures for each of its groups.
	ConsumerGroups []GroupCounts `json:"consumerGroups"`
}

// Info returns the queue with its partitions and counts (GET /api/v1/resources/queues/:queue).
// An unknown queue is a 404 ([IsNotFound]).
func (q *Queue) Info(ctx context.Context) (QueueDetail, error) {
	var out QueueDetail
	err := q.c.call(ctx, request{method: http.MethodGet, path: "/api/v1/resources/queues/" + seg(q.name)}, &out)
	return out, err
}

// ---- dead-letter queue (/api/v1/dlq) ----

// DLQFilter selects dead letters for [Client.DLQ]. Zero fields do not filter.
type DLQFilter struct {
	Queue         string    // queue name
	ConsumerGroup string    // consumer group (QueueMode for queue mode)
	Partition     string    // partition name
	From, To      time.Time // failure time window
	Limit, Offset int       // paging (broker default limit 100)
}

// DLQMessage is a dead-lettered message.
type DLQMessage struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	ConsumerGroup string          `json:"consumerGroup"`
	ErrorMessage  string          `json:"errorMessage"`
	RetryCount    int             `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   *string         `json:"producerSub"`
	TraceID       *string         `json:"traceId"`
	CreatedAt     string          `json:"createdAt"`
	FailedAt      string          `json:"failedAt"`
}

// DLQPage is one page of dead letters, newest failure first.
type DLQPage struct {
	Messages   []DLQMessage `json:"messages"`
	Total      int          `json:"total"`
	Pagination struct {
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
	} `json:"pagination"`
}

// DLQ lists dead letters (GET /api/v1/dlq).
func (c *Client) DLQ(ctx context.Context, f DLQFilter) (DLQPage, error) {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("queue", f.Queue)
	set("consumerGroup", f.ConsumerGroup)
	set("partition", f.Partition)
	if !f.From.IsZero() {
		v.Set("from", f.From.UTC().Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		v.Set("to", f.To.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		v.Set("offset", strconv.Itoa(f.Offset))
	}
	var out DLQPage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/dlq", query: v}, &out)
	return out, err
}

func dlqPath(partitionID, transactionID string) string {
	return "/api/v1/dlq/" + seg(partitionID) + "/" + seg(transactionID)
}

// DLQMessage returns one dead letter (GET /api/v1/dlq/:partitionId/:transactionId); 404 when
// there is none ([IsNotFound]).
func (c *Client) DLQMessage(ctx context.Context, partitionID, transactionID string) (DLQMessage, error) {
	var out DLQMessage
	err := c.call(ctx, request{method: http.MethodGet, path: dlqPath(partitionID, transactionID)}, &out)
	return out, err
}

// DeleteDLQMessage discards a dead letter (DELETE /api/v1/dlq/:partitionId/:transactionId).
func (c *Client) DeleteDLQMessage(ctx context.Context, partitionID, transactionID string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: dlqPath(partitionID, transactionID)}, nil)
}

// RetryDLQMessage puts a dead letter back in front of its consumer group
// (POST /api/v1/dlq/:partitionId/:transactionId/retry).
func (c *Client) RetryDLQMessage(ctx context.Context, partitionID, transactionID string) error {
	return c.call(ctx, request{method: http.MethodPost, path: dlqPath(partitionID, transactionID) + "/retry", body: struct{}{}}, nil)
}

// ---- consumer groups (/api/v1/consumer-groups) ----

// ConsumerGroupSummary is one (group, queue) entry of [Client.ConsumerGroups].
// Lag counts partitions the group never read from their first message.
type ConsumerGroupSummary struct {
	Name                  string        `json:"name"`
	Topics                []string      `json:"topics"`
	QueueName             string        `json:"queueName"`
	QueueMode             bool          `json:"queueMode"`  // Name is QueueMode
	Members               int           `json:"members"`    // partition cursors the group holds
	Partitions            int           `json:"partitions"` // partitions of the queue
	PartitionsWithLag     int           `json:"partitionsWithLag"`
	MaxTimeLag            float64       `json:"maxTimeLag"`
	State                 string        `json:"state"`
	SubscriptionMode      *string       `json:"subscriptionMode"`
	SubscriptionTimestamp *string       `json:"subscriptionTimestamp"`
	SubscriptionCreatedAt *string       `json:"subscriptionCreatedAt"`
	TotalConsumed         int           `json:"totalConsumed"`
	TotalLag              *int64        `json:"totalLag"` // messages after the group's position
	Messages              GroupMessages `json:"messages"` // the queue's counts as this group sees them
}

// ConsumerGroups lists consumer groups per queue, including queue mode
// (GET /api/v1/consumer-groups).
func (c *Client) ConsumerGroups(ctx context.Context) ([]ConsumerGroupSummary, error) {
	var out []ConsumerGroupSummary
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/consumer-groups"}, &out)
	return out, err
}

// LaggingPartition is one entry of [Client.LaggingPartitions] (snake_case on the wire).
type LaggingPartition struct {
	ConsumerGroup    string  `json:"consumer_group"`
	QueueName        string  `json:"queue_name"`
	PartitionName    string  `json:"partition_name"`
	PartitionID      string  `json:"partition_id"`
	OffsetLag        int     `json:"offset_lag"`
	TimeLagSeconds   float64 `json:"time_lag_seconds"`
	OldestUnconsumed *string `json:"oldest_unconsumed_at"`
	LastConsumedAt   *string `json:"last_consumed_at"`
	LagHours         float64 `json:"lag_hours"`
	WorkerID         *string `json:"worker_id"`
	HasCursor        bool    `json:"has_cursor"` // false: the group never read the partition
}

// LaggingPartitions lists, per group, the partitions whose oldest unconsumed message is older than
// minLag, including partitions the group never read (GET /api/v1/consumer-groups/lagging).
func (c *Client) LaggingPartitions(ctx context.Context, minLag time.Duration) ([]LaggingPartition, error) {
	v := url.Values{"minLagSeconds": {strconv.Itoa(int(minLag / time.Second))}}
	var out []LaggingPartition
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/consumer-groups/lagging", query: v}, &out)
	return out, err
}

// ConsumerGroup is a handle for administering one consumer group.
type ConsumerGroup struct {
	c    *Client
	name string
}

// ConsumerGroup returns a handle on the named group.
func (c *Client) ConsumerGroup(name string) *ConsumerGroup { return &ConsumerGroup{c: c, name: name} }

// GroupPartition is a group's position on one partition, in [ConsumerGroup.Get].
type GroupPartition struct {
	Partition      string  `json:"partition"`
	PartitionID    string  `json:"partitionId"`
	WorkerID       *string `json:"workerId"`
	LastConsumedAt *string `json:"lastConsumedAt"`
	TotalConsumed  int     `json:"totalConsumed"`
	OffsetLag      int     `json:"offsetLag"`
	TimeLagSeconds float64 `json:"timeLagSeconds"`
	LeaseActive    bool    `json:"leaseActive"`
	HasCursor      bool    `json:"hasCursor"` // false: never read (lag counts from the first message)
}

// Get returns the group's position on every partition of every queue it belongs to, keyed by queue
// name (GET /api/v1/consumer-groups/:group). An
// unknown group yields an empty map.
func (g *ConsumerGroup) Get(ctx context.Context) (map[string][]GroupPartition, error) {
	var raw map[string]struct {
		Partitions []GroupPartition `json:"partitions"`
	}
	if err := g.c.call(ctx, request{method: http.MethodGet, path: "/api/v1/consumer-groups/" + seg(g.name)}, &raw); err != nil {
		if isMissing(err) {
			return map[string][]GroupPartition{}, nil
		}
		return nil, err
	}
	out := make(map[string][]GroupPartition, len(raw))
	for q, v := range raw {
		out[q] = v.Partitions
	}
	return out, nil
}

// GroupDeleted is the answer to [ConsumerGroup.Delete] and [ConsumerGroup.DeleteForQueue].
type GroupDeleted struct {
	Success           bool   `json:"success"`
	ConsumerGroup     string `json:"consumerGroup"`
	QueueName         string `json:"queueName"`
	DeletedPartitions int    `json:"deletedPartitions"`
	MetadataDeleted   bool   `json:"metadataDeleted"`
}

// Delete removes the group's cursors on every queue (DELETE /api/v1/consumer-groups/:group). With
// deleteMetadata the subscription record goes too, so the next pop applies its subscription mode
// afresh.
func (g *ConsumerGroup) Delete(ctx context.Context, deleteMetadata bool) (GroupDeleted, error) {
	var out GroupDeleted
	err := g.c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/consumer-groups/" + seg(g.name),
		query: url.Values{"deleteMetadata": {strconv.FormatBool(deleteMetadata)}}}, &out)
	return out, err
}

// DeleteForQueue removes the group's cursors on one queue
// (DELETE /api/v1/consumer-groups/:group/queues/:queue).
func (g *ConsumerGroup) DeleteForQueue(ctx context.Context, queue string, deleteMetadata bool) (GroupDeleted, error) {
	var out GroupDeleted
	err := g.c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/consumer-groups/" + seg(g.name) + "/queues/" + seg(queue),
		query: url.Values{"deleteMetadata": {strconv.FormatBool(deleteMetadata)}}}, &out)
	return out, err
}

// SubscriptionUpdated is the answer to [ConsumerGroup.SetSubscription].
type SubscriptionUpdated struct {
	Success       bool   `json:"success"`
	ConsumerGroup string `json:"consumerGroup"`
	NewTimestamp  string `json:"newTimestamp"`
	RowsUpdated   int    `json:"rowsUpdated"`
}

// SetSubscription rewrites the group's subscription timestamp
// (POST /api/v1/consumer-groups/:group/subscription). It affects only partitions the group has not
// consumed yet.
func (g *ConsumerGroup) SetSubscription(ctx context.Context, t time.Time) (SubscriptionUpdated, error) {
	var out SubscriptionUpdated
	err := g.c.call(ctx, request{method: http.MethodPost, path: "/api/v1/consumer-groups/" + seg(g.name) + "/subscription",
		body: map[string]string{"subscriptionTimestamp": t.UTC().Format(time.RFC3339Nano)}}, &out)
	return out, err
}

// SeekResult is the answer to [ConsumerGroup.SeekToEnd] and [ConsumerGroup.SeekTo];
// PartitionsUpdated is the number of partitions of the queue.
type SeekResult struct {
	Success           bool    `json:"success"`
	ConsumerGroup     string  `json:"consumerGroup"`
	QueueName         string  `json:"queueName"`
	SeekToEnd         bool    `json:"seekToEnd"`
	TargetTimestamp   *string `json:"targetTimestamp"`
	PartitionsUpdated int     `json:"partitionsUpdated"`
}

// SeekToEnd places the group on every partition of queue, read or not, after the newest message,
// skipping the backlog (POST /api/v1/consumer-groups/:group/queues/:queue/seek {"toEnd":true}).
// Partitions created later start at their beginning. An unknown queue is a 404 ([IsNotFound]).
func (g *ConsumerGroup) SeekToEnd(ctx context.Context, queue string) (SeekResult, error) {
	return g.seek(ctx, queue, map[string]any{"toEnd": true})
}

// SeekTo places the group on every partition of queue, read or not, after the last message at or
// before t, so later messages redeliver (replay); leases are cleared. An unknown queue is a 404.
func (g *ConsumerGroup) SeekTo(ctx context.Context, queue string, t time.Time) (SeekResult, error) {
	return g.seek(ctx, queue, map[string]any{"timestamp": t.UTC().Format(time.RFC3339Nano)})
}

func (g *ConsumerGroup) seek(ctx context.Context, queue string, body any) (SeekResult, error) {
	var out SeekResult
	err := g.c.call(ctx, request{method: http.MethodPost,
		path: "/api/v1/consumer-groups/" + seg(g.name) + "/queues/" + seg(queue) + "/seek", body: body}, &out)
	return out, err
}

// PartitionSeekResult is the answer to [ConsumerGroup.SeekPartitionToEnd].
type PartitionSeekResult struct {
	Success       bool            `json:"success"`
	ConsumerGroup string          `json:"consumerGroup"`
	QueueName     string          `json:"queueName"`
	PartitionName string          `json:"partitionName"`
	Updated       json.RawMessage `json:"updated"`
	CursorMovedTo json.RawMessage `json:"cursorMovedTo"`
}

// SeekPartitionToEnd moves the group's cursor on one partition to its end
// (POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek).
func (g *ConsumerGroup) SeekPartitionToEnd(ctx context.Context, queue, partition string) (PartitionSeekResult, error) {
	var out PartitionSeekResult
	err := g.c.call(ctx, request{method: http.MethodPost,
		path: "/api/v1/consumer-groups/" + seg(g.name) + "/queues/" + seg(queue) + "/partitions/" + seg(partition) + "/seek",
		body: struct{}{}}, &out)
	return out, err
}

// ---- maintenance (/api/v1/system/maintenance) ----

// MaintenanceStatus is the push-maintenance state (GET/POST /api/v1/system/maintenance).
type MaintenanceStatus struct {
	MaintenanceMode    bool            `json:"maintenanceMode"`
	PopMaintenanceMode bool            `json:"popMaintenanceMode"`
	BufferedMessages   int             `json:"bufferedMessages"`
	BufferHealthy      bool            `json:"bufferHealthy"`
	BufferStats        json.RawMessage `json:"bufferStats"`
	FailedReplays      int             `json:"failedReplays"`
	Message            string          `json:"message"`
}

// Maintenance reports whether push maintenance (pushes diverted to the disk spool) is on.
func (c *Client) Maintenance(ctx context.Context) (MaintenanceStatus, error) {
	var out MaintenanceStatus
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/system/maintenance"}, &out)
	return out, err
}

// SetMaintenance turns push maintenance on or off (admin).
func (c *Client) SetMaintenance(ctx context.Context, enabled bool) (MaintenanceStatus, error) {
	var out MaintenanceStatus
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/system/maintenance", body: map[string]bool{"enabled": enabled}}, &out)
	return out, err
}

// PopMaintenanceStatus is the pop-maintenance state (GET/POST /api/v1/system/maintenance/pop).
type PopMaintenanceStatus struct {
	PopMaintenanceMode bool   `json:"popMaintenanceMode"`
	Message            string `json:"message"`
}

// PopMaintenance reports whether pop maintenance (every pop answers 204) is on.
func (c *Client) PopMaintenance(ctx context.Context) (PopMaintenanceStatus, error) {
	var out PopMaintenanceStatus
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/system/maintenance/pop"}, &out)
	return out, err
}

// SetPopMaintenance turns pop maintenance on or off (admin).
func (c *Client) SetPopMaintenance(ctx context.Context, enabled bool) (PopMaintenanceStatus, error) {
	var out PopMaintenanceStatus
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/system/maintenance/pop", body: map[string]bool{"enabled": enabled}}, &out)
	return out, err
}

// ---- status and health ----

// StatusFilter narrows [Client.Status]. Zero fields use the broker defaults (the last hour).
type StatusFilter struct {
	From, To               time.Time // time window
	Queue, Namespace, Task string    // scope
}

// Status returns the dashboard overview (GET /api/v1/status) as raw JSON: its inner shape is
// dashboard data and may grow.
func (c *Client) Status(ctx context.Context, f StatusFilter) (json.RawMessage, error) {
	v := url.Values{}
	if !f.From.IsZero() {
		v.Set("from", f.From.UTC().Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		v.Set("to", f.To.UTC().Format(time.RFC3339Nano))
	}
	for k, s := range map[string]string{"queue": f.Queue, "namespace": f.Namespace, "task": f.Task} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/status", query: v}, &out)
	return out, err
}

// StatusQueues lists queues with counts (GET /api/v1/status/queues) as raw JSON.
func (c *Client) StatusQueues(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/status/queues"}, &out)
	return out, err
}

// StatusQueue returns one queue's configuration, partitions and totals
// (GET /api/v1/status/queues/:queue) as raw JSON; 404 for an unknown queue.
func (c *Client) StatusQueue(ctx context.Context, queue string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/status/queues/" + seg(queue)}, &out)
	return out, err
}

// StatusQueueMessages lists a queue's recent messages (GET /api/v1/status/queues/:queue/messages)
// as raw JSON.
func (c *Client) StatusQueueMessages(ctx context.Context, queue string, limit, offset int) (json.RawMessage, error) {
	v := url.Values{}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/status/queues/" + seg(queue) + "/messages", query: v}, &out)
	return out, err
}

// GetRaw performs a GET on any read route (path like "/api/v1/analytics/queue-lag") with both
// retry layers and failover, and returns the JSON body. It covers the dashboard and analytics
// routes that have no typed method.
func (c *Client) GetRaw(ctx context.Context, path string, query url.Values) (json.RawMessage, error) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: path, query: query}, &out)
	return out, err
}

// Health performs GET /health on the preferred backend (a database round-trip) and returns its
// body. A broker that cannot reach PostgreSQL answers 503, reported as an [*APIError] after the
// layer-one retries.
func (c *Client) Health(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/health"}, &out)
	return out, err
}
