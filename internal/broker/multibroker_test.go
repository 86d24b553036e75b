package broker_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

func get(t require.TestingT, url string) (int, []byte) {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestLongPollWokenAcrossBrokers parks a pop on broker B and pushes on broker A: B must answer from the
// NOTIFY, not from its 10 s safety re-check.
func TestLongPollWokenAcrossBrokers(t *testing.T) {
	t.Parallel()
	env := map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "10000"}
	a := testenv.StartBroker(t, env)
	env["DATABASE_URL"] = a.DatabaseURL
	b := testenv.StartBroker(t, env)

	got := make(chan int, 1)
	go func() {
		code, _ := get(t, b.URL+"/api/v1/pop/queue/xb?wait=true&timeout=30000")
		got <- code
	}()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, b.Broker.Parked(), "parked pops")
	}, 10*time.Second, 5*time.Millisecond, "pop never parked")
	code, body := post(t, a.URL+"/api/v1/push", map[string]any{"items": []map[string]any{{"queue": "xb", "payload": 1}}})
	require.Equal(t, http.StatusCreated, code, string(body))
	select {
	case code := <-got:
		require.Equal(t, http.StatusOK, code)
	case <-time.After(2 * time.Second):
		t.Fatal("long-poll on broker B not woken within 2 s of the push on broker A")
	}
}

// TestCompetingConsumersOnTwoBrokers: consumers on two brokers pop the same queue; no partition is ever
// served to two consumers at once, and every message is delivered exactly once.
func TestCompetingConsumersOnTwoBrokers(t *testing.T) {
	t.Parallel()
	a := testenv.StartBroker(t, nil)
	b := testenv.StartBroker(t, map[string]string{"DATABASE_URL": a.DatabaseURL})
	const partitions, per = 8, 25
	var items []map[string]any
	for p := range partitions {
		for n := range per {
			items = append(items, map[string]any{"queue": "two", "partition": fmt.Sprint("p", p), "payload": n})
		}
	}
	code, body := post(t, a.URL+"/api/v1/push", map[string]any{"items": items})
	require.Equal(t, http.StatusCreated, code, string(body))

	var mu sync.Mutex
	holding := map[string]string{}
	seen := map[string]int{}
	var wg sync.WaitGroup
	for c := range 6 {
		base := []string{a.URL, b.URL}[c%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := fmt.Sprint("consumer-", c)
			for empty := 0; empty < 3; {
				code, body := get(t, base+"/api/v1/pop/queue/two?batch=5&wait=true&timeout=300")
				if code == http.StatusNoContent {
					empty++
					continue
				}
				empty = 0
				var res struct {
					Messages []struct{ ID, TransactionID, PartitionID, Partition, LeaseID string }
				}
				require.NoError(t, json.Unmarshal(body, &res))
				part := res.Messages[0].Partition
				mu.Lock()
				if other, ok := holding[part]; ok {
					mu.Unlock()
					t.Errorf("partition %s served to %s while %s holds its lease", part, me, other)
					return
				}
				holding[part] = me
				for _, m := range res.Messages {
					seen[m.ID]++
				}
				delete(holding, part) // released before the ack below lets anyone claim it again
				mu.Unlock()
				last := res.Messages[len(res.Messages)-1]
				code, out := post(t, base+"/api/v1/ack", map[string]any{"transactionId": last.TransactionID,
					"partitionId": last.PartitionID, "leaseId": last.LeaseID})
				require.Equal(t, http.StatusOK, code, string(out))
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, partitions*per)
	for id, n := range seen {
		require.Equal(t, 1, n, "message %s delivered %d times", id, n)
	}
}

// TestMaintenanceSharedAcrossBrokers: push maintenance switched on broker A diverts pushes on broker B
// to B's spool (answered buffered); pop maintenance makes pops answer 204; switching off replays.
func TestMaintenanceSharedAcrossBrokers(t *testing.T) {
	t.Parallel()
	a := testenv.StartBroker(t, nil)
	b := testenv.StartBroker(t, map[string]string{"DATABASE_URL": a.DatabaseURL})

	code, body := post(t, a.URL+"/api/v1/system/maintenance", map[string]any{"enabled": true})
	require.Equal(t, http.StatusOK, code, string(body))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := post(c, b.URL+"/api/v1/push", map[string]any{"items": []map[string]any{{"queue": "maint", "payload": 1, "transactionId": "m-1"}}})
		var items []struct{ Status string }
		if assert.Equal(c, http.StatusCreated, code, string(body)) && assert.NoError(c, json.Unmarshal(body, &items)) &&
			assert.NotEmpty(c, items, string(body)) {
			assert.Equal(c, "buffered", items[0].Status, "broker B never saw maintenance: %s", body)
		}
	}, 5*time.Second, time.Millisecond)
	require.Positive(t, b.Broker.SpoolPending())

	code, body = post(t, b.URL+"/api/v1/system/maintenance/pop", map[string]any{"enabled": true})
	require.Equal(t, http.StatusOK, code, string(body))
	code, body = post(t, b.URL+"/api/v1/system/maintenance", map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, code, string(body))
	// The spool replays once maintenance is off; pops still answer 204 under pop maintenance.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, b.Broker.SpoolPending(), "spooled pushes")
	}, 10*time.Second, 20*time.Millisecond, "spool not replayed")
	code, body = get(t, b.URL+"/api/v1/pop/queue/maint")
	require.Equal(t, http.StatusNoContent, code, string(body))
	require.Empty(t, body)

	code, body = post(t, a.URL+"/api/v1/system/maintenance/pop", map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, code, string(body))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body = get(c, a.URL+"/api/v1/pop/queue/maint")
		assert.Equal(c, http.StatusOK, code, "%s", body)
	}, 5*time.Second, 20*time.Millisecond, "pop maintenance never lifted")
	require.Contains(t, string(body), `"transactionId":"m-1"`)
}
