package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadRoutesCounts scripts pushes, pops, acks and a dead letter and checks every read route's numbers.
func TestReadRoutesCounts(t *testing.T) {
	t.Parallel()
	rb := setup(t, map[string]string{"STATS_INTERVAL_MS": "50"}).rb
	a := newAPI(t, rb.URL)
	q := "ops-counts"
	configure(t, a, map[string]any{"queue": q, "namespace": "billing", "task": "invoice", "options": map[string]any{"retryLimit": 0}})
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

	want := wireCounts{Total: 8, Pending: 4, Processing: 1, Completed: 2, DeadLetter: 1}

	// Exact routes.
	var detail struct {
		Name       string `json:"name"`
		Partitions []struct {
			Name  string     `json:"name"`
			Stats wireCounts `json:"stats"`
		} `json:"partitions"`
		Totals wireCounts `json:"totals"`
	}
	a.json("GET", "/api/v1/resources/queues/"+q, nil, http.StatusOK, &detail)
	require.Equal(t, want, detail.Totals)
	require.Len(t, detail.Partitions, 2)
	require.Equal(t, wireCounts{Total: 5, Pending: 2, Completed: 2, DeadLetter: 1}, detail.Partitions[0].Stats)
	require.Equal(t, wireCounts{Total: 3, Pending: 2, Processing: 1}, detail.Partitions[1].Stats)

	var status struct {
		Queue struct {
			Name   string         `json:"name"`
			Config map[string]any `json:"config"`
		} `json:"queue"`
		Totals wireCounts `json:"totals"`
	}
	a.json("GET", "/api/v1/status/queues/"+q, nil, http.StatusOK, &status)
	require.Equal(t, want, status.Totals)
	require.EqualValues(t, 0, status.Queue.Config["retryLimit"])

	st, body := a.do("GET", "/api/v1/resources/queues/no-such-queue", nil)
	require.Equal(t, http.StatusNotFound, st)
	require.Contains(t, string(body), "no-such-queue")
	st, _ = a.do("GET", "/api/v1/status/queues/no-such-queue", nil)
	require.Equal(t, http.StatusNotFound, st)

	// Rolled-up routes converge within a few stats intervals.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var list struct {
			Queues []struct {
				Name       string `json:"name"`
				Partitions int    `json:"partitions"`
				Messages   struct {
					Total, Pending, Processing int64
				} `json:"messages"`
			} `json:"queues"`
		}
		if !a.getJSON(c, "/api/v1/resources/queues", &list) || !assert.Len(c, list.Queues, 1, "queues: %+v", list.Queues) {
			return
		}
		m := list.Queues[0].Messages
		assert.True(c, list.Queues[0].Partitions == 2 && m.Total == 8 && m.Pending == 4 && m.Processing == 1,
			"rolled up: %+v", list.Queues[0])
	}, 10*time.Second, 10*time.Millisecond)
	var ns struct {
		Namespaces []struct {
			Namespace string `json:"namespace"`
			Queues    int    `json:"queues"`
			Messages  struct{ Total, Pending int64 }
		} `json:"namespaces"`
	}
	a.json("GET", "/api/v1/resources/namespaces", nil, http.StatusOK, &ns)
	require.Len(t, ns.Namespaces, 1)
	require.Equal(t, "billing", ns.Namespaces[0].Namespace)
	require.EqualValues(t, 8, ns.Namespaces[0].Messages.Total)
	require.EqualValues(t, 4, ns.Namespaces[0].Messages.Pending)
	var tasks struct {
		Tasks []map[string]any `json:"tasks"`
	}
	a.json("GET", "/api/v1/resources/tasks", nil, http.StatusOK, &tasks)
	require.Len(t, tasks.Tasks, 1)
	require.Equal(t, "invoice", tasks.Tasks[0]["task"])

	var overview struct {
		Queues, Partitions, Namespaces, Tasks int
		Messages                              wireCounts
		StatsAge                              int64 `json:"statsAge"`
	}
	a.json("GET", "/api/v1/resources/overview", nil, http.StatusOK, &overview)
	require.Equal(t, 1, overview.Queues)
	require.Equal(t, 2, overview.Partitions)
	require.Equal(t, want, overview.Messages)
	require.GreaterOrEqual(t, overview.StatsAge, int64(0))

	var sts struct {
		Messages        wireCounts `json:"messages"`
		Leases          struct{ Active int64 }
		DeadLetterQueue struct {
			TotalMessages int64 `json:"totalMessages"`
		} `json:"deadLetterQueue"`
	}
	a.json("GET", "/api/v1/status", nil, http.StatusOK, &sts)
	require.Equal(t, want, sts.Messages)
	require.EqualValues(t, 1, sts.Leases.Active)
	require.EqualValues(t, 1, sts.DeadLetterQueue.TotalMessages)

	// Message listings.
	count := func(path string) int {
		var l struct {
			Messages []map[string]any `json:"messages"`
			Mode     map[string]any   `json:"mode"`
		}
		a.json("GET", path, nil, http.StatusOK, &l)
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
	a.json("GET", "/api/v1/status/queues/"+q+"/messages?limit=3&offset=1", nil, http.StatusOK, &qmsgs)
	require.Len(t, qmsgs, 3)

	// Message detail, traces, delete.
	var msg map[string]any
	a.json("GET", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil, http.StatusOK, &msg)
	require.Equal(t, "dead_letter", msg["status"])
	require.JSONEq(t, string(dead.Data), mustJSON(t, msg["payload"]))
	a.json("GET", "/api/v1/messages/"+dead.PartitionID+"/nope", nil, http.StatusNotFound, nil)

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
	a.json("GET", "/api/v1/traces/"+dead.PartitionID+"/"+dead.TransactionID, nil, http.StatusOK, &traces)
	require.Len(t, traces.Traces, 2)
	require.Equal(t, "info", traces.Traces[0].EventType)
	require.Equal(t, []string{"order-42", "user-7"}, traces.Traces[0].TraceNames)
	var byName struct {
		Traces []map[string]any `json:"traces"`
		Total  int64            `json:"total"`
	}
	a.json("GET", "/api/v1/traces/by-name/order-42", nil, http.StatusOK, &byName)
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
	a.json("GET", "/api/v1/traces/names", nil, http.StatusOK, &names)
	require.EqualValues(t, 2, names.Total)

	st, _ = a.do("DELETE", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil)
	require.Equal(t, http.StatusOK, st)
	a.json("GET", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil, http.StatusNotFound, nil)
	st, _ = a.do("DELETE", "/api/v1/messages/"+dead.PartitionID+"/"+dead.TransactionID, nil)
	require.Equal(t, http.StatusNotFound, st)
	a.json("GET", "/api/v1/traces/"+dead.PartitionID+"/"+dead.TransactionID, nil, http.StatusOK, &traces)
	require.Empty(t, traces.Traces, "traces cascade with the message")
	a.json("GET", "/api/v1/resources/queues/"+q, nil, http.StatusOK, &detail)
	require.Equal(t, wireCounts{Total: 7, Pending: 4, Processing: 1, Completed: 2}, detail.Totals)

	// Buffers (no spool wired) and analytics from the flushed operation counters.
	var buf map[string]any
	a.json("GET", "/api/v1/status/buffers", nil, http.StatusOK, &buf)
	require.EqualValues(t, 0, buf["pending"])
	require.EqualValues(t, 0, buf["failed"])
	require.EventuallyWithT(t, func(c *assert.CollectT) {
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
		if !a.getJSON(c, "/api/v1/analytics/queue-ops?queue="+q, &ops) {
			return
		}
		var push, pop, ok, failed, dlq int64
		for _, s := range ops.Series {
			push, pop, ok, failed, dlq = push+s.PushMessages, pop+s.PopMessages, ok+s.AckSuccess, failed+s.AckFailed, dlq+s.DLQ
		}
		if !assert.True(c, push == 8 && pop == 4 && ok == 2 && failed == 1 && dlq == 1,
			"queue-ops sums push=%d pop=%d ok=%d failed=%d dlq=%d", push, pop, ok, failed, dlq) {
			return
		}
		var lag []map[string]any
		if a.getJSON(c, "/api/v1/analytics/queue-lag?queue="+q, &lag) {
			assert.NotEmpty(c, lag, "no lag points")
		}
	}, 10*time.Second, 10*time.Millisecond)
	var an struct {
		DataPoints []struct{ Messages int64 } `json:"dataPoints"`
	}
	a.json("GET", "/api/v1/status/analytics?interval=minute", nil, http.StatusOK, &an)
	var ingested int64
	for _, p := range an.DataPoints {
		ingested += p.Messages
	}
	require.EqualValues(t, 8, ingested)
}
