package httpapi_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

type opsCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
}

func opsGet(t *testing.T, a *api, path string, want int, v any) {
	t.Helper()
	st, body := a.do("GET", path, nil)
	require.Equal(t, want, st, "%s: %s", path, body)
	if v != nil {
		require.NoError(t, json.Unmarshal(body, v), string(body))
	}
}

func opsConfigure(t *testing.T, a *api, queue string, opts map[string]any) {
	t.Helper()
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": queue, "namespace": "billing", "task": "invoice", "options": opts})
	require.Equal(t, http.StatusOK, st, string(body))
}

// TestOpsReadRoutesCounts scripts pushes, pops, acks and a dead letter and checks every read route's numbers.
func TestOpsReadRoutesCounts(t *testing.T) {
	t.Parallel()
	rb := testenv.StartBroker(t, map[string]string{"STATS_INTERVAL_MS": "50"})
	a := newAPI(t, rb.URL)
	q := "ops-counts"
	opsConfigure(t, a, q, map[string]any{"retryLimit": 0})
	var items []pushItem
	for i := range 5 {
		items = append(items, pushItem{Queue: q, Payload: map[string]int{"i": i}, TransactionID: fmt.Sprintf("d-%d", i)})
	}
	for i := range 3 {
		items = append(items, pushItem{Queue: q, Partition: "p2", Payload: map[string]int{"j": i}, TransactionID: fmt.Sprintf("p-%d", i)})
	}
	a.push(items...)

	// Default: 2 completed, 1 dead-lettered (failed with retryLimit 0), 2 pending. p2: 1 leased, 2 pending.
	got := a.pop("/api/v1/pop/queue/" + q + "/partition/Default?batch=2")
	require.Len(t, got.Messages, 2)
	for _, r := range a.ackAll("", got.Messages, "completed") {
		require.True(t, r.Success)
	}
	got = a.pop("/api/v1/pop/queue/" + q + "/partition/Default?batch=1")
	res := a.ackAll("", got.Messages, "failed")
	require.True(t, res[0].Success)
	require.True(t, res[0].DLQ)
	dead := got.Messages[0]
	leased := a.pop("/api/v1/pop/queue/" + q + "/partition/p2?batch=1")
	require.Len(t, leased.Messages, 1)

	want := opsCounts{Total: 8, Pending: 4, Processing: 1, Completed: 2, DeadLetter: 1}

	// Exact routes.
	var detail struct {
		Name       string `json:"name"`
		Partitions []struct {
			Name  string    `json:"name"`
			Stats opsCounts `json:"stats"`
		} `json:"partitions"`
		Totals opsCounts `json:"totals"`
	}
	opsGet(t, a, "/api/v1/resources/queues/"+q, http.StatusOK, &detail)
	require.Equal(t, want, detail.Totals)
	require.Len(t, detail.Partitions, 2)
	require.Equal(t, opsCounts{Total: 5, Pending: 2, Completed: 2, DeadLetter: 1}, detail.Partitions[0].Stats)
	require.Equal(t, opsCounts{Total: 3, Pending: 2, Processing: 1}, detail.Partitions[1].Stats)

	var status struct {
		Queue struct {
			Name   string         `json:"name"`
			Config map[string]any `json:"config"`
		} `json:"queue"`
		Totals opsCounts `json:"totals"`
	}
	opsGet(t, a, "/api/v1/status/queues/"+q, http.StatusOK, &status)
	require.Equal(t, want, status.Totals)
	require.EqualValues(t, 0, status.Queue.Config["retryLimit"])

	st, body := a.do("GET", "/api/v1/resources/queues/no-such-queue", nil)
	require.Equal(t, http.StatusNotFound, st)
	require.Contains(t, string(body), "no-such-queue")
	st, _ = a.do("GET", "/api/v1/status/queues/no-such-queue", nil)
	require.Equal(t, http.StatusNotFound, st)

	// Rolled-up routes converge within a few stats intervals.
	eventually(t, 10*time.Second, func() error {
		var list struct {
			Queues []struct {
				Name       string `json:"name"`
				Partitions int    `json:"partitions"`
				Messages   struct {
					Total, Pending, Processing int64
				} `json:"messages"`
			} `json:"queues"`
		}
		opsGet(t, a, "/api/v1/resources/queues", http.StatusOK, &list)
		if len(list.Queues) != 1 {
			return errorf("queues: %+v", list.Queues)
		}
		m := list.Queues[0].Messages
		if list.Queues[0].Partitions != 2 || m.Total != 8 || m.Pending != 4 || m.Processing != 1 {
			return errorf("rolled up: %+v", list.Queues[0])
		}
		return nil
	})
	var ns struct {
		Namespaces []struct {
			Namespace string `json:"namespace"`
			Queues    int    `json:"queues"`
			Messages  struct{ Total, Pending int64 }
		} `json:"namespaces"`
	}
	opsGet(t, a, "/api/v1/resources/namespaces", http.StatusOK, &ns)
	require.Len(t, ns.Namespaces, 1)
	require.Equal(t, "billing", ns.Namespaces[0].Namespace)
	require.EqualValues(t, 8, ns.Namespaces[0].Messages.Total)
	require.EqualValues(t, 4, ns.Namespaces[0].Messages.Pending)
	var tasks struct {
		Tasks []map[string]any `json:"tasks"`
	}
	opsGet(t, a, "/api/v1/resources/tasks", http.StatusOK, &tasks)
	require.Len(t, tasks.Tasks, 1)
	require.Equal(t, "invoice", tasks.Tasks[0]["task"])

	var overview struct {
		Queues, Partitions, Namespaces, Tasks int
		Messages                              opsCounts
		StatsAge                              int64 `json:"statsAge"`
	}
	opsGet(t, a, "/api/v1/resources/overview", http.StatusOK, &overview)
	require.Equal(t, 1, overview.Queues)
	require.Equal(t, 2, overview.Partitions)
	require.Equal(t, want, overview.Messages)
	require.GreaterOrEqual(t, overview.StatsAge, int64(0))

	var sts struct {
		Messages        opsCounts `json:"messages"`
		Leases          struct{ Active int64 }
		DeadLetterQueue struct {
			TotalMessages int64 `json:"totalMessages"`
		} `json:"deadLetterQueue"`
	}
	opsGet(t, a, "/api/v1/status", http.StatusOK, &sts)
	require.Equal(t, want, sts.Messages)
	require.EqualValues(t, 1, sts.Leases.Active)
	require.EqualValues(t, 1, sts.DeadLetterQueue.TotalMessages)

	// Message listings.
	count := func(path string) int {
		var l struct {
			Messages []map[string]any `json:"messages"`
			Mode     map[string]any   `json:"mode"`
		}
		opsGet(t, a, path, http.StatusOK, &l)
		return len(l.Messages)
	}
	require.Equal(t, 8, count("/api/v1/messages?queue="+q))
	require.Equal(t, 4, count("/api/v1/messages?queue="+q+"&status=pending"))
	require.Equal(t, 2, count("/api/v1/messages?queue="+q+"&status=completed"))
	require.Equal(t, 1, count("/api/v1/messages?queue="+q+"&status=dead_letter"))
	require.Equal(t, 1, count("/api/v1/messages?queue="+q+"&status=processing"))
	require.Equal(t, 3, count("/api/v1/messages?queue="+q+"&partition=p2"))
	require.Equal(t, 2, count("/api/v1/messages?queue="+q+"&limit=2"))
	require.Equal(t, 8, count("/api/v1/messages?queue="+q+"&consumerGroup=other&status=pending"))
	var qmsgs []map[string]any
	opsGet(t, a, "/api/v1/status/queues/"+q+"/messages?limit=3&offset=1", http.StatusOK, &qmsgs)
	require.Len(t, qmsgs, 3)

	// Message detail, traces, delete.
	var msg map[string]any
	opsGet(t, a, "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, http.StatusOK, &msg)
	require.Equal(t, "dead_letter", msg["status"])
	require.JSONEq(t, string(dead.Data), mustMarshal(t, msg["payload"]))
	opsGet(t, a, "/api/v1/messages/"+dead.PartitionID+"/nope", http.StatusNotFound, nil)

	st, body = a.do("POST", "/api/v1/traces", map[string]any{"transactionId": dead.TransactionID, "partitionId": dead.PartitionID,
		"data": map[string]string{"step": "charged"}, "traceNames": []string{"order-42", "user-7"}})
	require.Equal(t, http.StatusCreated, st, string(body))
	st, body = a.do("POST", "/api/v1/traces", map[string]any{"transactionId": dead.TransactionID, "partitionId": dead.PartitionID,
		"eventType": "error", "data": map[string]string{"step": "refund"}, "traceNames": "order-42"})
	require.Equal(t, http.StatusCreated, st, string(body))
	st, _ = a.do("POST", "/api/v1/traces", map[string]any{"transactionId": "missing", "partitionId": dead.PartitionID, "data": 1})
	require.Equal(t, http.StatusNotFound, st)
	st, _ = a.do("POST", "/api/v1/traces", map[string]any{"transactionId": "x", "partitionId": dead.PartitionID})
	require.Equal(t, http.StatusBadRequest, st)
	var traces struct {
		Traces []struct {
			EventType  string   `json:"event_type"`
			TraceNames []string `json:"trace_names"`
		} `json:"traces"`
	}
	opsGet(t, a, "/api/v1/traces/"+dead.PartitionID+"/"+dead.TransactionID, http.StatusOK, &traces)
	require.Len(t, traces.Traces, 2)
	require.Equal(t, "info", traces.Traces[0].EventType)
	require.Equal(t, []string{"order-42", "user-7"}, traces.Traces[0].TraceNames)
	var byName struct {
		Traces []map[string]any `json:"traces"`
		Total  int64            `json:"total"`
	}
	opsGet(t, a, "/api/v1/traces/by-name/order-42", http.StatusOK, &byName)
	require.EqualValues(t, 2, byName.Total)
	require.Len(t, byName.Traces, 2)
	require.Equal(t, q, byName.Traces[0]["queue_name"])
	var names struct {
		TraceNames []struct {
			Name     string `json:"trace_name"`
			Count    int64  `json:"trace_count"`
			Messages int64  `json:"message_count"`
		} `json:"trace_names"`
		Total int64 `json:"total"`
	}
	opsGet(t, a, "/api/v1/traces/names", http.StatusOK, &names)
	require.EqualValues(t, 2, names.Total)

	st, _ = a.do("DELETE", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil)
	require.Equal(t, http.StatusOK, st)
	opsGet(t, a, "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, http.StatusNotFound, nil)
	st, _ = a.do("DELETE", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil)
	require.Equal(t, http.StatusNotFound, st)
	opsGet(t, a, "/api/v1/traces/"+dead.PartitionID+"/"+dead.TransactionID, http.StatusOK, &traces)
	require.Empty(t, traces.Traces, "traces cascade with the message")
	opsGet(t, a, "/api/v1/resources/queues/"+q, http.StatusOK, &detail)
	require.Equal(t, opsCounts{Total: 7, Pending: 4, Processing: 1, Completed: 2}, detail.Totals)

	// Buffers (no spool wired) and analytics from the flushed operation counters.
	var buf map[string]any
	opsGet(t, a, "/api/v1/status/buffers", http.StatusOK, &buf)
	require.EqualValues(t, 0, buf["pending"])
	require.EqualValues(t, 0, buf["failed"])
	eventually(t, 10*time.Second, func() error {
		var ops struct {
			Series []struct {
				QueueName    string `json:"queueName"`
				PushMessages int64  `json:"pushMessages"`
				PopMessages  int64  `json:"popMessages"`
				AckSuccess   int64  `json:"ackSuccess"`
				AckFailed    int64  `json:"ackFailed"`
				DLQ          int64  `json:"dlq"`
			} `json:"series"`
		}
		opsGet(t, a, "/api/v1/analytics/queue-ops?queue="+q, http.StatusOK, &ops)
		var push, pop, ok, failed, dlq int64
		for _, s := range ops.Series {
			push, pop, ok, failed, dlq = push+s.PushMessages, pop+s.PopMessages, ok+s.AckSuccess, failed+s.AckFailed, dlq+s.DLQ
		}
		if push != 8 || pop != 4 || ok != 2 || failed != 1 || dlq != 1 {
			return errorf("queue-ops sums push=%d pop=%d ok=%d failed=%d dlq=%d", push, pop, ok, failed, dlq)
		}
		var lag []map[string]any
		opsGet(t, a, "/api/v1/analytics/queue-lag?queue="+q, http.StatusOK, &lag)
		if len(lag) == 0 {
			return errorf("no lag points")
		}
		return nil
	})
	var an struct {
		DataPoints []struct{ Messages int64 } `json:"dataPoints"`
	}
	opsGet(t, a, "/api/v1/status/analytics?interval=minute", http.StatusOK, &an)
	var ingested int64
	for _, p := range an.DataPoints {
		ingested += p.Messages
	}
	require.EqualValues(t, 8, ingested)
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func opsDB(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// TestOpsRetentionDeletesExactlyTheExpired ages some messages with SQL and lets the retention loop
// (100 ms interval) delete them; everything else stays.
func TestOpsRetentionDeletesExactlyTheExpired(t *testing.T) {
	t.Parallel()
	rb := testenv.StartBroker(t, map[string]string{"RETENTION_INTERVAL": "100", "STATS_INTERVAL_MS": "100"})
	a := newAPI(t, rb.URL)
	db := opsDB(t, rb.DatabaseURL)
	opsConfigure(t, a, "ret-age", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600})
	opsConfigure(t, a, "ret-done", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 3600})
	opsConfigure(t, a, "ret-off", map[string]any{"retentionSeconds": 60, "completedRetentionSeconds": 60})
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

	remaining := func(q string) []string {
		rows, err := db.Query(t.Context(), `SELECT m.transaction_id FROM queenmq.messages m
			JOIN queenmq.partitions p ON p.id = m.partition_id JOIN queenmq.queues q ON q.id = p.queue_id
			WHERE q.name = $1 ORDER BY m.seq`, q)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	eventually(t, 15*time.Second, func() error {
		if got := remaining("ret-age"); len(got) != 3 {
			return errorf("ret-age: %v", got)
		}
		if got := remaining("ret-done"); len(got) != 4 {
			return errorf("ret-done: %v", got)
		}
		return nil
	})
	require.Equal(t, []string{"ret-age-3", "ret-age-4", "ret-age-5"}, remaining("ret-age"))
	// Aged 0,1,2; consumed by every group 0,1: only 0 and 1 go.
	require.Equal(t, []string{"ret-done-2", "ret-done-3", "ret-done-4", "ret-done-5"}, remaining("ret-done"))
	require.Len(t, remaining("ret-off"), 6)

	var hist struct {
		Totals map[string]int64 `json:"totals"`
	}
	opsGet(t, a, "/api/v1/analytics/retention", http.StatusOK, &hist)
	require.Equal(t, map[string]int64{"retention": 3, "completed_retention": 2}, hist.Totals)
}

// TestOpsEncryptedQueue checks that an encrypted queue stores ciphertext while every read returns plaintext.
func TestOpsEncryptedQueue(t *testing.T) {
	t.Parallel()
	key := hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	rb := testenv.StartBroker(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key})
	a := newAPI(t, rb.URL)
	db := opsDB(t, rb.DatabaseURL)
	opsConfigure(t, a, "secret", map[string]any{"encryptionEnabled": true})
	payload := map[string]any{"card": "4111-1111", "amount": 42}
	res := a.push(pushItem{Queue: "secret", Payload: payload, TransactionID: "tx-1"}, pushItem{Queue: "secret", Payload: payload, TransactionID: "tx-2"})

	var raw []byte
	var enc bool
	require.NoError(t, db.QueryRow(t.Context(), `SELECT payload, is_encrypted FROM queenmq.messages WHERE transaction_id = 'tx-1'`).Scan(&raw, &enc))
	require.True(t, enc)
	require.NotContains(t, string(raw), "4111")
	var sealed map[string]string
	require.NoError(t, json.Unmarshal(raw, &sealed))
	require.Len(t, sealed, 3)
	for _, k := range []string{"encrypted", "iv", "authTag"} {
		require.NotEmpty(t, sealed[k], k)
	}
	want := mustMarshal(t, payload)

	var msg map[string]any
	opsGet(t, a, "/api/v1/messages/"+res[0].PartitionID+"/tx-1", http.StatusOK, &msg)
	require.JSONEq(t, want, mustMarshal(t, msg["payload"]))
	require.Equal(t, true, msg["isEncrypted"])

	st, body := a.do("POST", "/api/v1/traces", map[string]any{"transactionId": "tx-1", "partitionId": res[0].PartitionID,
		"data": map[string]int{"x": 1}, "traceNames": []string{"sec"}})
	require.Equal(t, http.StatusCreated, st, string(body))
	var byName struct {
		Traces []struct {
			Payload json.RawMessage `json:"message_payload"`
		} `json:"traces"`
	}
	opsGet(t, a, "/api/v1/traces/by-name/sec", http.StatusOK, &byName)
	require.Len(t, byName.Traces, 1)
	require.JSONEq(t, want, string(byName.Traces[0].Payload))

	got := a.pop("/api/v1/pop/queue/secret?batch=2")
	require.Len(t, got.Messages, 2)
	for _, m := range got.Messages {
		require.JSONEq(t, want, string(m.Data))
	}
}

// TestOpsEncryptedQueueNeedsKey: a broker without a key refuses to start on a database holding an
// encrypted queue.
func TestOpsEncryptedQueueNeedsKey(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	rb := testenv.StartBroker(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key})
	opsConfigure(t, newAPI(t, rb.URL), "secret", map[string]any{"encryptionEnabled": true})
	_, err := startBrokerErr(t, rb.DatabaseURL)
	require.ErrorContains(t, err, "QUEEN_ENCRYPTION_KEY")
}

// TestOpsPrometheus parses /metrics/prometheus with the text parser and looks for every family.
func TestOpsPrometheus(t *testing.T) {
	t.Parallel()
	rb := testenv.StartBroker(t, map[string]string{"STATS_INTERVAL_MS": "50"})
	a := newAPI(t, rb.URL)
	a.push(pushItem{Queue: "prom", Payload: 1}, pushItem{Queue: "prom", Payload: 2})
	m := a.pop("/api/v1/pop/queue/prom?batch=1")
	a.ackAll("", m.Messages, "completed")

	var fams map[string]*ioprom
	eventually(t, 10*time.Second, func() error {
		resp, err := http.Get(rb.URL + "/metrics/prometheus")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errorf("status %d", resp.StatusCode)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fs, err := p.TextToMetricFamilies(resp.Body)
		if err != nil {
			return err
		}
		fams = map[string]*ioprom{}
		for name, f := range fs {
			fams[name] = &ioprom{n: len(f.GetMetric())}
			for _, mm := range f.GetMetric() {
				for _, l := range mm.GetLabel() {
					if l.GetName() == "queue" && l.GetValue() == "prom" {
						fams[name].prom = true
						if mm.GetGauge() != nil {
							fams[name].gauge = mm.GetGauge().GetValue()
						}
					}
				}
			}
		}
		if f := fams["queen_queue_pending_messages"]; f == nil || !f.prom || f.gauge != 1 {
			return errorf("queue depth gauge not there yet")
		}
		return nil
	})
	for _, name := range []string{"queen_http_requests_total", "queen_http_request_duration_seconds",
		"queen_queue_pushed_messages_total", "queen_queue_popped_messages_total", "queen_queue_acked_messages_total",
		"queen_queue_pending_messages", "queen_queue_processing_messages", "queen_queue_lag_seconds", "queen_dlq_depth_messages",
		"queen_db_pool_connections", "queen_spool_pending_messages", "queen_spool_failed_messages",
		"queen_maintenance_mode_enabled", "queen_uptime_seconds", "go_goroutines", "process_cpu_seconds_total"} {
		require.Contains(t, fams, name)
	}
	for _, name := range []string{"queen_queue_pushed_messages_total", "queen_queue_popped_messages_total", "queen_queue_acked_messages_total"} {
		require.True(t, fams[name].prom, name)
	}

	var js map[string]any
	opsGet(t, a, "/metrics", http.StatusOK, &js)
	require.Contains(t, js, "database")
	require.Greater(t, js["requests"].(map[string]any)["total"].(float64), float64(0))
}

type ioprom struct {
	n     int
	prom  bool
	gauge float64
}
