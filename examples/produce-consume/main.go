// Command produce-consume pushes a batch of orders through a buffered producer and consumes them
// with several workers, acknowledging automatically. Stop it with Ctrl-C.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/examples/internal/exampleenv"
)

type order struct {
	ID     int     `json:"id"`
	Amount float64 `json:"amount"`
}

func main() { exampleenv.Main(run) }

func run(ctx context.Context, log *slog.Logger) error {
	c, err := client.New(exampleenv.Config(log))
	if err != nil {
		return err
	}
	orders := c.Queue("examples.orders")
	if _, err := orders.Config(client.QueueOptions{LeaseTime: client.Int(30), RetryLimit: client.Int(3)}).Create(ctx); err != nil {
		return err
	}

	// Produce: 1000 orders over 4 partitions (one per customer shard), flushed in batches of 100.
	const n = 1000
	producers := make([]*client.Producer, 4)
	for i := range producers {
		producers[i] = orders.Partition("shard-" + string(rune('a'+i))).Producer(client.ProducerOptions{BatchSize: 100})
	}
	for i := range n {
		if err := producers[i%len(producers)].Add(ctx, client.Payload(order{ID: i, Amount: float64(i) * 1.5})); err != nil {
			return err
		}
	}
	for _, p := range producers {
		if err := p.Close(ctx); err != nil {
			return err
		}
	}
	log.Info("produced", slog.Int("orders", n))

	// Consume with 4 workers; a nil return acknowledges, an error counts a retry.
	var done atomic.Int64
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = orders.Consume(cctx, func(ctx context.Context, m client.Message) error {
		var o order
		if err := m.Decode(&o); err != nil {
			return err
		}
		if done.Add(1) == n {
			cancel() // graceful: in-flight batches finish and are acknowledged
		}
		return nil
	}, client.ConsumeOptions{Concurrency: 4, Batch: 50, PollTimeout: 5 * time.Second})
	log.Info("consumed", slog.Int64("orders", done.Load()))
	if err == nil && done.Load() < n {
		err = fmt.Errorf("consumed %d of %d orders before the deadline", done.Load(), n)
	}
	return err
}
