// Package client is the Go SDK for Queen, the PostgreSQL-backed message broker.
//
// Create one [Client] per process and share it:
//
//	c, err := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
//
// # Producing
//
// Queues are addressed with a fluent, immutable builder:
//
//	res, err := c.Queue("orders").Partition("user-1").Push(ctx, client.Payload(order))
//
// Every item without a transaction id gets a generated one, so a push retried after a 5xx or a
// network failure is reported "duplicate" instead of being stored twice. For high volume, a
// [Producer] buffers items and pushes them in batches by count or by time:
//
//	p := c.Queue("events").Producer(client.ProducerOptions{BatchSize: 500})
//	defer p.Close(ctx)
//	err = p.Add(ctx, client.Payload(event))
//
// # Consuming
//
// [Queue.Pop] fetches one batch; an empty queue (HTTP 204) is an empty result, never an error,
// and a real failure is never reported as "no messages":
//
//	msgs, err := c.Queue("orders").Group("billing").Pop(ctx, client.PopOptions{Batch: 10, Wait: true})
//	for _, m := range msgs {
//		// handle m, then:
//		if _, err := c.Ack(ctx, client.Completed(m)); err != nil { ... }
//	}
//
// [Queue.Consume] runs a long-poll loop with several workers, acknowledges for you (or lets the
// handler do it, see [ConsumeOptions.ManualAck]), renews leases, and stops gracefully when its
// context is cancelled:
//
//	err = c.Queue("orders").Consume(ctx, func(ctx context.Context, m client.Message) error {
//		return process(m)
//	}, client.ConsumeOptions{Concurrency: 8, Batch: 50})
//
// A [Transaction] acknowledges input and pushes output atomically:
//
//	_, err = c.Transaction().Ack(m).Queue("shipments").Push(client.Payload(s)).Commit(ctx)
//
// [Client.Matching] consumes across every queue of a namespace and/or task.
//
// # Administration
//
// Dead letters: [Client.DLQ], [Client.DLQMessage], [Client.RetryDLQMessage],
// [Client.DeleteDLQMessage]. Queues: [Client.Queues], [Queue.Info], [Queue.Delete]. Consumer
// groups: [Client.ConsumerGroups], [Client.LaggingPartitions], and [Client.ConsumerGroup] for
// Get, Delete, DeleteForQueue, SetSubscription, SeekTo, SeekToEnd and SeekPartitionToEnd.
// Maintenance: [Client.Maintenance], [Client.SetMaintenance], [Client.PopMaintenance],
// [Client.SetPopMaintenance]. Status: [Client.Status], [Client.StatusQueues], [Client.StatusQueue],
// [Client.StatusQueueMessages], [Client.Health], and [Client.GetRaw] for any other read route.
//
// # Errors
//
// Three answers need care and the SDK handles them: a rejected acknowledgement arrives as HTTP 200
// (reported as [*AckError] or per item in [AckResult]), a rolled-back transaction arrives as HTTP 200
// (reported as [*TransactionError]), and an empty pop is a 204. Other failures are an [*APIError]
// (with the proxy's machine-readable Code), a [*TransportError], or wrap [ErrMalformedResponse]
// when a per-item result array does not line up with the request. Use [IsRateLimited],
// [IsTerminal], [IsNotFound] and [IsTransport] to branch.
//
// # Retries
//
// Two independent layers, as documented for every Queen SDK:
//
//   - Layer one, 5xx and network failures: [Config.RetryAttempts] attempts (default 3) with
//     exponential backoff from [Config.RetryDelay] (default 1s). The failing backend is marked
//     unhealthy and the next URL is tried. Any 4xx ends this loop: client errors are not retried.
//   - Layer two, 429 only: retried in place on the same backend (a rate limit is not a health
//     signal and never triggers failover). The delay is the Retry-After header when present,
//     otherwise min(Cap, Base × 2^attempt), jittered by ±20%. [Retry429.MaxAttempts] defaults to 10
//     for ordinary requests and to unbounded for long-poll pops; an explicit value bounds both.
//
// 401, 403 and 413 are terminal: fix the credential, the quota or the request size instead of
// retrying.
package client
