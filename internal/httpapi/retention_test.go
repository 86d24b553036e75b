package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetentionDeletesExactlyTheExpired ages some messages with SQL and lets the retention loop
// (100 ms interval) delete them; everything else stays.
func TestRetentionDeletesExactlyTheExpired(t *testing.T) {
	t.Parallel()
	rb := setup(t, map[string]string{"RETENTION_INTERVAL": "100", "STATS_INTERVAL_MS": "100"}).rb
	a := newAPI(t, rb.URL)
	db := openDB(t, rb.DatabaseURL)
	configure(t, a, map[string]any{"queue": "ret-age", "namespace": "billing", "task": "invoice", "options": map[string]any{"retentionEnabled": true, "retentionSeconds": 3600}})
	configure(t, a, map[string]any{"queue": "ret-done", "namespace": "billing", "task": "invoice", "options": map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 3600}})
	configure(t, a, map[string]any{"queue": "ret-off", "namespace": "billing", "task": "invoice", "options": map[string]any{"retentionSeconds": 60, "completedRetentionSeconds": 60}})
	for _, q := range []string{"ret-age", "ret-done", "ret-off"} {
		var items []pushItem
		for i := range 6 {
			items = append(items, pushItem{Queue: q, Payload: i, TransactionID: fmt.Sprintf("%s-%d", q, i)})
		}
		a.push(items...)
	}
	// ret-done: queue mode consumes 4, group "slow" consumes 2: only 2 are consumed by every group.
	m := a.pop("/api/v1/pop/queue/ret-done?batch=4")
	a.ackAll("", m.Messages, "completed")
	m = a.pop("/api/v1/pop/queue/ret-done?batch=2&consumerGroup=slow")
	a.ackAll("slow", m.Messages, "completed")
	// Age the first 3 of each queue by two hours; the rest stay fresh.
	_, err := db.Exec(t.Context(), `UPDATE queenmq.messages SET created_at = created_at - interval '2 hours'
		WHERE transaction_id ~ '-[012]$'`)
	require.NoError(t, err)

	// stored asserts nothing, so that it also serves in the condition of require.EventuallyWithT.
	stored := func(q string) ([]string, error) {
		rows, err := db.Query(t.Context(), `SELECT m.transaction_id FROM queenmq.messages m
			JOIN queenmq.partitions p ON p.id = m.partition_id JOIN queenmq.queues q ON q.id = p.queue_id
			WHERE q.name = $1 ORDER BY m.seq`, q)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	remaining := func(q string) []string {
		out, err := stored(q)
		require.NoError(t, err)
		return out
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for q, n := range map[string]int{"ret-age": 3, "ret-done": 4} {
			got, err := stored(q)
			if assert.NoError(c, err) {
				assert.Len(c, got, n, "%s: %v", q, got)
			}
		}
	}, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{"ret-age-3", "ret-age-4", "ret-age-5"}, remaining("ret-age"))
	// Aged 0,1,2; consumed by every group 0,1: only 0 and 1 go.
	require.Equal(t, []string{"ret-done-2", "ret-done-3", "ret-done-4", "ret-done-5"}, remaining("ret-done"))
	require.Len(t, remaining("ret-off"), 6)

	var hist struct {
		Totals map[string]int64 `json:"totals"`
	}
	a.json("GET", "/api/v1/analytics/retention", nil, http.StatusOK, &hist)
	require.Equal(t, map[string]int64{"retention": 3, "completed_retention": 2}, hist.Totals)
}
