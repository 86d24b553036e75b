package httpapi

import (
	"time"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

// Access levels of the route table (auth.Access).
const (
	Public  = auth.Public
	Produce = auth.Produce
	Consume = auth.Consume
	Read    = auth.Read
	Admin   = auth.Admin
)

// Route is one entry of the route table: the mux, the access check and the generated reference all
// derive from this one list.
type Route struct {
	Method  string
	Pattern string
	Access  auth.Access
	Doc     string
	handle  handler
}

// Routes is the broker's route table, grouped by resource. Each handler lives in the file named after
// its resource (push.go, queues.go, dlq.go…). ok, created and series (handler.go) turn a call from
// request to answer into a handler; the others write their answer themselves.
var Routes = []Route{
	// Probes.
	{"GET", "/health", Public, "database health: a round-trip, 503 when it fails (the original's readiness signal)", (*Server).handleHealth},
	{"GET", "/readyz", Public, "readiness for a load balancer: 200 while a push would be answered 201 (database up, or the spool taking pushes)", (*Server).handleReady},
	{"GET", "/livez", Public, "liveness: 200 whenever the process serves HTTP", ok((*Server).handleLivez)},

	// Messages in: push, pop, ack, transactions and leases.
	{"POST", "/api/v1/push", Produce, "push messages; per-item results, 201", created((*Server).handlePush)},
	{"GET", "/api/v1/pop/queue/{queue}", Consume, "pop from any partition of a queue (lease, long-poll)", (*Server).handlePop},
	{"GET", "/api/v1/pop/queue/{queue}/partition/{partition}", Consume, "pop from one partition", (*Server).handlePop},
	{"GET", "/api/v1/pop", Consume, "pop across every queue matching namespace and/or task, highest priority first", (*Server).handlePop},
	{"POST", "/api/v1/ack", Consume, "acknowledge one message; 200 with a one-item result array", ok((*Server).handleAck)},
	{"POST", "/api/v1/ack/batch", Consume, "acknowledge many messages; 200 with per-item results", ok((*Server).handleAckBatch)},
	{"POST", "/api/v1/transaction", Consume, "acks and pushes in one PostgreSQL transaction (QDUP/QTXN rollback)", ok((*Server).handleTransaction)},
	{"POST", "/api/v1/lease/{leaseId}/extend", Consume, "extend every partition lease of a pop; never shortens", ok((*Server).handleLeaseExtend)},

	// Queues.
	{"POST", "/api/v1/configure", Consume, "create or fully reconfigure a queue", ok((*Server).handleConfigure)},
	{"GET", "/api/v1/resources/queues", Read, "queues with rolled-up counts (at most two STATS_INTERVAL_MS old)", ok((*Server).handleResourceQueues)},
	{"GET", "/api/v1/resources/queues/{queue}", Read, "one queue with exact per-partition counts; 404 when missing", ok((*Server).handleResourceQueue)},
	{"DELETE", "/api/v1/resources/queues/{queue}", Admin, "delete a queue with everything in it", ok((*Server).handleQueueDelete)},
	{"GET", "/api/v1/resources/namespaces", Read, "namespaces with rolled-up counts", ok((*Server).handleNamespaces)},
	{"GET", "/api/v1/resources/tasks", Read, "tasks with rolled-up counts", ok((*Server).handleTasks)},
	{"GET", "/api/v1/status/queues", Read, "queues with rolled-up counts, paginated", ok((*Server).handleStatusQueues)},
	{"GET", "/api/v1/status/queues/{queue}", Read, "one queue's configuration and exact counts", ok((*Server).handleStatusQueue)},

	// Messages at rest.
	{"GET", "/api/v1/messages", Read, "list messages (queue, partition, status, consumerGroup, limit, offset)", ok((*Server).handleListMessages)},
	{"GET", "/api/v1/messages/{partitionId}/{transactionId}", Read, "one message with decrypted payload; 404 when missing", ok((*Server).handleGetMessage)},
	{"DELETE", "/api/v1/messages/{partitionId}/{transactionId}", Admin, "delete one message; 404 when missing", ok((*Server).handleDeleteMessage)},
	{"GET", "/api/v1/status/queues/{queue}/messages", Read, "a queue's messages, newest first", ok((*Server).handleStatusQueueMessages)},

	// Dead letters.
	{"GET", "/api/v1/dlq", Read, "list dead letters (queue, consumerGroup, partition, from, to, limit, offset) with total", ok((*Server).handleDLQList)},
	{"GET", "/api/v1/dlq/{partitionId}/{transactionId}", Read, "one dead letter", ok((*Server).handleDLQGet)},
	{"DELETE", "/api/v1/dlq/{partitionId}/{transactionId}", Admin, "discard a dead letter", ok(dlqAction("deleted", (*engine.DeadLetters).DeleteDLQ))},
	{"POST", "/api/v1/dlq/{partitionId}/{transactionId}/retry", Admin, "serve a dead letter again to its consumer group", ok(dlqAction("retried", (*engine.DeadLetters).RetryDLQ))},

	// Consumer groups.
	{"GET", "/api/v1/consumer-groups", Read, "consumer groups per queue with lag and state", ok((*Server).handleGroups)},
	{"GET", "/api/v1/consumer-groups/lagging", Read, "partitions whose oldest unconsumed message is older than minLagSeconds", ok((*Server).handleLagging)},
	{"GET", "/api/v1/consumer-groups/{group}", Read, "a consumer group's cursors per queue", ok((*Server).handleGroup)},
	{"DELETE", "/api/v1/consumer-groups/{group}", Admin, "delete a consumer group's cursors (deleteMetadata: and its subscriptions)", ok((*Server).handleGroupDelete)},
	{"POST", "/api/v1/consumer-groups/{group}/subscription", Consume, "move a consumer group's subscription point", ok((*Server).handleSubscription)},
	{"DELETE", "/api/v1/consumer-groups/{group}/queues/{queue}", Admin, "delete a consumer group's cursors on one queue", ok((*Server).handleGroupDelete)},
	{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/seek", Consume, "seek a group on a queue to a timestamp or the end", ok((*Server).handleSeek)},
	{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", Consume, "seek a group on one partition to its end", ok((*Server).handleSeekPartition)},

	// Traces.
	{"POST", "/api/v1/traces", Consume, "record a trace event on a message; 404 when the message is missing", created((*Server).handleRecordTrace)},
	{"GET", "/api/v1/traces/names", Read, "trace names with usage", ok((*Server).handleTraceNames)},
	{"GET", "/api/v1/traces/by-name/{traceName}", Read, "trace events carrying a name", ok((*Server).handleTracesByName)},
	{"GET", "/api/v1/traces/{partitionId}/{transactionId}", Read, "trace events of a message", ok((*Server).handleMessageTraces)},

	// Status.
	{"GET", "/api/v1/resources/overview", Read, "system totals, lag and throughput", ok((*Server).handleOverview)},
	{"GET", "/api/v1/status", Read, "dashboard summary: throughput series, totals, leases, DLQ", series(time.Hour, (*Server).handleStatus)},
	{"GET", "/api/v1/status/buffers", Read, "disk spool state", ok((*Server).handleStatusBuffers)},
	{"GET", "/api/v1/access", Read, "the access levels (produce, consume, read, admin) the caller's token passes", ok((*Server).handleAccess)},

	// Analytics.
	{"GET", "/api/v1/status/analytics", Read, "ingest series by minute, hour or day", series(24*time.Hour, (*Server).handleStatusAnalytics)},
	{"GET", "/api/v1/analytics/queue-lag", Read, "pop lag per queue and minute", series(time.Hour, (*Server).handleQueueLag)},
	{"GET", "/api/v1/analytics/queue-ops", Read, "operation counters per queue and bucket", series(time.Hour, (*Server).handleQueueOps)},
	{"GET", "/api/v1/analytics/retention", Read, "retention deletions per bucket", series(24*time.Hour, (*Server).handleRetentionAnalytics)},

	// Dashboard: broker samples, PostgreSQL health, and the original's migration wizard (501).
	{"GET", "/api/v1/analytics/worker-metrics", Read, "cluster throughput, scheduler latency, pool and lag per bucket, with each broker's latest figures", series(time.Hour, (*Server).handleWorkerMetrics)},
	{"GET", "/api/v1/analytics/system-metrics", Read, "each broker's CPU, memory, pool and scheduler series (avg/min/max/last per bucket)", series(time.Hour, (*Server).handleSystemMetrics)},
	{"GET", "/api/v1/analytics/queue-parked-replicas", Read, "parked long-polls per bucket, queue and broker", series(time.Hour, (*Server).handleParkedReplicas)},
	{"GET", "/api/v1/analytics/postgres-stats", Read, "PostgreSQL cache hit ratios, table sizes, dead tuples, HOT updates, vacuum and active queries", ok((*Server).handlePostgresStats)},
	migrationRoute("POST", "/api/v1/migration/test-connection"),
	migrationRoute("POST", "/api/v1/migration/start"),
	migrationRoute("GET", "/api/v1/migration/status"),
	migrationRoute("POST", "/api/v1/migration/validate"),
	migrationRoute("POST", "/api/v1/migration/reset"),

	// Streams.
	{"POST", "/streams/v1/queries", Consume, "register a stream query; 409 on a config_hash mismatch without reset", (*Server).handleStreamsRegister},
	{"POST", "/streams/v1/cycle", Consume, "commit a stream cycle (state ops, sink pushes, source ack) in one transaction; 200 with success:false when rolled back", ok((*Server).handleStreamsCycle)},
	{"POST", "/streams/v1/state/get", Read, "read a stream shard's state rows (keys, key_prefix, ripe_at_or_before)", ok((*Server).handleStreamsStateGet)},

	// Metrics.
	{"GET", "/metrics", Public, "process, request and pool numbers as JSON", ok((*Server).handleMetricsJSON)},
	{"GET", "/metrics/prometheus", Public, "Prometheus text exposition of the broker's registry", (*Server).handleMetricsPrometheus},

	// System.
	{"GET", "/api/v1/system/maintenance", Admin, "push maintenance flag (pushes diverted to the disk spool)", ok(maintenanceStatus((*engine.Modes).Status))},
	{"POST", "/api/v1/system/maintenance", Admin, "switch push maintenance for every broker: {\"enabled\":bool}", ok(maintenanceSwitch((*engine.Modes).Switch))},
	{"GET", "/api/v1/system/maintenance/pop", Admin, "pop maintenance flag (pops answer 204)", ok(maintenanceStatus((*engine.Modes).PopStatus))},
	{"POST", "/api/v1/system/maintenance/pop", Admin, "switch pop maintenance for every broker: {\"enabled\":bool}", ok(maintenanceSwitch((*engine.Modes).SwitchPop))},
}
