package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// defaultOptions are the options of a queue configured without any.
var defaultOptions = map[string]any{
	"priority": json.Number("0"), "leaseTime": json.Number("300"), "retryLimit": json.Number("3"),
	"retryDelay": json.Number("1000"), "maxSize": json.Number("0"), "ttl": json.Number("3600"),
	"deadLetterQueue": false, "dlqAfterMaxRetries": false, "delayedProcessing": json.Number("0"),
	"windowBuffer": json.Number("0"), "retentionSeconds": json.Number("0"),
	"completedRetentionSeconds": json.Number("0"), "retentionEnabled": false, "encryptionEnabled": false,
	"maxWaitTimeSeconds": json.Number("0"),
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)

	t.Run("defaults and full replace", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("cfg")
		first := configure(t, b.raw, map[string]any{"queue": q})
		require.Equal(t, "", first["namespace"])
		require.Equal(t, "", first["task"])
		require.Equal(t, defaultOptions, first["options"])

		set := map[string]any{
			"priority": 7, "leaseTime": 12, "retryLimit": 5, "retryDelay": 250, "maxSize": 100, "ttl": 60,
			"deadLetterQueue": true, "dlqAfterMaxRetries": true, "delayedProcessing": 0, "windowBuffer": 0,
			"retentionSeconds": 30, "completedRetentionSeconds": 20, "retentionEnabled": true,
			"encryptionEnabled": false, "maxWaitTimeSeconds": 600,
		}
		withUnknown := map[string]any{"bogusOption": 1}
		for k, v := range set {
			withUnknown[k] = v
		}
		second := configure(t, b.raw, map[string]any{"queue": q, "namespace": "billing", "task": "invoice", "options": withUnknown})
		require.Equal(t, "billing", second["namespace"])
		require.Equal(t, "invoice", second["task"])
		require.Equal(t, first["queueId"], second["queueId"], "configure is an upsert")
		require.Equal(t, first["partitionId"], second["partitionId"], "the Default partition is kept")
		var want map[string]any
		dec := json.NewDecoder(strings.NewReader(mustJSON(t, set)))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&want))
		require.Equal(t, want, second["options"], "every given option is echoed, unknown keys are dropped")

		// Full replace: a configure without options resets every option and namespace/task.
		third := configure(t, b.raw, map[string]any{"queue": q})
		require.Equal(t, defaultOptions, third["options"])
		require.Equal(t, "", third["namespace"])
		require.Equal(t, "", third["task"])
		require.Equal(t, first["queueId"], third["queueId"])

		// Only one option given: every other one is back to its default.
		fourth := configure(t, b.raw, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 9}})
		want = map[string]any{}
		for k, v := range defaultOptions {
			want[k] = v
		}
		want["retryLimit"] = json.Number("9")
		require.Equal(t, want, fourth["options"])
	})

	t.Run("configure creates the queue and its Default partition", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("cfgpush")
		res := configure(t, b.raw, map[string]any{"queue": q})
		pushed := b.push(t, newItem(q, "", "a", 1))
		require.Equal(t, res["partitionId"], pushed[0].PartitionID, "an item without partition goes to Default")
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{}`, `{"queue":5}`, `{"queue":null}`, `{"queue":["q"]}`, `{"options":{}}`} {
			requireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body), http.StatusBadRequest, "queue is required")
		}
		for _, body := range []string{`{"queue":`, `not json`, `{"queue":"q"} trailing`, ``, `   `, `[1,2]`, `{"queue":"q","options":{"leaseTime":"long"}}`} {
			requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body))
		}
		// No body at all is an empty body.
		requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", nil))
	})
}

func TestQueueOptions(t *testing.T) {
	t.Parallel()
	srv := setupClock(t, pollEnv(map[string]string{"EVICTION_INTERVAL": "200"}))

	t.Run("DelayedProcessing", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		b := srv
		a := b.rawFor(t)
		q := uniqueName("delay")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"delayedProcessing": 600}})
		pushedAt := b.clock.Now()
		a.pushTxs(q, "", "late")
		m := b.heldFor600s(t, a, q)
		require.GreaterOrEqual(t, b.clock.Now().Sub(pushedAt), 600*time.Second, "delivered before delayedProcessing")
		require.GreaterOrEqual(t, b.clock.Now().Sub(parseTime(t, m.CreatedAt)), 600*time.Second)
		require.Equal(t, "late", m.TransactionID)
	})

	t.Run("WindowBuffer", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		b := srv
		a := b.rawFor(t)
		q := uniqueName("window")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"windowBuffer": 600}})
		a.pushTxs(q, "", "w1")
		a.popNone(popPath(q, ""))
		b.clock.Advance(300 * time.Second) // scenario: a second message arrives while the window is open
		a.popNone(popPath(q, ""))
		lastPush := b.clock.Now()
		a.pushTxs(q, "", "w2")
		a.popNone(popPath(q, ""))
		b.clock.Advance(450 * time.Second) // w1 is past the window, w2 is not
		a.popNone(popPath(q, ""))
		// A long-poll parked inside the window is answered by the re-check once the window has passed.
		got := a.popLater(popPath(q, "", "wait", "true", "timeout", "30000", "batch", "10"))
		b.waitParked(t, 0)
		b.clock.Advance(151 * time.Second)
		res := <-got
		require.NotNil(t, res, "the parked pop was not answered once the window passed")
		require.GreaterOrEqual(t, b.clock.Now().Sub(lastPush), 600*time.Second, "partition served before its newest message was windowBuffer old")
		require.Len(t, res.Messages, 2)
		require.Equal(t, "w1", res.Messages[0].TransactionID)
		require.Equal(t, "w2", res.Messages[1].TransactionID)
	})

	t.Run("MaxSize", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("max")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"maxSize": 3}})
		type result struct {
			TransactionID string `json:"transaction_id"`
			Status        string `json:"status"`
			Error         string `json:"error"`
		}
		pushN := func(txs ...string) []result {
			items := make([]pushItem, len(txs))
			for i, tx := range txs {
				items[i] = pushItem{Queue: q, Payload: i, TransactionID: tx}
			}
			var res []result
			a.json("POST", "/api/v1/push", map[string]any{"items": items}, http.StatusCreated, &res)
			require.Len(t, res, len(txs))
			return res
		}
		res := pushN("s0", "s1", "s2", "s3", "s4")
		for i, r := range res {
			require.Equal(t, fmt.Sprintf("s%d", i), r.TransactionID)
			if i < 3 {
				require.Equal(t, "queued", r.Status, "%+v", r)
				continue
			}
			require.Equal(t, "failed", r.Status, "%+v", r)
			require.Contains(t, r.Error, "maxSize 3")
		}
		require.Equal(t, "failed", pushN("s5")[0].Status)
		require.Equal(t, []string{"s0", "s1", "s2"}, a.drain(q, ""))
		for _, r := range pushN("s6", "s7") {
			require.Equal(t, "queued", r.Status, "%+v", r)
		}
		require.Equal(t, []string{"s6", "s7"}, a.drain(q, ""))
	})

	t.Run("PriorityAcrossNamespace", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		ns := strings.ReplaceAll(uniqueName("prio"), "-", "")
		lo, hi := ns+".low.q", ns+".high.q"
		configure(t, a, map[string]any{"queue": lo, "namespace": ns, "options": map[string]any{"priority": 1}})
		configure(t, a, map[string]any{"queue": hi, "namespace": ns, "options": map[string]any{"priority": 5}})
		a.pushTxs(lo, "", "l1", "l2")
		a.pushTxs(hi, "", "h1", "h2")
		var order []string
		for range 4 {
			res := a.pop("/api/v1/pop" + query("namespace", ns))
			require.NotNil(t, res)
			require.Len(t, res.Messages, 1)
			m := res.Messages[0]
			require.Equal(t, res.Queue, m.Queue)
			order = append(order, m.Queue+"/"+m.TransactionID)
			a.ackOK(m, "completed", "")
		}
		require.Equal(t, []string{hi + "/h1", hi + "/h2", lo + "/l1", lo + "/l2"}, order)
		a.popNone("/api/v1/pop" + query("namespace", ns))
	})

	t.Run("MaxWaitTimeSeconds", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		// The sweep dead-letters, per existing cursor (partition x group), the messages after the
		// cursor that are older than maxWaitTimeSeconds. A cursor is created by a pop that delivered
		// something (an empty pop on a queue without partitions creates none) or by a named group's
		// "new"/timestamp subscription on existing partitions. So queue mode first pops and acks one
		// message, and group gw subscribes with "new", before the message that must expire is pushed.
		b := srv
		a := b.rawFor(t)
		q, gw := uniqueName("maxwait"), uniqueName("gw")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"maxWaitTimeSeconds": 600}})
		a.pushTxs(q, "", "first")
		a.ackOK(a.popOne(popPath(q, "")), "completed", "")
		a.popNone(popPath(q, "", "consumerGroup", gw, "subscriptionMode", "new"))
		a.pushTxs(q, "", "stale")
		b.clock.Advance(601 * time.Second)

		var p dlqPage
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			p = dlqPage{}
			if a.getJSON(c, "/api/v1/dlq"+query("queue", q), &p) {
				assert.NotNil(c, p.Messages)
				assert.Equal(c, 2, p.Total, "dlq total")
			}
		}, 15*time.Second, 10*time.Millisecond)
		groups := map[string]bool{}
		for _, d := range p.Messages {
			require.Equal(t, "stale", d.TransactionID)
			require.Equal(t, "max wait time exceeded", *d.ErrorMessage)
			groups[d.ConsumerGroup] = true
		}
		require.Equal(t, map[string]bool{"__QUEUE_MODE__": true, gw: true}, groups)
		a.popNone(popPath(q, ""))
		a.popNone(popPath(q, "", "consumerGroup", gw))
	})
}

func TestDeleteQueue(t *testing.T) {
	t.Parallel()
	srv := setup(t, pollEnv(nil))

	t.Run("RemovesEverything", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("delq"), uniqueName("gdelq")
		a.pushTxs(q, "pa", "a1")
		a.pushTxs(q, "pb", "b1")
		require.Equal(t, []string{"a1", "b1"}, sorted(a.drain(q, g)))
		a.pushTxs(q, "pa", "a2")

		var res struct {
			Deleted bool   `json:"deleted"`
			Queue   string `json:"queue"`
		}
		a.json("DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, &res)
		require.True(t, res.Deleted)
		require.Equal(t, q, res.Queue)
		a.popNone(popPath(q, ""))
		a.popNone(popPath(q, "pa"))
		a.errorText("GET", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		a.errorText("GET", "/api/v1/consumer-groups/"+g, nil, http.StatusNotFound)
		a.errorText("DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		a.errorText("DELETE", "/api/v1/resources/queues/"+uniqueName("never"), nil, http.StatusNotFound)

		// A new push recreates the queue, empty but for the new message.
		a.pushTxs(q, "pa", "again")
		require.Equal(t, []string{"again"}, a.drain(q, ""))
		require.Equal(t, []string{"again"}, a.drain(q, g))
	})

	t.Run("RecreatedQueueHasNoOldMaxSize", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("delmax")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"maxSize": 1}})
		a.pushTxs(q, "", "m0")
		a.json("DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, nil)
		// The queue is auto-created again by this push, without a maxSize.
		// The deleted queue's maxSize does not outlive it.
		a.pushTxs(q, "", "n1", "n2")
		require.Equal(t, []string{"n1", "n2"}, a.drain(q, ""))
	})
}
