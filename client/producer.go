package client

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// ProducerOptions tune a [Producer]. Zero values select the defaults.
type ProducerOptions struct {
	// BatchSize flushes the buffer when it holds this many items (default 100).
	BatchSize int
	// FlushInterval flushes a non-empty buffer at least this often (default 100ms).
	FlushInterval time.Duration
	// OnError receives the items of a background (interval) flush that failed after the
	// client's retries. Default: log them. Flush and Close return their errors directly.
	OnError func(err error, items []PushItem)
}

// Producer buffers pushes to one queue/partition client-side and sends them in batches, by count or
// by time, for high-volume producers. Items are pushed with generated transaction ids when they
// carry none, so a retried batch is deduplicated by the broker. It is safe for concurrent use;
// call Close to flush the remainder and stop the timer.
type Producer struct {
	q    *Queue
	opts ProducerOptions

	mu     sync.Mutex // protects buf and closed
	buf    []wirePushItem
	closed bool

	sendMu sync.Mutex // serialises sends so batches leave in Add order
	stop   chan struct{}
	wg     sync.WaitGroup
}

// Producer returns a buffered producer for this queue (and partition, if chosen).
func (q *Queue) Producer(opts ProducerOptions) *Producer {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 100 * time.Millisecond
	}
	p := &Producer{q: q, opts: opts, stop: make(chan struct{})}
	p.wg.Go(p.loop)
	return p
}

// Add buffers items. When the buffer reaches BatchSize, Add sends it before returning (the caller
// feels the broker's pace, which bounds memory) and returns that push's error.
func (p *Producer) Add(ctx context.Context, items ...PushItem) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.buf = append(p.buf, p.q.wireItems(items)...)
	full := len(p.buf) >= p.opts.BatchSize
	p.mu.Unlock()
	if full {
		return p.Flush(ctx)
	}
	return nil
}

// Flush sends everything buffered so far, in batches of at most BatchSize.
func (p *Producer) Flush(ctx context.Context) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.mu.Lock()
	items := p.buf
	p.buf = nil
	p.mu.Unlock()
	for len(items) > 0 {
		n := min(len(items), p.opts.BatchSize)
		if _, err := p.q.c.push(ctx, items[:n]); err != nil {
			// Put the unsent items back in front so that a later flush retries them in order.
			p.mu.Lock()
			p.buf = append(items, p.buf...)
			p.mu.Unlock()
			return err
		}
		items = items[n:]
	}
	return nil
}

// Close flushes the buffer and stops the background timer. Later Adds return [ErrClosed].
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	return p.Flush(ctx)
}

func (p *Producer) loop() {
	t := time.NewTicker(p.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			empty := len(p.buf) == 0
			p.mu.Unlock()
			if empty {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), p.q.c.cfg.Timeout*time.Duration(p.q.c.cfg.RetryAttempts+1))
			if err := p.Flush(ctx); err != nil {
				p.mu.Lock()
				failed := make([]PushItem, len(p.buf))
				for i, w := range p.buf {
					failed[i] = PushItem{Payload: w.Payload, TransactionID: w.TransactionID, TraceID: w.TraceID}
				}
				p.buf = nil // handed to OnError; not retried forever in the background
				p.mu.Unlock()
				if p.opts.OnError != nil {
					p.opts.OnError(err, failed)
				} else {
					p.q.c.cfg.Logger.Error("queen: background flush failed", slog.String("queue", p.q.name),
						slog.Int("items", len(failed)), slog.Any("error", err))
				}
			}
			cancel()
		}
	}
}
