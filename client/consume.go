package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Handler processes one delivered message. With the default acknowledgement mode a nil return
// acknowledges the message as completed and an error acknowledges it as failed (with the error
// text as reason). Handlers must be idempotent on [Message.TransactionID]: every rejected ack,
// lease expiry and replay is a redelivery.
type Handler func(ctx context.Context, m Message) error

// ConsumeOptions tune [Queue.Consume]. Zero values select the defaults.
type ConsumeOptions struct {
	// Concurrency is the number of independent poll-and-process workers (default 1). Each holds
	// its own partition lease, so messages of one partition are still processed in order.
	Concurrency int
	// Batch is the number of messages per pop (default 1).
	Batch int
	// Partitions lets one pop claim several partitions (default 1).
	Partitions int
	// PollTimeout is the long-poll deadline of each pop (default 30s).
	PollTimeout time.Duration
	// ManualAck leaves acknowledgement to the handler ([Client.Ack], [Client.AckBatch] or a
	// [Transaction]); Consume sends none.
	ManualAck bool
	// AutoAck pops with autoAck=true: the broker advances the cursor at delivery (at-most-once),
	// no lease is held, and handler errors are only logged.
	AutoAck bool
	// LeaseRenewal, when positive, extends the batch's lease every LeaseRenewal (by twice that)
	// while its handlers run, for handlers that may outlive the queue's leaseTime.
	LeaseRenewal time.Duration
	// ErrorBackoff is the pause after a failed pop before polling again (default: Config.RetryDelay).
	// A rate-limited pop waits its Retry-After instead when that is longer.
	ErrorBackoff time.Duration
}

// Consume long-polls the queue with opts.Concurrency workers and calls h for every message, in
// delivery order within each batch, until ctx is cancelled. With Concurrency > 1, h runs
// concurrently on different batches (different partition leases), so it must be safe for
// concurrent use.
//
// Stopping is graceful: on cancellation no new pop starts, the batches already received are
// processed to the end (the handler context is not cancelled by the stop) and acknowledged, and
// Consume returns nil. Transient failures (5xx, network, an exhausted 429 budget) are logged and
// retried after a backoff. A terminal error (401, 403, 404, 413, …) stops every worker and is
// returned: waiting will not fix it.
//
// In the default acknowledgement mode, when h fails for a message, that message is acked as
// failed and the rest of its partition's batch is not processed: it redelivers in order.
func (q *Queue) Consume(ctx context.Context, h Handler, opts ConsumeOptions) error {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 30 * time.Second
	}
	if opts.ErrorBackoff <= 0 {
		opts.ErrorBackoff = q.c.cfg.RetryDelay
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for w := 0; w < opts.Concurrency; w++ {
		wg.Go(func() {
			if err := q.consumeLoop(wctx, h, opts); err != nil {
				once.Do(func() { firstErr = err; cancel(err) })
			}
		})
	}
	wg.Wait()
	return firstErr
}

func (q *Queue) consumeLoop(ctx context.Context, h Handler, opts ConsumeOptions) error {
	log := q.c.cfg.Logger
	pop := PopOptions{Batch: opts.Batch, Partitions: opts.Partitions, Wait: true, Timeout: opts.PollTimeout, AutoAck: opts.AutoAck}
	for ctx.Err() == nil {
		msgs, err := q.Pop(ctx, pop)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if IsTerminal(err) {
				log.ErrorContext(ctx, "queen: consumer stopped on terminal error", slog.String("queue", q.name), slog.Any("error", err))
				return err
			}
			d := opts.ErrorBackoff
			var ae *APIError
			if errors.As(err, &ae) && ae.RetryAfter > d {
				d = ae.RetryAfter
			}
			log.WarnContext(ctx, "queen: pop failed, backing off", slog.String("queue", q.name),
				slog.Duration("delay", d), slog.Any("error", err))
			if q.c.sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		if len(msgs) > 0 {
			q.process(ctx, h, opts, msgs)
		}
	}
	return nil
}

// process runs the handler over one popped batch and acknowledges it. It deliberately uses a
// context detached from the stop signal: a received batch is leased to us and is finished.
func (q *Queue) process(stop context.Context, h Handler, opts ConsumeOptions, msgs []Message) {
	ctx := context.WithoutCancel(stop)
	log := q.c.cfg.Logger
	stopRenewal := func() {}
	if opts.LeaseRenewal > 0 && !opts.AutoAck {
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { q.renew(rctx, opts.LeaseRenewal, msgs) })
		stopRenewal = func() { cancel(); wg.Wait() }
	}
	defer func() { stopRenewal() }()
	// Acks are sent in one batch at the end, except at a handler failure: the failed ack is sent at
	// once because its outcome decides what happens to the rest of that partition's batch. If it
	// released the lease (a retry is due) the rest is skipped and redelivers in order; if the
	// retry budget was spent and the message went to the DLQ, the cursor moved past it and the
	// rest is processed normally.
	var pending []Ack
	flush := func() []AckResult {
		if len(pending) == 0 {
			return nil
		}
		res, err := q.c.AckBatch(ctx, pending)
		pending = nil
		if err != nil {
			log.ErrorContext(ctx, "queen: ack failed; the batch will redeliver", slog.String("queue", q.name), slog.Any("error", err))
			return nil
		}
		for _, r := range res {
			if err := r.Err(); err != nil {
				log.WarnContext(ctx, "queen: ack rejected; the message will redeliver", slog.String("queue", q.name), slog.Any("error", err))
			}
		}
		return res
	}
	skip := map[string]bool{} // partitions whose batch stopped at a failure
	for _, m := range msgs {
		if skip[m.PartitionID] {
			continue
		}
		err := callHandler(ctx, h, m)
		switch {
		case opts.AutoAck || opts.ManualAck:
			if err != nil {
				log.WarnContext(ctx, "queen: handler failed", slog.String("queue", q.name),
					slog.String("transaction_id", m.TransactionID), slog.Any("error", err))
			}
		case err != nil:
			pending = append(pending, Failed(m, err.Error()))
			res := flush()
			if len(res) == 0 || !res[len(res)-1].Success || !res[len(res)-1].DLQ {
				skip[m.PartitionID] = true
			}
		default:
			pending = append(pending, Completed(m))
		}
	}
	stopRenewal() // the acks below release the lease; renewing it afterwards would only fail
	stopRenewal = func() {}
	flush()
}

func callHandler(ctx context.Context, h Handler, m Message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("queen: handler panic: %v", p)
		}
	}()
	return h(ctx, m)
}

// renew extends every lease of msgs each interval until ctx ends.
func (q *Queue) renew(ctx context.Context, every time.Duration, msgs []Message) {
	leases := map[string]bool{}
	for _, m := range msgs {
		if m.LeaseID != "" {
			leases[m.LeaseID] = true
		}
	}
	if len(leases) == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for id := range leases {
				_, err := q.c.ExtendLease(ctx, id, 2*every)
				switch {
				case err == nil, ctx.Err() != nil:
				case errors.Is(err, ErrLeaseLost):
					// Released by the handler's own acks (manual mode) or expired: nothing to renew.
					q.c.cfg.Logger.DebugContext(ctx, "queen: lease no longer renewable", slog.String("lease_id", id), slog.Any("error", err))
					delete(leases, id)
				default:
					q.c.cfg.Logger.WarnContext(ctx, "queen: lease renewal failed", slog.String("lease_id", id), slog.Any("error", err))
				}
			}
			if len(leases) == 0 {
				return
			}
		}
	}
}
