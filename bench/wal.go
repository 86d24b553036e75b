package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// walMessages is how many messages the wal scenario pushes, pops and acks per push batch size: enough
// that the full-page images of the first writes after its checkpoint are a small part of the total.
const walMessages = 20_000

func init() {
	registerOptionalScenario("wal", "WAL bytes per pushed message and per pop+ack at each -push-batches size, against a plain INSERT's per row", func(ctx context.Context, r *runner) ([]*Result, error) {
		return sweep(ctx, r.opt.pushBatches, r.runWAL)
	})
}

// runWAL measures the write-ahead log one primary writes per message, the volume a standby must
// receive and a sharding design must divide: walMessages pushed in batches of batch (-producers
// workers, -partitions partitions), then popped (-pop-batch, queue mode) and acked by -consumers
// workers, then the same number of rows stored by plain multi-row INSERTs of batch rows into a table
// shaped like messages. Each phase starts after a CHECKPOINT and is read as the difference of
// pg_current_wal_lsn around it, so it includes the full-page images a steady load writes after each
// checkpoint, and whatever else the cluster writes meanwhile (run it on a quiet cluster).
func (r *runner) runWAL(ctx context.Context, batch int) (*Result, error) {
	name := fmt.Sprintf("wal-b%d", batch)
	if r.db == nil {
		return &Result{Name: name, Skipped: "needs the broker's PostgreSQL URL"}, nil
	}
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	res.Errors = map[string]int{}
	res.Setup = fmt.Sprintf("%d messages: %d producers, batch %d, %d partitions, %d-byte payload; then %d consumers, pop batch %d, ack/batch; then plain INSERTs of %d rows",
		walMessages, r.opt.producers, batch, r.opt.partitions, r.opt.msgSize, r.opt.consumers, r.opt.popBatch, batch)
	defer func() {
		if !r.opt.keep {
			_ = r.prod.deleteQueue(context.Background(), q)
		}
	}()
	parts := r.partitionNames(r.opt.partitions)
	payload := payloadOf(r.opt.msgSize)

	// Push: the workers share a count of requests still to send.
	var next atomic.Int64
	start := time.Now()
	pushWAL, err := r.walDelta(ctx, func() error {
		return workers(r.opt.producers, func(w int) error {
			for {
				n := next.Add(1) - 1
				if n*int64(batch) >= walMessages {
					return nil
				}
				items := make([]pushItem, 0, batch)
				for i := n * int64(batch); i < min(walMessages, (n+1)*int64(batch)); i++ {
					items = append(items, pushItem{Queue: q, Partition: parts[int(n)%len(parts)], Payload: payload,
						TransactionID: fmt.Sprintf("%s-wal%d-%d", r.tag, batch, i)})
				}
				if _, err := r.prod.push(ctx, items); err != nil {
					return fmt.Errorf("push: %w", err)
				}
			}
		})
	})
	if err != nil {
		return res, err
	}
	res.Pushed = walMessages
	res.PushRate = walMessages / time.Since(start).Seconds()

	// Pop and ack until a pop finds nothing; every transactionId must come back exactly once.
	var mu sync.Mutex
	seen := make(map[string]int, walMessages)
	start = time.Now()
	ackWAL, err := r.walDelta(ctx, func() error {
		return workers(r.opt.consumers, func(w int) error {
			for {
				msgs, err := r.cons.pop(ctx, q, "", r.opt.popBatch, 0, 0)
				if err != nil {
					return fmt.Errorf("pop: %w", err)
				}
				if len(msgs) == 0 {
					return nil
				}
				acks := make([]ackItem, len(msgs))
				for i, m := range msgs {
					acks[i] = ackItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"}
				}
				if _, err := r.cons.ackBatch(ctx, "", acks); err != nil {
					return fmt.Errorf("ack: %w", err)
				}
				mu.Lock()
				for _, m := range msgs {
					seen[m.TransactionID]++
				}
				mu.Unlock()
			}
		})
	})
	if err != nil {
		return res, err
	}
	res.Consumed = int64(len(seen))
	res.ConsumeRate = float64(len(seen)) / time.Since(start).Seconds()
	v := Verification{Queue: q, Groups: 1, Pushed: walMessages, Consumed: len(seen), OK: true}
	for _, k := range seen {
		if k > 1 {
			v.Duplicates += k - 1
		}
	}
	v.Missing = walMessages - len(seen)
	v.OK = v.Missing == 0 && v.Duplicates == 0
	res.Verify = []Verification{v}

	// The same rows by plain INSERTs, into the baseline's scratch table (emptied afterwards).
	sql := insertSQL(batch)
	insertWAL, err := r.walDelta(ctx, func() error {
		next.Store(0)
		return workers(r.opt.producers, func(w int) error {
			for {
				n := next.Add(1) - 1
				if n*int64(batch) >= walMessages {
					return nil
				}
				part := uuidV4()
				var args []any
				k := 0
				for i := n * int64(batch); i < (n+1)*int64(batch); i++ {
					k++
					args = append(args, part, int64(k), uuidV4(), fmt.Sprintf("wal-%d", i), string(payload))
				}
				if _, err := r.db.pool.Exec(ctx, sql, args...); err != nil {
					return fmt.Errorf("insert: %w", err)
				}
			}
		})
	})
	if serr := r.db.settle(ctx); err == nil {
		err = serr
	}
	if err != nil {
		return res, err
	}
	rows := ((walMessages + batch - 1) / batch) * batch
	res.Notes = append(res.Notes,
		fmt.Sprintf("WAL per pushed message: %.0f bytes", float64(pushWAL)/walMessages),
		fmt.Sprintf("WAL per pop+ack (queue mode, pop batch %d): %.0f bytes per message", r.opt.popBatch, float64(ackWAL)/walMessages),
		fmt.Sprintf("WAL per plain INSERT row (batch %d): %.0f bytes", batch, float64(insertWAL)/float64(rows)),
		fmt.Sprintf("push / INSERT WAL: %.2f×; push+pop+ack / INSERT: %.2f×", float64(pushWAL)/walMessages/(float64(insertWAL)/float64(rows)),
			float64(pushWAL+ackWAL)/walMessages/(float64(insertWAL)/float64(rows))))
	for _, n := range res.Notes {
		fmt.Fprintln(r.out, n)
	}
	return res, nil
}

// walDelta runs phase after a CHECKPOINT and returns the WAL bytes the cluster wrote meanwhile.
func (r *runner) walDelta(ctx context.Context, phase func() error) (int64, error) {
	if _, err := r.db.pool.Exec(ctx, `CHECKPOINT`); err != nil {
		return 0, fmt.Errorf("checkpoint (the wal scenario needs a role that may run it): %w", err)
	}
	var before string
	if err := r.db.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&before); err != nil {
		return 0, err
	}
	if err := phase(); err != nil {
		return 0, err
	}
	var n int64
	err := r.db.pool.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint`, before).Scan(&n)
	return n, err
}

// workers runs f on n goroutines and returns the first error.
func workers(n int, f func(w int) error) error {
	errs := make(chan error, n)
	for w := range n {
		go func() { errs <- f(w) }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
