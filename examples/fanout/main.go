// Command fanout shows consumer groups: every group receives every message of a queue, with its own
// cursor, while workers inside one group compete. A group created with SubscribeNew skips history.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/examples/internal/exampleenv"
)

func main() { exampleenv.Main(run) }

func run(ctx context.Context, log *slog.Logger) error {
	c, err := client.New(exampleenv.Config(log))
	if err != nil {
		return err
	}
	events := c.Queue("examples.events")
	const n = 100
	for i := range n {
		if _, err := events.Partition("user-"+string(rune('0'+i%10))).Push(ctx, client.Payload(map[string]int{"seq": i})); err != nil {
			return err
		}
	}

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var short atomic.Int32
	for _, group := range []string{"analytics", "audit"} {
		var got atomic.Int64
		wg.Go(func() {
			gctx, gcancel := context.WithCancel(cctx)
			defer gcancel()
			err := events.Group(group).Consume(gctx, func(context.Context, client.Message) error {
				if got.Add(1) == n {
					gcancel()
				}
				return nil
			}, client.ConsumeOptions{Concurrency: 2, Batch: 20, PollTimeout: 2 * time.Second})
			log.Info("group finished", slog.String("group", group), slog.Int64("messages", got.Load()), slog.Any("error", err))
			if err != nil || got.Load() < n {
				short.Add(1)
			}
		})
	}
	wg.Wait()
	if short.Load() > 0 {
		return fmt.Errorf("%d group(s) did not receive all %d messages", short.Load(), n)
	}

	// A late group that only wants what is published from now on.
	late, err := events.Group("late-joiner").SubscriptionMode(client.SubscribeNew).Pop(ctx, client.PopOptions{Batch: 10})
	if err != nil {
		return err
	}
	// On a first run this is 0: history is skipped. On later runs the group exists and sees what
	// was pushed since it first subscribed.
	log.Info("late joiner (SubscribeNew)", slog.Int("messages", len(late)))
	return nil
}
