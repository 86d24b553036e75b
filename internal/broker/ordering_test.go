package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func post(t require.TestingT, url string, body any) (int, []byte) {
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestSlowPushNeverSkippedOrReordered races pushes whose transactions are held open against fast
// pushes into the same partition while a consumer group reads it. The consumer must see every message
// exactly once, in the order they are stored (docs/decisions.md "Ordering"): a slow push that commits
// late must not land behind a cursor that already moved on.
func TestSlowPushNeverSkippedOrReordered(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := testenv.StartBroker(t, nil)
	st, err := store.Open(ctx, store.Options{URL: b.DatabaseURL, Schema: "queenmq"})
	require.NoError(t, err)
	defer st.Close()
	ids, err := st.EnsurePartitions(ctx, []store.PartitionKey{{Queue: "race", Partition: "p"}})
	require.NoError(t, err)
	pid := ids[store.PartitionKey{Queue: "race", Partition: "p"}]

	// waits reports the sessions of the broker's database waiting for a lock: fast pushes queued
	// behind the slow transaction's partition lock.
	watch, err := pgx.Connect(ctx, b.DatabaseURL)
	require.NoError(t, err)
	defer watch.Close(context.WithoutCancel(ctx))
	waits := func(c *assert.CollectT) (n int) {
		assert.NoError(c, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}

	const rounds, fastPerRound, slowPerRound = 15, 4, 2
	total := rounds * (fastPerRound + slowPerRound)

	var got []string
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for len(got) < total && ctx.Err() == nil {
			resp, err := http.Get(b.URL + "/api/v1/pop/queue/race?consumerGroup=g&batch=7&wait=true&timeout=1000")
			if err != nil {
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				continue
			}
			var res struct {
				Messages []struct {
					ID, TransactionID, PartitionID, LeaseID string
				} `json:"messages"`
			}
			if json.Unmarshal(body, &res) != nil {
				return
			}
			acks := []map[string]any{}
			for _, m := range res.Messages {
				got = append(got, m.ID)
				acks = append(acks, map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID})
			}
			// Ack only the last: the cursor moves over the whole batch at once.
			if _, out := post(t, b.URL+"/api/v1/ack/batch", map[string]any{"consumerGroup": "g", "acknowledgments": acks[len(acks)-1:]}); !bytes.Contains(out, []byte(`"success":true`)) {
				t.Errorf("ack refused: %s", out)
				return
			}
		}
	}()

	for r := range rounds {
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		rows := make([]store.PushRow, slowPerRound)
		for k := range rows {
			rows[k] = store.PushRow{PartitionID: pid, TransactionID: fmt.Sprintf("slow-%d-%d", r, k),
				ID: uuid.Must(uuid.NewV7()), Payload: []byte(`"slow"`)}
		}
		_, err = tx.Push(ctx, rows)
		require.NoError(t, err)

		var wg sync.WaitGroup
		for f := range fastPerRound {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out := post(t, b.URL+"/api/v1/push", map[string]any{"items": []map[string]any{
					{"queue": "race", "partition": "p", "payload": "fast", "transactionId": fmt.Sprintf("fast-%d-%d", r, f)}}})
				if code != http.StatusCreated {
					t.Errorf("push: %d %s", code, out)
				}
			}()
		}
		// Hold the slow transaction open until a fast push waits behind it.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Positive(c, waits(c), "sessions waiting on a lock")
		}, 15*time.Second, time.Millisecond, "no fast push reached the partition lock")
		require.NoError(t, tx.Commit(ctx))
		wg.Wait()
	}

	select {
	case <-consumerDone:
	case <-time.After(2 * time.Minute):
		t.Fatalf("consumer saw %d of %d messages", len(got), total)
	}
	require.Len(t, got, total)

	// The consumer's order must be the stored order, with nothing missing.
	conn, err := pgx.Connect(ctx, b.DatabaseURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT id::text FROM queenmq.messages WHERE partition_id = $1 ORDER BY seq", pid)
	require.NoError(t, err)
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, stored, got)
}
