// Command pipeline is a transactional stage: it consumes raw readings, enriches each one and, in
// a single transaction, acknowledges the input and pushes the output to the next queue, so that a
// crash can neither lose a reading nor emit it twice.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/examples/internal/exampleenv"
)

type reading struct {
	Sensor string  `json:"sensor"`
	Value  float64 `json:"value"`
}

type enriched struct {
	reading
	Fahrenheit float64 `json:"fahrenheit"`
}

func main() { exampleenv.Main(run) }

func run(ctx context.Context, log *slog.Logger) error {
	c, err := client.New(exampleenv.Config(log))
	if err != nil {
		return err
	}
	raw, out := c.Queue("examples.readings"), c.Queue("examples.readings.enriched")
	const n = 50
	for i := range n {
		r := reading{Sensor: "s" + string(rune('0'+i%5)), Value: float64(i)}
		// The transaction id makes the push idempotent if this program is re-run.
		if _, err := raw.Partition(r.Sensor).Push(ctx, client.PushItem{Payload: r, TransactionID: "reading-" + itoa(i)}); err != nil {
			return err
		}
	}

	var moved atomic.Int64
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = raw.Consume(cctx, func(ctx context.Context, m client.Message) error {
		var r reading
		if err := m.Decode(&r); err != nil {
			_, err := c.Ack(ctx, client.DeadLetter(m, "undecodable: "+err.Error()))
			return err
		}
		e := enriched{reading: r, Fahrenheit: r.Value*9/5 + 32}
		_, err := c.Transaction().
			Ack(m).
			Queue(out.Name()).Partition(m.Partition).Push(client.PushItem{Payload: e, TransactionID: "enriched-" + m.TransactionID}).
			Commit(ctx)
		var te *client.TransactionError
		if errors.As(err, &te) && te.Code == "QDUP" {
			// Already emitted by an earlier run: just acknowledge the input.
			_, err = c.Ack(ctx, client.Completed(m))
		}
		if err != nil {
			return err // not acknowledged: the lease expires and the reading is redelivered
		}
		if moved.Add(1) == n {
			cancel()
		}
		return nil
	}, client.ConsumeOptions{Concurrency: 5, Batch: 10, ManualAck: true, PollTimeout: 2 * time.Second, LeaseRenewal: 10 * time.Second})
	log.Info("pipeline done", slog.Int64("moved", moved.Load()))
	if err == nil && moved.Load() < n {
		err = fmt.Errorf("moved %d of %d readings before the deadline", moved.Load(), n)
	}
	return err
}

func itoa(i int) string { return strconv.Itoa(i) }
