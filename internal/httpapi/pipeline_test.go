package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestPipelineExactlyOnceThroughTransactions runs three stages, each consuming its input queue and, per
// message, acknowledging the input and pushing the output in one transaction. Every stage has a
// consumer killed mid-batch (its context cancelled, in-flight requests included) at least once. The
// outputs get fresh transaction ids, so a message processed twice would show up twice in the sink.
func TestPipelineExactlyOnceThroughTransactions(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "200"}).rb
	a := newAPI(t, b.URL)
	const partitions, stages, workers = 10, 3, 3
	// Under -race every transaction costs the shared CPU about 4 ms: CI (-short) runs fewer messages
	// through the same kills.
	total := 5000
	if testing.Short() {
		total = 2000
	}
	queues := []string{"pipe-0", "pipe-1", "pipe-2", "pipe-sink"}
	for _, q := range queues {
		// The stages' short lease is the scenario (killed consumers redeliver quickly); the sink is the
		// observer and must not redeliver on its own when a loaded machine delays its ack.
		lease := 2
		if q == "pipe-sink" {
			lease = 120
		}
		st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": q, "options": map[string]any{"leaseTime": lease}})
		require.Equal(t, http.StatusOK, st, string(body))
	}
	for n := 0; n < total; n += 500 {
		items := make([]pushItem, 500)
		for k := range items {
			items[k] = pushItem{Queue: queues[0], Partition: fmt.Sprint("p", (n+k)%partitions), Payload: map[string]int{"origin": n + k}}
		}
		a.push(items...)
	}

	hc := &http.Client{Timeout: 30 * time.Second}
	send := func(ctx context.Context, method, url string, body any) (int, []byte, error) {
		var rd io.Reader
		if body != nil {
			buf, _ := json.Marshal(body)
			rd = bytes.NewReader(buf)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, rd)
		if err != nil {
			return 0, nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		return resp.StatusCode, out, err
	}

	var processed [stages]atomic.Int64
	var kills [stages]atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for s := range stages {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				killed := false
				for {
					select {
					case <-done:
						return
					default:
					}
					// Every worker's first batch dies half-way: with the context cancelled between
					// transactions (even workers) or in the middle of one (odd workers).
					ctx, cancel := context.WithCancel(t.Context())
					code, body, err := send(ctx, "GET", fmt.Sprintf("%s/api/v1/pop/queue/%s?batch=10&wait=true&timeout=500", b.URL, queues[s]), nil)
					if err != nil || code == http.StatusNoContent {
						cancel()
						continue
					}
					if code != http.StatusOK {
						t.Errorf("pop %s: %d %s", queues[s], code, body)
						cancel()
						return
					}
					var res popResult
					if err := json.Unmarshal(body, &res); err != nil {
						t.Errorf("pop body: %v", err)
						cancel()
						return
					}
					killAt := -1
					if !killed && len(res.Messages) > 2 {
						killed, killAt = true, len(res.Messages)/2
					}
					for i, m := range res.Messages {
						if i == killAt {
							kills[s].Add(1)
							if w%2 == 1 {
								// Killed while the transaction is in flight: it may or may not commit.
								go func() { time.Sleep(time.Millisecond); cancel() }()
							} else {
								cancel()
							}
						}
						op := map[string]any{"operations": []map[string]any{
							{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": "completed"},
							{"type": "push", "items": []map[string]any{{"queue": queues[s+1], "partition": m.Partition,
								"payload": json.RawMessage(m.Data), "transactionId": uuid.NewString()}}},
						}}
						code, body, err := send(ctx, "POST", b.URL+"/api/v1/transaction", op)
						if err != nil {
							break // killed: the rest of the batch redelivers when the lease expires
						}
						if code != http.StatusOK {
							t.Errorf("transaction: %d %s", code, body)
							break
						}
						var tr struct {
							Success bool   `json:"success"`
							Error   string `json:"error"`
						}
						_ = json.Unmarshal(body, &tr)
						if !tr.Success {
							break // e.g. the lease expired under a slow consumer: nothing applied
						}
						processed[s].Add(1)
					}
					cancel()
				}
			}()
		}
	}

	// The sink is complete when every origin arrived; then stop the stages.
	// A sink message counts once its ack succeeded: one whose ack failed comes back and is counted then.
	seen := map[int]int{}
	sink := func(res *popResult) {
		for i, r := range a.ackAll("", res.Messages, "completed") {
			if !r.Success {
				continue
			}
			var p struct {
				Origin int `json:"origin"`
			}
			require.NoError(t, json.Unmarshal(res.Messages[i].Data, &p))
			seen[p.Origin]++
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for len(seen) < total && time.Now().Before(deadline) {
		if res := a.pop("/api/v1/pop/queue/pipe-sink?batch=200&partitions=10&wait=true&timeout=1000"); res != nil {
			sink(res)
		}
	}
	close(done)
	wg.Wait()
	require.Len(t, seen, total, "sink incomplete")
	// Anything arriving late would be a duplicate.
	for {
		res := a.pop("/api/v1/pop/queue/pipe-sink?batch=200&partitions=10")
		if res == nil {
			break
		}
		sink(res)
	}
	for origin, n := range seen {
		require.Equal(t, 1, n, "origin %d reached the sink %d times", origin, n)
	}
	for s := range stages {
		require.Positive(t, kills[s].Load(), "stage %d never had a consumer killed", s)
		require.GreaterOrEqual(t, processed[s].Load(), int64(total-workers*10), "stage %d", s)
	}
}
