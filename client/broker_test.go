package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type testBundle struct {
	c *client.Client
}

// setupBroker starts a broker on a fresh database and returns its base URL.
func setupBroker(t *testing.T) string {
	t.Helper()
	// Each broker gets its own spool: the default FILE_BUFFER_DIR (./queen-spool) would be shared by
	// every broker of this test binary, and a spool belongs to one broker.
	return testenv.StartBroker(t, map[string]string{"FILE_BUFFER_DIR": t.TempDir()}).URL
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	c, err := client.New(client.Config{URLs: []string{setupBroker(t)}, RetryDelay: 50 * time.Millisecond})
	require.NoError(t, err)
	return &testBundle{c: c}
}

// setupClock is setup with a broker that decides time by clk, which the test advances instead of
// waiting.
func setupClock(t *testing.T) (tb *testBundle, clk *testenv.Clock) {
	t.Helper()
	clk = testenv.NewClock()
	url := testenv.StartBrokerWith(t, map[string]string{"FILE_BUFFER_DIR": t.TempDir()}, broker.Options{Clock: clk.Now}).URL
	c, err := client.New(client.Config{URLs: []string{url}, RetryDelay: 50 * time.Millisecond})
	require.NoError(t, err)
	return &testBundle{c: c}, clk
}

func TestBrokerConfigurePushPopAck(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()

	cfg, err := tb.c.Queue("orders").Namespace("billing").Task("invoice").
		Config(client.QueueOptions{LeaseTime: client.Int(30), RetryLimit: client.Int(2)}).Create(ctx)
	require.NoError(t, err)
	require.True(t, cfg.Configured)
	require.Equal(t, "orders", cfg.Queue)
	require.Equal(t, "billing", cfg.Namespace)

	q := tb.c.Queue("orders").Partition("user-1")
	res, err := q.Push(ctx, client.PushItem{Payload: map[string]int{"n": 1}, TransactionID: "o-1"}, client.Payload(map[string]int{"n": 2}))
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.Equal(t, client.PushQueued, res[0].Status)
	require.Equal(t, "o-1", res[0].TransactionID)
	require.NotEmpty(t, res[1].TransactionID, "the SDK generated an idempotency key")

	dup, err := q.Push(ctx, client.PushItem{Payload: 1, TransactionID: "o-1"})
	require.NoError(t, err)
	require.Equal(t, client.PushDuplicate, dup[0].Status)

	msgs, err := q.Pop(ctx, client.PopOptions{Batch: 10})
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Equal(t, "o-1", msgs[0].TransactionID)
	require.Equal(t, "user-1", msgs[0].Partition)
	require.Equal(t, "orders", msgs[0].Queue)
	require.Equal(t, client.QueueMode, msgs[0].ConsumerGroup)
	require.NotEmpty(t, msgs[0].LeaseID)
	require.WithinDuration(t, time.Now(), msgs[0].CreatedAt, time.Minute)
	var v struct{ N int }
	require.NoError(t, msgs[1].Decode(&v))
	require.Equal(t, 2, v.N)

	r, err := tb.c.Ack(ctx, client.Completed(msgs[0]))
	require.NoError(t, err)
	require.True(t, r.Success)
	rs, err := tb.c.AckBatch(ctx, []client.Ack{client.Completed(msgs[1])})
	require.NoError(t, err)
	require.NoError(t, rs[0].Err())
	require.True(t, rs[0].LeaseReleased)

	// Repeating the completion under the delivering lease is a harmless no-op.
	r, err = tb.c.Ack(ctx, client.Completed(msgs[1]))
	require.NoError(t, err)
	require.True(t, r.Noop)

	msgs, err = q.Pop(ctx, client.PopOptions{Wait: true, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, msgs, "an empty long poll is (nil, nil), not an error")
}

func TestBrokerAckRejectionsAreReportedPerItem(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("rej")
	_, err := q.Push(ctx, client.Payloads(1, 2)...)
	require.NoError(t, err)
	msgs, err := q.Pop(ctx, client.PopOptions{Batch: 2})
	require.NoError(t, err)
	require.Len(t, msgs, 2)

	bad := client.Completed(msgs[0])
	bad.LeaseID = "019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1"
	unknown := client.Completed(msgs[1])
	unknown.TransactionID = "never-pushed"
	res, err := tb.c.AckBatch(ctx, []client.Ack{bad, unknown, client.Completed(msgs[0])})
	require.NoError(t, err)
	require.Len(t, res, 3)
	var ae *client.AckError
	require.ErrorAs(t, res[0].Err(), &ae)
	require.Equal(t, "invalid or expired lease", ae.Reason)
	require.Equal(t, msgs[0].TransactionID, ae.TransactionID)
	require.ErrorAs(t, res[1].Err(), &ae)
	require.Contains(t, ae.Reason, "unresolvable")
	require.NoError(t, res[2].Err())

	_, err = tb.c.Ack(ctx, bad)
	require.ErrorAs(t, err, &ae)
}

func TestBrokerFailedAckRedelivers(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("retry")
	_, err := q.Push(ctx, client.PushItem{Payload: 1, TransactionID: "r-1"})
	require.NoError(t, err)

	var deliveries []client.Message // one worker: no lock needed, read after Consume returns
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = q.Consume(cctx, func(_ context.Context, m client.Message) error {
		deliveries = append(deliveries, m)
		if len(deliveries) == 1 {
			return fmt.Errorf("transient")
		}
		cancel()
		return nil
	}, client.ConsumeOptions{PollTimeout: time.Second})
	require.NoError(t, err)
	require.Len(t, deliveries, 2, "a failed ack redelivers the message")
	require.Equal(t, "r-1", deliveries[1].TransactionID)
	require.Zero(t, deliveries[0].RetryCount)
	require.Equal(t, 1, deliveries[1].RetryCount, "delivered and failed once before")

	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "the successful retry was acknowledged")
}

func TestBrokerFanOutGroups(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("events").Push(ctx, client.Payloads(1, 2, 3)...)
	require.NoError(t, err)

	for _, g := range []string{"analytics", "audit"} {
		q := tb.c.Queue("events").Group(g)
		msgs, err := q.Pop(ctx, client.PopOptions{Batch: 10})
		require.NoError(t, err)
		require.Len(t, msgs, 3, "group %s sees every message", g)
		require.Equal(t, g, msgs[0].ConsumerGroup)
		acks := make([]client.Ack, len(msgs))
		for i, m := range msgs {
			acks[i] = client.Completed(m)
		}
		res, err := tb.c.AckBatch(ctx, acks)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err())
		}
		msgs, err = q.Pop(ctx, client.PopOptions{})
		require.NoError(t, err)
		require.Empty(t, msgs)
	}
	// Queue mode is its own cursor.
	msgs, err := tb.c.Queue("events").Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true})
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	require.Empty(t, msgs[0].LeaseID, "autoAck takes no lease")
	msgs, err = tb.c.Queue("events").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "autoAck advanced the cursor")
}

func TestBrokerProducerBuffersAndFlushes(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	p := tb.c.Queue("bulk").Partition("p").Producer(client.ProducerOptions{BatchSize: 64, FlushInterval: 10 * time.Millisecond})
	for i := range 1000 {
		require.NoError(t, p.Add(ctx, client.Payload(i)))
	}
	require.NoError(t, p.Close(ctx))

	var got []int
	for len(got) < 1000 {
		msgs, err := tb.c.Queue("bulk").Partition("p").Pop(ctx, client.PopOptions{Batch: 500, AutoAck: true})
		require.NoError(t, err)
		require.NotEmpty(t, msgs)
		for _, m := range msgs {
			var n int
			require.NoError(t, m.Decode(&n))
			got = append(got, n)
		}
	}
	for i, n := range got {
		require.Equal(t, i, n, "one partition keeps push order")
	}
}

func TestBrokerConsume10kExactlyOnce(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	const total, partitions = 10_000, 16
	q := tb.c.Queue("bulk10k")
	var wg sync.WaitGroup
	errs := make(chan error, partitions)
	for p := range partitions {
		wg.Go(func() {
			items := make([]client.PushItem, 0, total/partitions)
			for i := p; i < total; i += partitions {
				items = append(items, client.PushItem{Payload: i, TransactionID: fmt.Sprintf("tx-%05d", i)})
			}
			for len(items) > 0 {
				n := min(len(items), 250)
				if _, err := q.Partition(fmt.Sprintf("p%02d", p)).Push(ctx, items[:n]...); err != nil {
					errs <- err
					return
				}
				items = items[n:]
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	var (
		mu       sync.Mutex
		seen     = make(map[string]int, total)
		dups     atomic.Int32
		rejected atomic.Int32
		done     atomic.Int32
	)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	err := q.Consume(cctx, func(hctx context.Context, m client.Message) error {
		mu.Lock()
		seen[m.TransactionID]++
		if seen[m.TransactionID] > 1 {
			dups.Add(1)
		}
		mu.Unlock()
		if _, err := tb.c.Ack(hctx, client.Completed(m)); err != nil {
			rejected.Add(1)
			return err
		}
		if done.Add(1) == total {
			cancel()
		}
		return nil
	}, client.ConsumeOptions{Concurrency: 8, Batch: 50, ManualAck: true, PollTimeout: 2 * time.Second})
	require.NoError(t, err)
	require.Equal(t, int32(total), done.Load(), "every message processed before the deadline")
	require.Zero(t, dups.Load(), "no redelivery")
	require.Zero(t, rejected.Load(), "no rejected ack")
	require.Len(t, seen, total)

	msgs, err := q.Pop(ctx, client.PopOptions{Batch: 10})
	require.NoError(t, err)
	require.Empty(t, msgs, "nothing left")
}

func TestBrokerConsumeGracefulStop(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("graceful")
	_, err := q.Push(ctx, client.Payloads(1, 2, 3, 4, 5)...)
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	var handled atomic.Int32
	err = q.Consume(cctx, func(context.Context, client.Message) error {
		if handled.Add(1) == 1 {
			cancel() // stop while the batch is in flight
		}
		time.Sleep(5 * time.Millisecond)
		return nil
	}, client.ConsumeOptions{Batch: 5, PollTimeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, int32(5), handled.Load(), "the received batch is finished")
	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "and acknowledged")
}

func TestBrokerUnknownRouteAndTerminalErrors(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	// A trace id that is not a UUID is a 400: terminal, no retry.
	_, err := tb.c.Queue("x").Push(ctx, client.PushItem{Payload: 1, TraceID: "not-a-uuid"})
	require.True(t, client.IsTerminal(err), "%v", err)
	require.Equal(t, 400, client.HTTPStatus(err))
}

func TestBrokerTransactionAtomicPipeline(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("in").Push(ctx, client.PushItem{Payload: 21, TransactionID: "in-1"})
	require.NoError(t, err)
	msgs, err := tb.c.Queue("in").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)

	res, err := tb.c.Transaction().
		Ack(msgs[0]).
		Queue("out").Partition("p").Push(client.PushItem{Payload: 42, TransactionID: "out-1"}).
		Commit(ctx)
	require.NoError(t, err)
	require.True(t, res.Success)
	require.NotEmpty(t, res.TransactionID)

	out, err := tb.c.Queue("out").Pop(ctx, client.PopOptions{AutoAck: true})
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "out-1", out[0].TransactionID)
	in, err := tb.c.Queue("in").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, in, "the input was acknowledged in the same transaction")

	// A duplicate push rolls everything back: QDUP, and the ack is not applied either.
	_, err = tb.c.Queue("in").Push(ctx, client.PushItem{Payload: 1, TransactionID: "in-2"})
	require.NoError(t, err)
	msgs, err = tb.c.Queue("in").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	_, err = tb.c.Transaction().Ack(msgs[0]).Queue("out").Partition("p").Push(client.PushItem{Payload: 1, TransactionID: "out-1"}).Commit(ctx)
	var te *client.TransactionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "QDUP", te.Code)

	// A rejected ack (wrong lease): QTXN.
	bad := client.Completed(msgs[0])
	bad.LeaseID = "019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1"
	_, err = tb.c.Transaction().AckWith(bad).Queue("out").Push(client.Payload(2)).Commit(ctx)
	require.ErrorAs(t, err, &te)
	require.Equal(t, "QTXN", te.Code)

	// The original lease is still good: nothing above moved the cursor.
	_, err = tb.c.Ack(ctx, client.Completed(msgs[0]))
	require.NoError(t, err)
}

func TestBrokerExtendLease(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("lease")
	_, err := q.Config(client.QueueOptions{LeaseTime: client.Int(60)}).Create(ctx)
	require.NoError(t, err)
	_, err = q.Push(ctx, client.Payload(1))
	require.NoError(t, err)
	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)

	r, err := tb.c.ExtendLease(ctx, msgs[0].LeaseID, 10*time.Minute)
	require.NoError(t, err)
	require.True(t, r.Success)
	require.WithinDuration(t, time.Now().Add(10*time.Minute), r.ExpiresAt, time.Minute)

	_, err = tb.c.Ack(ctx, client.Completed(msgs[0]))
	require.NoError(t, err)
	_, err = tb.c.ExtendLease(ctx, msgs[0].LeaseID, time.Minute)
	require.ErrorIs(t, err, client.ErrLeaseLost, "a lease released by its acks cannot be extended")
	_, err = tb.c.ExtendLease(ctx, "019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1", time.Minute)
	require.ErrorIs(t, err, client.ErrLeaseLost, "an unknown lease cannot be extended")
}

func TestBrokerConsumeRenewsLease(t *testing.T) {
	t.Parallel()
	// The broker decides by a frozen clock the handler advances, each time by less than a renewal
	// extends the lease (1 s, the least a renewal asks for), and only after a renewal at the current
	// reading: the renewals, not the passing of time, are what keep the lease. Renewals are held off
	// while the clock moves, so none straddles an advance.
	clk := testenv.NewClock()
	clk.Freeze()
	url := testenv.StartBrokerWith(t, map[string]string{"FILE_BUFFER_DIR": t.TempDir()}, broker.Options{Clock: clk.Now}).URL
	rt := &renewals{base: http.DefaultTransport, done: make(chan struct{}, 1)}
	c, err := client.New(client.Config{URLs: []string{url}, RetryDelay: 50 * time.Millisecond, HTTPClient: &http.Client{Transport: rt}})
	require.NoError(t, err)
	ctx := t.Context()
	q := c.Queue("slow")
	_, err = q.Config(client.QueueOptions{LeaseTime: client.Int(1)}).Create(ctx)
	require.NoError(t, err)
	_, err = q.Push(ctx, client.Payload(1))
	require.NoError(t, err)

	var calls atomic.Int32
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = q.Consume(cctx, func(context.Context, client.Message) error {
		calls.Add(1)
		for range 3 { // 2.7 s on the broker's clock: well past the 1 s lease
			select {
			case <-rt.done:
			case <-time.After(15 * time.Second):
				return fmt.Errorf("no lease renewal within 15 s")
			}
			rt.mu.Lock()
			select {
			case <-rt.done: // a renewal at the same reading
			default:
			}
			clk.Advance(900 * time.Millisecond)
			rt.mu.Unlock()
		}
		cancel()
		return nil
	}, client.ConsumeOptions{LeaseRenewal: 50 * time.Millisecond, PollTimeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, int32(1), calls.Load())
	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "the renewed lease let the ack through")
}

// renewals sends the SDK's requests, each lease extension under mu, and signals done when one
// completed.
type renewals struct {
	base http.RoundTripper
	mu   sync.Mutex
	done chan struct{}
}

func (r *renewals) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/extend") {
		return r.base.RoundTrip(req)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, err := r.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusOK {
		select {
		case r.done <- struct{}{}:
		default:
		}
	}
	return resp, err
}

func TestBrokerDeadLetterQueue(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("dlq")
	_, err := q.Push(ctx, client.PushItem{Payload: map[string]string{"k": "v"}, TransactionID: "d-1"})
	require.NoError(t, err)
	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	r, err := tb.c.Ack(ctx, client.DeadLetter(msgs[0], "poison"))
	require.NoError(t, err)
	require.True(t, r.DLQ)

	page, err := tb.c.DLQ(ctx, client.DLQFilter{Queue: "dlq", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 1, page.Total)
	require.Len(t, page.Messages, 1)
	dl := page.Messages[0]
	require.Equal(t, "d-1", dl.TransactionID)
	require.Equal(t, "poison", dl.ErrorMessage)
	require.JSONEq(t, `{"k":"v"}`, string(dl.Data))

	one, err := tb.c.DLQMessage(ctx, dl.PartitionID, dl.TransactionID)
	require.NoError(t, err)
	require.Equal(t, "d-1", one.TransactionID)

	require.NoError(t, tb.c.RetryDLQMessage(ctx, dl.PartitionID, dl.TransactionID))
	again, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, again, 1, "a retried dead letter is delivered again")
	require.Equal(t, "d-1", again[0].TransactionID)
	r, err = tb.c.Ack(ctx, client.DeadLetter(again[0], "still poison"))
	require.NoError(t, err)
	require.True(t, r.DLQ)

	require.NoError(t, tb.c.DeleteDLQMessage(ctx, dl.PartitionID, dl.TransactionID))
	_, err = tb.c.DLQMessage(ctx, dl.PartitionID, dl.TransactionID)
	require.True(t, client.IsNotFound(err), "%v", err)
	err = tb.c.DeleteDLQMessage(ctx, dl.PartitionID, dl.TransactionID)
	require.True(t, client.IsNotFound(err), "%v", err)
}

func TestBrokerConsumerGroupsAdmin(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("cg")
	_, err := q.Push(ctx, client.Payloads(1, 2, 3)...)
	require.NoError(t, err)
	msgs, err := q.Group("workers").Pop(ctx, client.PopOptions{Batch: 3})
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	res, err := tb.c.AckBatch(ctx, []client.Ack{client.Completed(msgs[0]), client.Completed(msgs[1]), client.Completed(msgs[2])})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err())
	}

	groups, err := tb.c.ConsumerGroups(ctx)
	require.NoError(t, err)
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	require.Contains(t, names, "workers")

	detail, err := tb.c.ConsumerGroup("workers").Get(ctx)
	require.NoError(t, err)
	require.Contains(t, detail, "cg")

	_, err = tb.c.LaggingPartitions(ctx, time.Hour)
	require.NoError(t, err)

	// Replay: seek to before everything and the group sees the messages again.
	sr, err := tb.c.ConsumerGroup("workers").SeekTo(ctx, "cg", time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.True(t, sr.Success)
	require.Equal(t, 1, sr.PartitionsUpdated)
	again, err := q.Group("workers").Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true})
	require.NoError(t, err)
	require.Len(t, again, 3)

	_, err = q.Push(ctx, client.Payloads(4, 5)...)
	require.NoError(t, err)
	sr, err = tb.c.ConsumerGroup("workers").SeekToEnd(ctx, "cg")
	require.NoError(t, err)
	require.True(t, sr.SeekToEnd)
	none, err := q.Group("workers").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, none, "seek to end skips the backlog")

	_, err = q.Push(ctx, client.Payload(6))
	require.NoError(t, err)
	ps, err := tb.c.ConsumerGroup("workers").SeekPartitionToEnd(ctx, "cg", "Default")
	require.NoError(t, err)
	require.True(t, ps.Success)
	none, err = q.Group("workers").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, none)

	su, err := tb.c.ConsumerGroup("workers").SetSubscription(ctx, time.Now())
	require.NoError(t, err)
	require.True(t, su.Success)

	// The group also consumes a second queue, so deleting it on "cg" leaves it alive elsewhere.
	_, err = tb.c.Queue("cg2").Push(ctx, client.Payload(1))
	require.NoError(t, err)
	_, err = tb.c.Queue("cg2").Group("workers").Pop(ctx, client.PopOptions{AutoAck: true})
	require.NoError(t, err)
	del, err := tb.c.ConsumerGroup("workers").DeleteForQueue(ctx, "cg", true)
	require.NoError(t, err)
	require.True(t, del.Success)
	require.Equal(t, "cg", del.QueueName)
	detail, err = tb.c.ConsumerGroup("workers").Get(ctx)
	require.NoError(t, err)
	require.NotContains(t, detail, "cg")
	require.Contains(t, detail, "cg2")
	del, err = tb.c.ConsumerGroup("workers").Delete(ctx, true)
	require.NoError(t, err)
	require.True(t, del.Success)
	_, err = tb.c.ConsumerGroup("workers").Delete(ctx, true)
	require.True(t, client.IsNotFound(err), "an unknown group is a 404: %v", err)
}

func TestBrokerSubscriptionModes(t *testing.T) {
	t.Parallel()
	tb, clk := setupClock(t)
	ctx := t.Context()
	q := tb.c.Queue("subs")
	_, err := q.Push(ctx, client.Payloads("old-1", "old-2")...)
	require.NoError(t, err)

	none, err := q.Group("fresh").SubscriptionMode(client.SubscribeNew).Pop(ctx, client.PopOptions{Batch: 10})
	require.NoError(t, err)
	require.Empty(t, none, "mode new skips history")
	none, err = q.Group("fresh2").SubscriptionFromNow().Pop(ctx, client.PopOptions{Batch: 10})
	require.NoError(t, err)
	require.Empty(t, none, "subscriptionFrom=now skips history")

	all, err := q.Group("history").SubscriptionMode(client.SubscribeAll).Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true})
	require.NoError(t, err)
	require.Len(t, all, 2)

	cut := clk.Now()
	clk.Advance(time.Second) // createdAt is the broker's clock: the push comes clearly after the cut
	_, err = q.Push(ctx, client.Payload("new-1"))
	require.NoError(t, err)
	since, err := q.Group("since").SubscriptionFrom(cut).Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true})
	require.NoError(t, err)
	require.Len(t, since, 1, "subscriptionFrom starts after the timestamp")
	got, err := q.Group("fresh").Pop(ctx, client.PopOptions{Batch: 10, AutoAck: true})
	require.NoError(t, err)
	require.Len(t, got, 1)
	var s string
	require.NoError(t, got[0].Decode(&s))
	require.Equal(t, "new-1", s)
}

func TestBrokerDeleteQueue(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("gone").Push(ctx, client.Payloads(1, 2)...)
	require.NoError(t, err)
	existed, err := tb.c.Queue("gone").Delete(ctx)
	require.NoError(t, err)
	require.True(t, existed)
	msgs, err := tb.c.Queue("gone").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "the messages went with the queue")
	existed, err = tb.c.Queue("gone").Delete(ctx)
	require.NoError(t, err)
	require.False(t, existed)
}

func TestBrokerQueueResources(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("res").Namespace("ns").Task("tk").Create(ctx)
	require.NoError(t, err)
	_, err = tb.c.Queue("res").Partition("a").Push(ctx, client.Payloads(1, 2)...)
	require.NoError(t, err)

	qs, err := tb.c.Queues(ctx)
	require.NoError(t, err)
	var found bool
	for _, q := range qs {
		if q.Name == "res" {
			found = true
			require.Equal(t, "ns", q.Namespace)
		}
	}
	require.True(t, found)

	info, err := tb.c.Queue("res").Info(ctx)
	require.NoError(t, err)
	require.Equal(t, "res", info.Name)
	var names []string
	for _, p := range info.Partitions {
		names = append(names, p.Name)
	}
	require.Contains(t, names, "a")

	_, err = tb.c.Queue("nope").Info(ctx)
	require.True(t, client.IsNotFound(err), "%v", err)

	existed, err := tb.c.Queue("res").Delete(ctx)
	require.NoError(t, err)
	require.True(t, existed)
	_, err = tb.c.Queue("res").Info(ctx)
	require.True(t, client.IsNotFound(err))
}

func TestBrokerStatus(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("st").Push(ctx, client.Payload(1))
	require.NoError(t, err)

	h, err := tb.c.Health(ctx)
	require.NoError(t, err)
	require.True(t, json.Valid(h))

	for name, call := range map[string]func() (json.RawMessage, error){
		"status":          func() (json.RawMessage, error) { return tb.c.Status(ctx, client.StatusFilter{Queue: "st"}) },
		"status/queues":   func() (json.RawMessage, error) { return tb.c.StatusQueues(ctx) },
		"status/queue":    func() (json.RawMessage, error) { return tb.c.StatusQueue(ctx, "st") },
		"status/messages": func() (json.RawMessage, error) { return tb.c.StatusQueueMessages(ctx, "st", 10, 0) },
	} {
		raw, err := call()
		require.NoError(t, err, name)
		require.True(t, json.Valid(raw), name)
	}
	raw, err := tb.c.GetRaw(ctx, "/api/v1/status/buffers", nil)
	require.NoError(t, err)
	require.True(t, json.Valid(raw))
	_, err = tb.c.StatusQueue(ctx, "missing")
	require.True(t, client.IsNotFound(err), "%v", err)
}

func TestBrokerPopByNamespaceAndTask(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	_, err := tb.c.Queue("low").Namespace("shop").Task("mail").Config(client.QueueOptions{Priority: client.Int(1)}).Create(ctx)
	require.NoError(t, err)
	_, err = tb.c.Queue("high").Namespace("shop").Task("mail").Config(client.QueueOptions{Priority: client.Int(9)}).Create(ctx)
	require.NoError(t, err)
	_, err = tb.c.Queue("other").Namespace("bank").Create(ctx)
	require.NoError(t, err)
	for _, q := range []string{"low", "high", "other"} {
		_, err = tb.c.Queue(q).Push(ctx, client.Payload(q))
		require.NoError(t, err)
	}

	msgs, err := tb.c.Matching("shop", "").Pop(ctx, client.PopOptions{AutoAck: true})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "high", msgs[0].Queue, "highest priority first")
	msgs, err = tb.c.Matching("", "mail").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "low", msgs[0].Queue)
	_, err = tb.c.Ack(ctx, client.Completed(msgs[0]))
	require.NoError(t, err)
	msgs, err = tb.c.Matching("shop", "mail").Pop(ctx, client.PopOptions{Wait: true, Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, msgs, "the bank queue is not matched")

	_, err = tb.c.Matching("shop", "").Push(ctx, client.Payload(1))
	require.Error(t, err)
}

func TestBrokerMaintenance(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()

	st, err := tb.c.Maintenance(ctx)
	require.NoError(t, err)
	require.False(t, st.MaintenanceMode)
	st, err = tb.c.SetMaintenance(ctx, true)
	require.NoError(t, err)
	require.True(t, st.MaintenanceMode)
	res, err := tb.c.Queue("mq").Push(ctx, client.Payload(1))
	require.NoError(t, err)
	require.Equal(t, client.PushBuffered, res[0].Status)
	_, err = tb.c.SetMaintenance(ctx, false)
	require.NoError(t, err)

	pm, err := tb.c.SetPopMaintenance(ctx, true)
	require.NoError(t, err)
	require.True(t, pm.PopMaintenanceMode)
	pm, err = tb.c.PopMaintenance(ctx)
	require.NoError(t, err)
	require.True(t, pm.PopMaintenanceMode)
	msgs, err := tb.c.Queue("mq").Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "pop maintenance answers 204")
	_, err = tb.c.SetPopMaintenance(ctx, false)
	require.NoError(t, err)

	// The buffered push is replayed once the spool drains.
	require.Eventually(t, func() bool {
		msgs, err := tb.c.Queue("mq").Pop(ctx, client.PopOptions{AutoAck: true})
		return err == nil && len(msgs) == 1
	}, 30*time.Second, 100*time.Millisecond)
}

func TestBrokerConsumePoisonMessageIsDeadLetteredAndRestContinues(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := t.Context()
	q := tb.c.Queue("poison")
	_, err := q.Config(client.QueueOptions{RetryLimit: client.Int(1), RetryDelay: client.Int(10)}).Create(ctx)
	require.NoError(t, err)
	_, err = q.Push(ctx,
		client.PushItem{Payload: 1, TransactionID: "a"},
		client.PushItem{Payload: 2, TransactionID: "b"},
		client.PushItem{Payload: 3, TransactionID: "c"})
	require.NoError(t, err)

	var seen []string // one worker: read after Consume returns
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = q.Consume(cctx, func(_ context.Context, m client.Message) error {
		seen = append(seen, m.TransactionID)
		if m.TransactionID == "b" {
			return fmt.Errorf("poison")
		}
		if m.TransactionID == "c" {
			cancel()
		}
		return nil
	}, client.ConsumeOptions{Batch: 10, PollTimeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "b", "c"}, seen, "b is retried once, dead-lettered, then c is processed")

	page, err := tb.c.DLQ(ctx, client.DLQFilter{Queue: "poison"})
	require.NoError(t, err)
	require.Len(t, page.Messages, 1)
	require.Equal(t, "b", page.Messages[0].TransactionID)
	require.Equal(t, "poison", page.Messages[0].ErrorMessage)
	msgs, err := q.Pop(ctx, client.PopOptions{})
	require.NoError(t, err)
	require.Empty(t, msgs, "c was acknowledged and the lease released")
}
