// Command streams-ratelimit forwards jobs to a worker queue at a bounded rate with the streams
// gate: a token bucket per tenant admits a prefix of each batch, and what it denies stays leased on
// the source and comes back, in order, when the lease expires. Sustainable rate per tenant =
// min(refill rate, capacity / lease seconds).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/client/streams"
	"github.com/queen-go/queen/examples/internal/exampleenv"
)

func main() { exampleenv.Main(run) }

func run(ctx context.Context, log *slog.Logger) error {
	cfg := exampleenv.Config(log)
	cfg.URLs = cfg.URLs[:1] // the streams runner below takes one URL: the client uses the same one
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	run := fmt.Sprint(time.Now().UnixNano())
	src, out := "examples.jobs."+run, "examples.jobs.admitted."+run
	// A short lease: denied jobs come back after one second.
	if _, err := c.Queue(src).Config(client.QueueOptions{LeaseTime: client.Int(1)}).Create(ctx); err != nil {
		return err
	}
	const jobs = 8
	for i := range jobs {
		if _, err := c.Queue(src).Partition("tenant-a").Push(ctx, client.Payload(map[string]any{"job": i})); err != nil {
			return err
		}
	}

	// Bursts of 3, refilled at 3 per second: about 3 jobs per second get through.
	query := streams.From(src).Gate(streams.TokenBucketGate(3, 3, nil)).To(out, streams.SinkPartition("tenant-a"))
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runner, err := query.Start(rctx, streams.RunOptions{QueryID: "examples.jobs." + run, URL: cfg.URLs[0],
		BearerToken: cfg.Token, Client: c, MaxWaitMillis: 200, Logger: log})
	if err != nil {
		return err
	}
	start := time.Now()
	for got := 0; got < jobs; {
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("only %d of %d jobs admitted before the deadline", got, jobs)
		}
		msgs, err := c.Queue(out).Group("worker").Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true, Wait: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fmt.Printf("%5.1fs admitted %s\n", time.Since(start).Seconds(), m.Data)
			got++
		}
	}
	cancel()
	if err := runner.Wait(); err != nil {
		return err
	}
	m := runner.Metrics()
	log.Info("streams-ratelimit done", slog.Int64("allowed", m.GateAllows), slog.Int64("denied", m.GateDenials))
	return nil
}
