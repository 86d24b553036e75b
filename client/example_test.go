package client_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/queen-go/queen/client"
)

func ExampleNew() {
	c, err := client.New(client.Config{
		URLs:          []string{"http://queen-1:6632", "http://queen-2:6632"}, // failover on 5xx/network errors
		Token:         os.Getenv("QUEEN_TOKEN"),
		RetryAttempts: 5,
		Retry429:      client.Retry429{Cap: 10 * time.Second},
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		panic(err)
	}
	_ = c
}

func ExampleQueue_Push() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	res, err := c.Queue("orders").Partition("customer-42").Push(ctx,
		client.PushItem{Payload: map[string]any{"orderId": 1}, TransactionID: "order-1"},
		client.Payload(map[string]any{"orderId": 2}),
	)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		_ = r.Status // "queued", or "duplicate" when order-1 was pushed before
	}
}

func ExampleQueue_Create() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	_, err := c.Queue("payments").Namespace("billing").Task("charge").
		Config(client.QueueOptions{LeaseTime: client.Int(60), RetryLimit: client.Int(5), DLQAfterMaxRetries: client.Bool(true)}).
		Create(context.Background())
	if err != nil {
		panic(err)
	}
}

func ExampleQueue_Options() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	q := c.Queue("payments")
	// Zero is a value: no retries at all. An option left nil is reset to its default.
	if _, err := q.Config(client.QueueOptions{RetryLimit: client.Int(0)}).Create(ctx); err != nil {
		panic(err)
	}
	// Change one option and keep the rest: read every option, change it, configure the whole.
	opts, err := q.Options(ctx)
	if err != nil {
		panic(err)
	}
	opts.LeaseTime = client.Int(120)
	if _, err := q.Config(opts).Create(ctx); err != nil {
		panic(err)
	}
}

func ExampleQueue_Pop() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	msgs, err := c.Queue("orders").Group("billing").Pop(ctx, client.PopOptions{Batch: 10, Wait: true, Timeout: 20 * time.Second})
	switch {
	case client.IsTerminal(err):
		panic(err) // 401/403/413: fix the credential, quota or request; do not retry
	case err != nil:
		return // transient: network, 5xx, or an explicit 429 budget ran out
	case len(msgs) == 0:
		return // nothing to consume (HTTP 204)
	}
	acks := make([]client.Ack, 0, len(msgs))
	for _, m := range msgs {
		acks = append(acks, client.Completed(m))
	}
	results, err := c.AckBatch(ctx, acks)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		if err := r.Err(); err != nil {
			_ = err // rejected: the message will be redelivered
		}
	}
}

func ExampleQueue_Consume() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // cancelling stops gracefully: received batches finish and are acknowledged

	err := c.Queue("orders").Consume(ctx, func(ctx context.Context, m client.Message) error {
		var order struct{ OrderID int }
		if err := m.Decode(&order); err != nil {
			return err // acked as failed: retried until the queue's retryLimit, then dead-lettered
		}
		return nil // acked as completed
	}, client.ConsumeOptions{Concurrency: 8, Batch: 20, LeaseRenewal: 30 * time.Second})
	if err != nil {
		panic(err) // only terminal errors (401/403/404/413) stop a consumer
	}
}

func ExampleQueue_Consume_manualAck() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	_ = c.Queue("orders").Consume(ctx, func(ctx context.Context, m client.Message) error {
		_, err := c.Ack(ctx, client.Completed(m))
		return err
	}, client.ConsumeOptions{ManualAck: true})
}

func ExampleClient_Transaction() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	msgs, _ := c.Queue("orders").Pop(ctx, client.PopOptions{})
	for _, m := range msgs {
		_, err := c.Transaction().
			Ack(m).
			Queue("shipments").Partition(m.Partition).Push(client.Payload(map[string]string{"order": m.TransactionID})).
			Commit(ctx)
		var te *client.TransactionError
		if errors.As(err, &te) {
			_ = te.Code // "QDUP" or "QTXN": nothing was applied
		}
	}
}

func ExampleQueue_Producer() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	p := c.Queue("clicks").Producer(client.ProducerOptions{BatchSize: 500, FlushInterval: 50 * time.Millisecond})
	defer p.Close(ctx) // flushes what is left
	for i := range 10_000 {
		if err := p.Add(ctx, client.Payload(i)); err != nil {
			panic(err)
		}
	}
}

func ExampleIsRateLimited() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}, Retry429: client.Retry429{MaxAttempts: 3}})
	_, err := c.Queue("q").Push(context.Background(), client.Payload(1))
	var ae *client.APIError
	switch {
	case client.IsRateLimited(err):
		// Backpressure that outlived the retry budget: slow down and try later.
	case errors.As(err, &ae) && ae.Code == "quota_exceeded":
		// A quota does not refill by waiting.
	}
}

func ExampleClient_DLQ() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	ctx := context.Background()
	page, err := c.DLQ(ctx, client.DLQFilter{Queue: "orders", Limit: 50})
	if err != nil {
		panic(err)
	}
	for _, m := range page.Messages {
		// Fix the cause, then put the message back in front of its consumer group.
		_ = c.RetryDLQMessage(ctx, m.PartitionID, m.TransactionID)
	}
}

func ExampleConsumerGroup_SeekTo() {
	c, _ := client.New(client.Config{URLs: []string{"http://localhost:6632"}})
	// Replay the last hour for the "analytics" group.
	_, _ = c.ConsumerGroup("analytics").SeekTo(context.Background(), "events", time.Now().Add(-time.Hour))
}
