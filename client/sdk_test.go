package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func msg(tx string) Message {
	return Message{TransactionID: tx, PartitionID: "p1", LeaseID: "L", ConsumerGroup: "g"}
}

func TestAckResultsAreCheckedByIndex(t *testing.T) {
	t.Parallel()
	acks := []Ack{Completed(msg("a")), Failed(msg("b"), "boom")}
	cases := map[string]string{
		"too few":      `[{"index":0,"transactionId":"a","success":true}]`,
		"too many":     `[{"index":0,"transactionId":"a","success":true},{"index":1,"transactionId":"b","success":true},{"index":2,"transactionId":"c","success":true}]`,
		"misaligned":   `[{"index":1,"transactionId":"b","success":true},{"index":0,"transactionId":"a","success":false}]`,
		"merged index": `[{"index":7,"transactionId":"a","success":true},{"index":8,"transactionId":"b","success":true}]`,
		"wrong tx":     `[{"index":0,"transactionId":"a","success":true},{"index":1,"transactionId":"zzz","success":true}]`,
		"not an array": `{"success":true}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, step{status: 200, body: body})
			c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
			res, err := c.AckBatch(t.Context(), acks)
			require.ErrorIs(t, err, ErrMalformedResponse)
			require.Nil(t, res)
		})
	}
}

func TestAckBatchWire(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 200, body: `[
		{"index":0,"transactionId":"a","success":true,"error":null,"leaseReleased":false,"dlq":false,"noop":false},
		{"index":1,"transactionId":"b","success":false,"error":"invalid or expired lease","leaseReleased":false,"dlq":false,"noop":false}]`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	res, err := c.AckBatch(t.Context(), []Ack{Completed(msg("a")), Failed(msg("b"), "boom")})
	require.NoError(t, err)
	require.NoError(t, res[0].Err())
	var ae *AckError
	require.ErrorAs(t, res[1].Err(), &ae)
	require.Equal(t, "b", ae.TransactionID)
	require.Equal(t, "invalid or expired lease", ae.Reason)

	r := srv.requests()[0]
	require.Equal(t, "/api/v1/ack/batch", r.path)
	require.JSONEq(t, `{"consumerGroup":"g","acknowledgments":[
		{"transactionId":"a","partitionId":"p1","leaseId":"L","status":"completed"},
		{"transactionId":"b","partitionId":"p1","leaseId":"L","status":"failed","error":"boom"}]}`, string(r.body))

	_, err = c.AckBatch(t.Context(), []Ack{Completed(msg("a")), Completed(Message{TransactionID: "x", PartitionID: "p", ConsumerGroup: "other"})})
	require.Error(t, err, "mixed groups are refused client-side")
}

func TestSingleAckRejection(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 200, body: `[{"index":0,"transactionId":"a","success":false,"error":"already committed: the cursor moved past this message before this ack"}]`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	res, err := c.Ack(t.Context(), Completed(msg("a")))
	var ae *AckError
	require.ErrorAs(t, err, &ae)
	require.False(t, res.Success)
	require.Contains(t, ae.Reason, "already committed")

	noop := newScripted(t, step{status: 200, body: `[{"index":0,"transactionId":"a","success":true,"noop":true}]`})
	c2, _ := newTestClient(t, Config{}, 0.5, noop.URL)
	res, err = c2.Ack(t.Context(), Completed(msg("a")))
	require.NoError(t, err)
	require.True(t, res.Noop)
}

func TestPushResultsAreChecked(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 201, body: `[{"index":0,"status":"queued"},{"index":0,"status":"queued"}]`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	_, err := c.Queue("q").Push(t.Context(), Payloads(1, 2)...)
	require.ErrorIs(t, err, ErrMalformedResponse)

	srv2 := newScripted(t, step{status: 201, body: `[{"index":0,"status":"queued"}]`})
	c2, _ := newTestClient(t, Config{}, 0.5, srv2.URL)
	_, err = c2.Queue("q").Push(t.Context(), Payloads(1, 2)...)
	require.ErrorIs(t, err, ErrMalformedResponse)
}

func TestTransactionRollbackIsAnError(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 200, body: `{"transactionId":"T","success":false,"error":"QDUP duplicate transactionId x in next/p","results":[]}`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	_, err := c.Transaction().Ack(msg("a")).Queue("next").Partition("p").Push(PushItem{Payload: 1, TransactionID: "x"}).Commit(t.Context())
	var te *TransactionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "QDUP", te.Code)
	require.Equal(t, "T", te.TransactionID)
	require.JSONEq(t, `{"operations":[
		{"type":"ack","transactionId":"a","partitionId":"p1","leaseId":"L","status":"completed","consumerGroup":"g"},
		{"type":"push","items":[{"queue":"next","partition":"p","payload":1,"transactionId":"x"}]}]}`, string(srv.requests()[0].body))

	ok := newScripted(t, step{status: 200, body: `{"transactionId":"T","success":true,"results":[{"index":0,"type":"ack","success":true}]}`})
	c2, _ := newTestClient(t, Config{}, 0.5, ok.URL)
	res, err := c2.Transaction().Ack(msg("a")).Commit(t.Context())
	require.NoError(t, err)
	require.True(t, res.Success)

	_, err = c2.Transaction().Commit(t.Context())
	require.Error(t, err)
}

func TestExtendLease(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 200, body: `[{"index":0,"leaseId":"L","success":true,"error":null,"expiresAt":"2026-04-26T11:04:28.267Z"}]`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	r, err := c.ExtendLease(t.Context(), "L", 1500*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 2026, r.ExpiresAt.Year())
	require.Equal(t, "/api/v1/lease/L/extend", srv.requests()[0].path)
	require.JSONEq(t, `{"seconds":2}`, string(srv.requests()[0].body))

	bad := newScripted(t, step{status: 200, body: `[{"index":0,"leaseId":"L","success":false,"error":"Lease already expired","expiresAt":null}]`})
	c2, _ := newTestClient(t, Config{}, 0.5, bad.URL)
	_, err = c2.ExtendLease(t.Context(), "L", time.Minute)
	require.ErrorContains(t, err, "Lease already expired")
}

// pushCounter is a fake broker push endpoint that counts items per request.
type pushCounter struct {
	mu      sync.Mutex
	batches []int
	txs     map[string]int
}

func (p *pushCounter) handler(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Items []wirePushItem `json:"items"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	p.mu.Lock()
	p.batches = append(p.batches, len(body.Items))
	for _, it := range body.Items {
		p.txs[it.TransactionID]++
	}
	p.mu.Unlock()
	out := make([]PushResult, len(body.Items))
	for i, it := range body.Items {
		out[i] = PushResult{Index: i, TransactionID: it.TransactionID, Status: PushQueued}
	}
	w.WriteHeader(201)
	_ = json.NewEncoder(w).Encode(out)
}

func (p *pushCounter) snapshot() ([]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.batches...), len(p.txs)
}

func TestProducerFlushesByCountTimeAndClose(t *testing.T) {
	t.Parallel()
	pc := &pushCounter{txs: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(pc.handler))
	t.Cleanup(srv.Close)
	c, err := New(Config{URLs: []string{srv.URL}})
	require.NoError(t, err)

	// By count: 25 items with BatchSize 10 and a long interval → two full batches, 5 buffered.
	p := c.Queue("q").Producer(ProducerOptions{BatchSize: 10, FlushInterval: time.Hour})
	for i := range 25 {
		require.NoError(t, p.Add(t.Context(), Payload(i)))
	}
	b, _ := pc.snapshot()
	require.Equal(t, []int{10, 10}, b)
	require.NoError(t, p.Close(t.Context()))
	b, n := pc.snapshot()
	require.Equal(t, []int{10, 10, 5}, b, "Close flushes the rest")
	require.Equal(t, 25, n, "every item got its own transaction id")
	require.ErrorIs(t, p.Add(t.Context(), Payload(1)), ErrClosed)

	// By time.
	p2 := c.Queue("q").Producer(ProducerOptions{BatchSize: 1000, FlushInterval: 5 * time.Millisecond})
	require.NoError(t, p2.Add(t.Context(), Payloads(1, 2, 3)...))
	require.Eventually(t, func() bool { _, n := pc.snapshot(); return n == 28 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, p2.Close(t.Context()))
}

func TestConsumeStopsOnTerminalError(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, step{status: 403, body: `{"error":"Insufficient permissions"}`})
	c, _ := newTestClient(t, Config{}, 0.5, srv.URL)
	err := c.Queue("q").Consume(t.Context(), func(context.Context, Message) error { return nil }, ConsumeOptions{Concurrency: 3})
	require.True(t, IsTerminal(err))
	require.Equal(t, 403, HTTPStatus(err))
}

// consumeFixture serves one pop of three messages (a, b, c) of one partition, then 204s, and
// records every ack batch. dlqOnFail makes a failed ack report that the message was dead-lettered.
func consumeFixture(t *testing.T, dlqOnFail bool) (*Client, func() [][]wireAck) {
	t.Helper()
	var (
		pops    atomic.Int32
		mu      sync.Mutex
		batches [][]wireAck
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/pop/queue/q":
			if pops.Add(1) > 1 {
				w.WriteHeader(204)
				return
			}
			_, _ = w.Write([]byte(`{"success":true,"leaseId":"L","messages":[
				{"id":"1","transactionId":"a","data":1,"partitionId":"p1","partition":"P","leaseId":"L","consumerGroup":"__QUEUE_MODE__","createdAt":"2026-04-26T10:59:28.267966Z"},
				{"id":"2","transactionId":"b","data":2,"partitionId":"p1","partition":"P","leaseId":"L","consumerGroup":"__QUEUE_MODE__","createdAt":"2026-04-26T10:59:28.267966Z"},
				{"id":"3","transactionId":"c","data":3,"partitionId":"p1","partition":"P","leaseId":"L","consumerGroup":"__QUEUE_MODE__","createdAt":"2026-04-26T10:59:28.267966Z"}]}`))
		case "/api/v1/ack/batch":
			var body struct {
				Acknowledgments []wireAck `json:"acknowledgments"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			batches = append(batches, body.Acknowledgments)
			mu.Unlock()
			out := make([]AckResult, len(body.Acknowledgments))
			for i, a := range body.Acknowledgments {
				out[i] = AckResult{Index: i, TransactionID: a.TransactionID, Success: true, DLQ: a.Status == "failed" && dlqOnFail}
			}
			_ = json.NewEncoder(w).Encode(out)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{URLs: []string{srv.URL}})
	require.NoError(t, err)
	return c, func() [][]wireAck { mu.Lock(); defer mu.Unlock(); return append([][]wireAck(nil), batches...) }
}

func consumeUntilPopsDrain(t *testing.T, c *Client, fail string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var seen []string
	err := c.Queue("q").Consume(ctx, func(_ context.Context, m Message) error {
		seen = append(seen, m.TransactionID)
		if m.TransactionID == fail {
			return errors.New("bad " + fail)
		}
		return nil
	}, ConsumeOptions{PollTimeout: 10 * time.Millisecond, ErrorBackoff: time.Millisecond})
	require.NoError(t, err, "a cancelled consumer stops cleanly")
	return seen
}

func TestConsumeStopsPartitionBatchAtRetriableFailure(t *testing.T) {
	t.Parallel()
	c, batches := consumeFixture(t, false)
	seen := consumeUntilPopsDrain(t, c, "b")
	require.Equal(t, []string{"a", "b"}, seen, "the rest of the batch is left to redeliver in order")
	got := batches()
	require.Len(t, got, 1, "the failure flushes the acks so far, in order")
	require.Len(t, got[0], 2)
	require.Equal(t, "completed", got[0][0].Status)
	require.Equal(t, "failed", got[0][1].Status)
	require.Equal(t, "bad b", *got[0][1].Error)
}

func TestConsumeContinuesAfterDeadLetteredFailure(t *testing.T) {
	t.Parallel()
	c, batches := consumeFixture(t, true)
	seen := consumeUntilPopsDrain(t, c, "b")
	require.Equal(t, []string{"a", "b", "c"}, seen, "b was dead-lettered, the cursor moved on, c is next")
	got := batches()
	require.Len(t, got, 2)
	require.Equal(t, "failed", got[0][1].Status)
	require.Equal(t, "c", got[1][0].TransactionID)
	require.Equal(t, "completed", got[1][0].Status)
}
