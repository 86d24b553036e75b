package httpapi

import "github.com/queen-go/queen/internal/views"

// The transport's own response shapes: envelopes around the engine's views (pagination) and the
// second shape some data has on the status routes. The engine computes; these only arrange.

// page is the pagination object of every listing.
type page struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// queueList is /resources/queues and, with pagination, /status/queues.
type queueList struct {
	Queues     []views.QueueItem `json:"queues"`
	Pagination *page             `json:"pagination,omitempty"`
	StatsAge   int64             `json:"statsAge"`
}

// namespaceList is /resources/namespaces.
type namespaceList struct {
	Namespaces []views.NamespaceTotals `json:"namespaces"`
}

// taskList is /resources/tasks.
type taskList struct {
	Tasks []views.TaskTotals `json:"tasks"`
}

// traceList is /traces/{partitionId}/{transactionId}.
type traceList struct {
	Traces []views.TraceEvent `json:"traces"`
}

// namedTracePage is /traces/by-name/{traceName}.
type namedTracePage struct {
	Traces     []views.NamedTraceEvent `json:"traces"`
	Total      int64                   `json:"total"`
	Pagination page                    `json:"pagination"`
}

// traceNamePage is /traces/names.
type traceNamePage struct {
	TraceNames []views.TraceNameUsage `json:"trace_names"`
	Total      int64                  `json:"total"`
	Pagination page                   `json:"pagination"`
}

// messagePage is /messages; mode is present when the listing names a queue.
type messagePage struct {
	Messages      []views.MessageItem    `json:"messages"`
	ConsumerGroup string                 `json:"consumerGroup"`
	Pagination    page                   `json:"pagination"`
	Mode          *views.ConsumptionMode `json:"mode,omitempty"`
}

// queueMessage is one message of /status/queues/{queue}/messages.
type queueMessage struct {
	views.MessageRef
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
}

// statusQueue is /status/queues/{queue}: the queue with its configuration, and each partition's counts
// under both names the dashboard reads.
type statusQueue struct {
	Queue struct {
		views.QueueRef
		Priority  int32             `json:"priority"`
		CreatedAt string            `json:"createdAt"`
		Config    views.QueueConfig `json:"config"`
	} `json:"queue"`
	Partitions []statusPartition `json:"partitions"`
	Totals     struct {
		Messages views.Counts `json:"messages"`
		views.Counts
	} `json:"totals"`
	ConsumerGroups []views.QueueGroup `json:"consumerGroups"`
}

type statusPartition struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	CreatedAt string       `json:"createdAt"`
	Messages  views.Counts `json:"messages"`
	Stats     views.Counts `json:"stats"`
	Cursor    struct {
		TotalConsumed int64 `json:"totalConsumed"`
	} `json:"cursor"`
	LastActivity   *string                `json:"lastActivity"`
	OldestMessage  *string                `json:"oldestMessage"`
	NewestMessage  *string                `json:"newestMessage"`
	ConsumerGroups []views.PartitionGroup `json:"consumerGroups"`
}

func statusQueueOf(q *views.QueueDetail) statusQueue {
	var out statusQueue
	out.Queue.QueueRef = q.QueueRef
	out.Queue.Priority, out.Queue.CreatedAt, out.Queue.Config = q.Priority, q.CreatedAt, q.Config
	out.Partitions = make([]statusPartition, len(q.Partitions))
	for i, p := range q.Partitions {
		sp := statusPartition{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, Messages: p.Stats, Stats: p.Stats,
			LastActivity: p.LastActivity, OldestMessage: p.OldestMessage, NewestMessage: p.NewestMessage,
			ConsumerGroups: p.ConsumerGroups}
		sp.Cursor.TotalConsumed = p.TotalConsumed
		out.Partitions[i] = sp
	}
	out.Totals.Messages, out.Totals.Counts = q.Totals, q.Totals
	out.ConsumerGroups = q.ConsumerGroups
	return out
}
