// Command streams-windowed is a keyed, windowed aggregation with the streams runtime: orders are
// summed per customer and per minute of event time, and each closed minute is pushed to a totals
// queue. The state of open windows lives in PostgreSQL (queen_streams.state), so a restarted
// process resumes where the last committed cycle left off.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/client/streams"
	"github.com/queen-go/queen/examples/internal/exampleenv"
)

func main() { exampleenv.Main(run) }

// t0 is the event time of the first order: a whole minute, so the windows below are easy to read.
var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func run(ctx context.Context, log *slog.Logger) error {
	cfg := exampleenv.Config(log)
	cfg.URLs = cfg.URLs[:1] // the streams runner below takes one URL: the client uses the same one
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	// A run id keeps repeated runs against the same broker apart.
	run := fmt.Sprint(time.Now().UnixNano())
	src, sink := "examples.orders."+run, "examples.orders.per-minute."+run

	// 3 minutes of orders from two customers, 10 s apart, then one order an hour later whose event
	// time moves the watermark past every window above (it opens a window of its own).
	for i := range 18 {
		customer := []string{"alice", "bob"}[i%2]
		order := map[string]any{"customer": customer, "amount": float64(10 + i), "at": t0.Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339)}
		if _, err := c.Queue(src).Partition("shop-1").Push(ctx, client.Payload(order)); err != nil {
			return err
		}
	}
	late := map[string]any{"customer": "alice", "amount": 0.0, "at": t0.Add(time.Hour).Format(time.RFC3339)}
	if _, err := c.Queue(src).Partition("shop-1").Push(ctx, client.Payload(late)); err != nil {
		return err
	}

	amount := func(v any) any { return v.(map[string]any)["amount"] }
	query := streams.From(src).
		KeyBy(func(v any, _ streams.Context) (string, error) { return v.(map[string]any)["customer"].(string), nil }).
		WindowTumbling(60, streams.WithEventTime(func(v any) any { return v.(map[string]any)["at"] })).
		Aggregate(map[string]streams.Extractor{"count": nil, "sum": amount, "max": amount}, "count", "sum", "max").
		Map(func(acc any, w streams.Context) (any, error) {
			// The aggregate plus the window it closes.
			out := acc.(map[string]any)
			out["customer"], out["minute"] = w.Key, w.WindowKey
			return out, nil
		}).
		To(sink, streams.SinkPartition("totals"))

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runner, err := query.Start(rctx, streams.RunOptions{QueryID: "examples.orders.per-minute." + run, URL: cfg.URLs[0],
		BearerToken: cfg.Token, Client: c, MaxWaitMillis: 200, Logger: log})
	if err != nil {
		return err
	}

	// 3 minutes × 2 customers = 6 closed windows.
	var rows []string
	deadline := time.Now().Add(30 * time.Second)
	for len(rows) < 6 {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of 6 windows closed before the deadline", len(rows))
		}
		msgs, err := c.Queue(sink).Group("report").Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true, Wait: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			var w struct {
				Customer, Minute string
				Count, Sum, Max  float64
			}
			if err := json.Unmarshal(m.Data, &w); err != nil {
				return err
			}
			rows = append(rows, fmt.Sprintf("%s %-5s orders=%.0f total=%.0f largest=%.0f", w.Minute, w.Customer, w.Count, w.Sum, w.Max))
		}
	}
	sort.Strings(rows)
	for _, r := range rows {
		fmt.Println(r)
	}
	cancel()
	if err := runner.Wait(); err != nil {
		return err
	}
	m := runner.Metrics()
	log.Info("streams-windowed done", slog.Int64("messages", m.Messages), slog.Int64("cycles", m.Cycles), slog.Int64("errors", m.Errors))
	return nil
}
