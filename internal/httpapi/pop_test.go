package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestPop(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)

	t.Run("200 shape with every message field", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("pop")
		trace := uuid.NewString()
		pushed := b.push(t, map[string]any{"queue": q, "partition": "P", "payload": map[string]any{"a": []any{1, "x"}}, "transactionId": "tx-1", "traceId": trace})
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		require.Equal(t, "P", p.Partition)
		require.Equal(t, pushed[0].PartitionID, p.PartitionID)
		requireUUID(t, p.LeaseID)
		require.Equal(t, queueMode, p.ConsumerGroup)
		require.Equal(t, 1, p.PartitionsClaimed)
		require.Len(t, p.Messages, 1)
		m := p.Messages[0]
		require.Equal(t, pushed[0].MessageID, m.ID)
		require.Equal(t, "tx-1", m.TransactionID)
		require.NotNil(t, m.TraceID)
		require.Equal(t, trace, *m.TraceID)
		require.JSONEq(t, `{"a":[1,"x"]}`, string(m.Data))
		require.Nil(t, m.ProducerSub, "no auth: producerSub is null")
		require.Regexp(t, microTime, m.CreatedAt)
		require.Equal(t, pushed[0].PartitionID, m.PartitionID)
		require.Equal(t, "P", m.Partition)
		require.Equal(t, p.LeaseID, m.LeaseID)
		require.Equal(t, queueMode, m.ConsumerGroup)
		require.Equal(t, q, m.Queue)
		require.Zero(t, m.RetryCount)
	})

	t.Run("204 has no body, no length, no transfer encoding", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("empty")
		// Unknown queue, wildcard and partition routes, immediate and long-poll.
		require.Nil(t, b.pop(t, q, ""))
		require.Nil(t, b.pop(t, q, "Default"))
		require.Nil(t, b.pop(t, q, "", "wait", "true", "timeout", "50"))
		require.Nil(t, b.pop(t, q, "nope", "wait", "true", "timeout", "50", "consumerGroup", "g"))
		requireRaw204(t, b.addr(), "GET", popPath(q, ""))
		// Known queue, drained.
		b.push(t, newItem(q, "", "only", 1))
		require.NotNil(t, b.pop(t, q, "", "autoAck", "true"))
		require.Nil(t, b.pop(t, q, ""))
		requireRaw204(t, b.addr(), "GET", popPath(q, ""))
	})

	t.Run("a leased partition is 204 for the same group, other groups get the same messages", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("lease")
		pushed := b.push(t, newItem(q, "", "m1", 1), newItem(q, "", "m2", 2))
		first := b.pop(t, q, "", "batch", "1")
		require.NotNil(t, first)
		require.Equal(t, []string{"m1"}, txIDs(first.Messages))
		// Same group (queue mode): the partition is leased, even though m2 is pending.
		require.Nil(t, b.pop(t, q, ""))
		require.Nil(t, b.pop(t, q, "Default"))
		require.Nil(t, b.pop(t, q, "", "consumerGroup", ""), "an empty consumerGroup is queue mode")

		for _, g := range []string{"g1", "g2"} {
			p := b.pop(t, q, "", "consumerGroup", g, "batch", "10")
			require.NotNil(t, p, "group %s", g)
			require.Equal(t, g, p.ConsumerGroup)
			require.Equal(t, []string{"m1", "m2"}, txIDs(p.Messages))
			require.Equal(t, pushed[0].MessageID, p.Messages[0].ID)
			require.NotEqual(t, first.LeaseID, p.LeaseID)
			require.Nil(t, b.pop(t, q, "", "consumerGroup", g), "group %s holds its lease", g)
		}
	})

	t.Run("autoAck takes no lease and does not redeliver", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("auto")
		b.push(t, newItem(q, "", "a1", 1), newItem(q, "", "a2", 2))
		p := b.pop(t, q, "", "autoAck", "true", "consumerGroup", "g")
		require.NotNil(t, p)
		require.Equal(t, "", p.LeaseID)
		require.Equal(t, []string{"a1"}, txIDs(p.Messages))
		require.Equal(t, "", p.Messages[0].LeaseID)
		// Not leased (the next message comes at once) and not redelivered.
		p = b.pop(t, q, "", "consumerGroup", "g")
		require.NotNil(t, p)
		require.Equal(t, []string{"a2"}, txIDs(p.Messages))
		requireUUID(t, p.LeaseID)
		// The completion of an auto-acked message is a harmless noop.
		a := b.ack(t, map[string]any{"transactionId": "a1", "partitionId": p.PartitionID, "consumerGroup": "g"})
		require.True(t, a.Success)
		require.True(t, a.Noop)
	})

	t.Run("batch and partitions are honoured", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("batch")
		var items []map[string]any
		for i := range 5 {
			items = append(items, newItem(q, "A", fmt.Sprintf("a%d", i), i))
		}
		items = append(items, newItem(q, "B", "b0", 0), newItem(q, "C", "c0", 0))
		b.push(t, items...)

		p := b.pop(t, q, "A", "batch", "3", "consumerGroup", "g1")
		require.NotNil(t, p)
		require.Equal(t, []string{"a0", "a1", "a2"}, txIDs(p.Messages))
		require.Equal(t, 1, p.PartitionsClaimed)

		// Default batch is 1; default partitions is 1.
		p = b.pop(t, q, "", "consumerGroup", "g2")
		require.NotNil(t, p)
		require.Len(t, p.Messages, 1)
		p = b.pop(t, q, "", "consumerGroup", "g3", "batch", "100")
		require.NotNil(t, p)
		require.Equal(t, 1, p.PartitionsClaimed)

		// partitions=2 claims two partitions under one lease; batch is a global cap.
		p = b.pop(t, q, "", "consumerGroup", "g4", "batch", "100", "partitions", "2")
		require.NotNil(t, p)
		require.Equal(t, 2, p.PartitionsClaimed)
		seen := map[string]bool{}
		for _, m := range p.Messages {
			seen[m.Partition] = true
			require.Equal(t, p.LeaseID, m.LeaseID)
		}
		require.Len(t, seen, 2)
		rest := b.pop(t, q, "", "consumerGroup", "g4", "batch", "100", "partitions", "5")
		require.NotNil(t, rest)
		require.Equal(t, 1, rest.PartitionsClaimed)
		require.False(t, seen[rest.Partition])
		require.Nil(t, b.pop(t, q, "", "consumerGroup", "g4", "partitions", "5"))

		p = b.pop(t, q, "", "consumerGroup", "g5", "batch", "2", "partitions", "3")
		require.NotNil(t, p)
		require.Len(t, p.Messages, 2, "batch caps the messages across partitions")

		// partitions is ignored on the partition route.
		p = b.pop(t, q, "B", "consumerGroup", "g6", "batch", "100", "partitions", "3")
		require.NotNil(t, p)
		require.Equal(t, 1, p.PartitionsClaimed)
		require.Equal(t, []string{"b0"}, txIDs(p.Messages))
	})

	t.Run("long-poll returns when a push arrives", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("wait")
		type result struct {
			r   reply
			err error
		}
		got := make(chan result, 1)
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		defer cancel()
		parked := b.rb.Broker.Parked()
		go func() {
			r, err := b.raw.exchange(ctx, "GET", popPath(q, "", "wait", "true", "timeout", "60000"), nil)
			got <- result{r, err}
		}()
		b.waitParked(t, parked)
		b.push(t, newItem(q, "", "w1", 1))
		res := <-got
		require.NoError(t, res.err)
		var p popResult
		requireJSON(t, res.r, http.StatusOK, &p)
		require.Equal(t, []string{"w1"}, txIDs(p.Messages))
	})

	t.Run("bad query parameters", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("badq")
		b.push(t, newItem(q, "", "x", 1))
		for _, qs := range [][]string{{"batch", "abc"}, {"batch", "-1"}, {"batch", "1.5"}, {"partitions", "abc"}, {"timeout", "soon"}} {
			requireError(t, b.call(t, t.Context(), "GET", popPath(q, "", qs...), nil), http.StatusBadRequest)
			requireError(t, b.call(t, t.Context(), "GET", popPath(q, "Default", qs...), nil), http.StatusBadRequest)
		}
		// Nothing was claimed by the refused pops.
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		require.Equal(t, []string{"x"}, txIDs(p.Messages))
	})
}

func TestNamespacePop(t *testing.T) {
	t.Parallel()
	// The safety re-check of parked pops is far beyond every timeout here: a parked pop answered with a
	// message was woken by the push.
	srv := setup(t, pollEnv(map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "60000"}))

	t.Run("AutoCreatedQueueNamespaceTask", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		ns := strings.ReplaceAll(uniqueName("ns"), "-", "")
		task := strings.ReplaceAll(uniqueName("task"), "-", "")
		q := ns + "." + task + ".x"
		a.pushTxs(q, "", "auto")
		a.popNone("/api/v1/pop" + query("namespace", ns, "task", "other"))
		a.popNone("/api/v1/pop" + query("namespace", "other"+ns, "task", task))
		res := a.pop("/api/v1/pop" + query("namespace", ns, "task", task))
		require.NotNil(t, res)
		require.Equal(t, q, res.Queue)
		require.Equal(t, "auto", res.Messages[0].TransactionID)
		a.ackOK(res.Messages[0], "completed", "")
		a.pushTxs(q, "", "bytask")
		res = a.pop("/api/v1/pop" + query("task", task))
		require.NotNil(t, res)
		require.Equal(t, "bytask", res.Messages[0].TransactionID)
		a.ackOK(res.Messages[0], "completed", "")
		a.errorText("GET", "/api/v1/pop", nil, http.StatusBadRequest)
	})

	// The long-poll subtests run one at a time, each alone on the broker, so that the broker's parked
	// count is their pop's.
	t.Run("LongPollWokenByPushToAnyMatchingQueue", func(t *testing.T) {
		a := srv.rawFor(t)
		ns := strings.ReplaceAll(uniqueName("nslp"), "-", "")
		qa, qb := ns+".t.a", ns+".t.b"
		configure(t, a, map[string]any{"queue": qa, "namespace": ns, "options": nil}) // configure sets namespace/task as given ("" when absent)
		configure(t, a, map[string]any{"queue": qb, "namespace": ns, "options": nil})
		done := make(chan *popResult, 1)
		go func() {
			r, err := srv.raw.exchange(t.Context(), "GET", "/api/v1/pop"+query("namespace", ns, "wait", "true", "timeout", "10000"), nil)
			var res *popResult
			if err == nil && r.status == http.StatusOK && json.Unmarshal(r.body, &res) != nil {
				res = nil
			}
			done <- res
		}()
		srv.waitParked(t, 0) // scenario: the push arrives while the pop is parked
		a.pushTxs(qb, "", "wake")
		res := <-done
		require.NotNil(t, res, "long-poll not answered with the pushed message")
		require.Equal(t, qb, res.Queue)
		require.Equal(t, "wake", res.Messages[0].TransactionID)
	})

	t.Run("LongPollSeesQueueCreatedWhileParked", func(t *testing.T) {
		a := srv.rawFor(t)
		ns := strings.ReplaceAll(uniqueName("nsnew"), "-", "")
		configure(t, a, map[string]any{"queue": ns + ".t.a", "namespace": ns, "options": nil})
		done := make(chan int, 1)
		go func() {
			r, _ := srv.raw.exchange(t.Context(), "GET", "/api/v1/pop"+query("namespace", ns, "wait", "true", "timeout", "4000"), nil)
			done <- r.status
		}()
		srv.waitParked(t, 0) // scenario: the matching queue is created while the pop is parked
		a.pushTxs(ns+".t.new", "", "late-queue")
		// A parked namespace pop finds, and is woken by, a matching queue created after it parked.
		require.Equal(t, http.StatusOK, <-done, "a push to a newly created matching queue must answer the parked pop")
	})
}
