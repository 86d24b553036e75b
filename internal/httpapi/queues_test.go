package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigure(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("defaults and full replace", func(t *testing.T) {
		t.Parallel()
		q := ctName("cfg")
		first := b.configure(t, map[string]any{"queue": q})
		require.Equal(t, "", first["namespace"])
		require.Equal(t, "", first["task"])
		require.Equal(t, ctDefaultOptions, first["options"])

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
		second := b.configure(t, map[string]any{"queue": q, "namespace": "billing", "task": "invoice", "options": withUnknown})
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
		third := b.configure(t, map[string]any{"queue": q})
		require.Equal(t, ctDefaultOptions, third["options"])
		require.Equal(t, "", third["namespace"])
		require.Equal(t, "", third["task"])
		require.Equal(t, first["queueId"], third["queueId"])

		// Only one option given: every other one is back to its default.
		fourth := b.configure(t, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 9}})
		want = map[string]any{}
		for k, v := range ctDefaultOptions {
			want[k] = v
		}
		want["retryLimit"] = json.Number("9")
		require.Equal(t, want, fourth["options"])
	})

	t.Run("configure creates the queue and its Default partition", func(t *testing.T) {
		t.Parallel()
		q := ctName("cfgpush")
		res := b.configure(t, map[string]any{"queue": q})
		pushed := b.push(t, ctItem(q, "", "a", 1))
		require.Equal(t, res["partitionId"], pushed[0].PartitionID, "an item without partition goes to Default")
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{}`, `{"queue":5}`, `{"queue":null}`, `{"queue":""}`, `{"queue":["q"]}`, `{"options":{}}`} {
			ctRequireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body), http.StatusBadRequest, "queue is required")
		}
		for _, body := range []string{`{"queue":`, `not json`, `{"queue":"q"} trailing`, ``, `   `, `[1,2]`, `{"queue":"q","options":{"leaseTime":"long"}}`} {
			ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body))
		}
		// No body at all is an empty body.
		ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", nil))
	})
}

func TestQueueOptions(t *testing.T) {
	t.Parallel()
	base := smStart(t, map[string]string{"EVICTION_INTERVAL": "200"})

	t.Run("DelayedProcessing", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("delay")
		smConfigure(t, a, q, "", map[string]any{"delayedProcessing": 2})
		pushedAt := time.Now()
		smPush(t, a, q, "", "late")
		smNoMessage(t, a, smPopPath(q, ""))
		m := smOne(t, a, smPopPath(q, "", "wait", "true", "timeout", "10000"))
		require.GreaterOrEqual(t, time.Since(pushedAt), 2*time.Second, "delivered before delayedProcessing")
		require.GreaterOrEqual(t, time.Since(smParseTime(t, m.CreatedAt)), 2*time.Second)
		require.Equal(t, "late", m.TransactionID)
	})

	t.Run("WindowBuffer", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("window")
		smConfigure(t, a, q, "", map[string]any{"windowBuffer": 2})
		smPush(t, a, q, "", "w1")
		smNoMessage(t, a, smPopPath(q, ""))
		time.Sleep(time.Second) // scenario: a second message arrives while the window is open
		smNoMessage(t, a, smPopPath(q, ""))
		lastPush := time.Now()
		smPush(t, a, q, "", "w2")
		smNoMessage(t, a, smPopPath(q, ""))
		res := smPop(t, a, smPopPath(q, "", "wait", "true", "timeout", "10000", "batch", "10"))
		require.NotNil(t, res)
		require.GreaterOrEqual(t, time.Since(lastPush), 2*time.Second, "partition served before its newest message was windowBuffer old")
		require.Len(t, res.Messages, 2)
		require.Equal(t, "w1", res.Messages[0].TransactionID)
		require.Equal(t, "w2", res.Messages[1].TransactionID)
	})

	t.Run("MaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("max")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 3})
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
			smJSON(t, a, "POST", "/api/v1/push", map[string]any{"items": items}, http.StatusCreated, &res)
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
		require.Equal(t, []string{"s0", "s1", "s2"}, smDrain(t, a, q, ""))
		for _, r := range pushN("s6", "s7") {
			require.Equal(t, "queued", r.Status, "%+v", r)
		}
		require.Equal(t, []string{"s6", "s7"}, smDrain(t, a, q, ""))
	})

	t.Run("PriorityAcrossNamespace", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		ns := strings.ReplaceAll(smName("prio"), "-", "")
		lo, hi := ns+".low.q", ns+".high.q"
		smConfigure(t, a, lo, ns, map[string]any{"priority": 1})
		smConfigure(t, a, hi, ns, map[string]any{"priority": 5})
		smPush(t, a, lo, "", "l1", "l2")
		smPush(t, a, hi, "", "h1", "h2")
		var order []string
		for range 4 {
			res := smPop(t, a, "/api/v1/pop"+smQuery("namespace", ns))
			require.NotNil(t, res)
			require.Len(t, res.Messages, 1)
			m := res.Messages[0]
			require.Equal(t, res.Queue, m.Queue)
			order = append(order, m.Queue+"/"+m.TransactionID)
			smAckOK(t, a, m, "completed", "")
		}
		require.Equal(t, []string{hi + "/h1", hi + "/h2", lo + "/l1", lo + "/l2"}, order)
		smNoMessage(t, a, "/api/v1/pop"+smQuery("namespace", ns))
	})

	t.Run("MaxWaitTimeSeconds", func(t *testing.T) {
		t.Parallel()
		// The sweep dead-letters, per existing cursor (partition x group), the messages after the
		// cursor that are older than maxWaitTimeSeconds. A cursor is created by a pop that delivered
		// something (an empty pop on a queue without partitions creates none) or by a named group's
		// "new"/timestamp subscription on existing partitions. So queue mode first pops and acks one
		// message, and group gw subscribes with "new", before the message that must expire is pushed.
		a := newAPI(t, base)
		q, gw := smName("maxwait"), smName("gw")
		smConfigure(t, a, q, "", map[string]any{"maxWaitTimeSeconds": 1})
		smPush(t, a, q, "", "first")
		smAckOK(t, a, smOne(t, a, smPopPath(q, "")), "completed", "")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gw, "subscriptionMode", "new"))
		smPush(t, a, q, "", "stale")

		var p smDLQPage
		eventually(t, 15*time.Second, func() error {
			p = smDLQ(t, a, "queue", q)
			if p.Total != 2 {
				return errorf("dlq total %d, want 2", p.Total)
			}
			return nil
		})
		groups := map[string]bool{}
		for _, d := range p.Messages {
			require.Equal(t, "stale", d.TransactionID)
			require.Equal(t, "max wait time exceeded", *d.ErrorMessage)
			groups[d.ConsumerGroup] = true
		}
		require.Equal(t, map[string]bool{"__QUEUE_MODE__": true, gw: true}, groups)
		smNoMessage(t, a, smPopPath(q, ""))
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gw))
	})
}

func TestDeleteQueue(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("RemovesEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("delq"), smName("gdelq")
		smPush(t, a, q, "pa", "a1")
		smPush(t, a, q, "pb", "b1")
		require.Equal(t, []string{"a1", "b1"}, smSorted(smDrain(t, a, q, g)))
		smPush(t, a, q, "pa", "a2")

		var res struct {
			Deleted bool   `json:"deleted"`
			Queue   string `json:"queue"`
		}
		smJSON(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, &res)
		require.True(t, res.Deleted)
		require.Equal(t, q, res.Queue)
		smNoMessage(t, a, smPopPath(q, ""))
		smNoMessage(t, a, smPopPath(q, "pa"))
		smError(t, a, "GET", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		smError(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusNotFound)
		smError(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		smError(t, a, "DELETE", "/api/v1/resources/queues/"+smName("never"), nil, http.StatusNotFound)

		// A new push recreates the queue, empty but for the new message.
		smPush(t, a, q, "pa", "again")
		require.Equal(t, []string{"again"}, smDrain(t, a, q, ""))
		require.Equal(t, []string{"again"}, smDrain(t, a, q, g))
	})

	t.Run("RecreatedQueueHasNoOldMaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("delmax")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 1})
		smPush(t, a, q, "", "m0")
		smJSON(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, nil)
		// The queue is auto-created again by this push, without a maxSize.
		// The deleted queue's maxSize does not outlive it.
		smPush(t, a, q, "", "n1", "n2")
		require.Equal(t, []string{"n1", "n2"}, smDrain(t, a, q, ""))
	})
}
