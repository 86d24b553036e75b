package httpapi

var semanticsRoutes = []Route{
	{"GET", "/api/v1/pop", Consume, "pop across every queue matching namespace and/or task, highest priority first", (*Server).handlePop},
	{"POST", "/api/v1/transaction", Consume, "acks and pushes in one PostgreSQL transaction (QDUP/QTXN rollback)", (*Server).handleTransaction},
	{"POST", "/api/v1/lease/{leaseId}/extend", Consume, "extend every partition lease of a pop; never shortens", (*Server).handleLeaseExtend},
	{"GET", "/api/v1/dlq", Read, "list dead letters (queue, consumerGroup, partition, from, to, limit, offset) with total", (*Server).handleDLQList},
	{"GET", "/api/v1/dlq/{partitionId}/{transactionId}", Read, "one dead letter", (*Server).handleDLQGet},
	{"DELETE", "/api/v1/dlq/{partitionId}/{transactionId}", Admin, "discard a dead letter", (*Server).handleDLQDelete},
	{"POST", "/api/v1/dlq/{partitionId}/{transactionId}/retry", Admin, "serve a dead letter again to its consumer group", (*Server).handleDLQRetry},
	{"GET", "/api/v1/consumer-groups", Read, "consumer groups per queue with lag and state", (*Server).handleGroups},
	{"GET", "/api/v1/consumer-groups/lagging", Read, "partitions whose oldest unconsumed message is older than minLagSeconds", (*Server).handleLagging},
	{"GET", "/api/v1/consumer-groups/{group}", Read, "a consumer group's cursors per queue", (*Server).handleGroup},
	{"DELETE", "/api/v1/consumer-groups/{group}", Admin, "delete a consumer group's cursors (deleteMetadata: and its subscriptions)", (*Server).handleGroupDelete},
	{"POST", "/api/v1/consumer-groups/{group}/subscription", Consume, "move a consumer group's subscription point", (*Server).handleSubscription},
	{"DELETE", "/api/v1/consumer-groups/{group}/queues/{queue}", Admin, "delete a consumer group's cursors on one queue", (*Server).handleGroupDelete},
	{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/seek", Consume, "seek a group on a queue to a timestamp or the end", (*Server).handleSeek},
	{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", Consume, "seek a group on one partition to its end", (*Server).handleSeekPartition},
	{"DELETE", "/api/v1/resources/queues/{queue}", Admin, "delete a queue with everything in it", (*Server).handleQueueDelete},
}
