package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// The rejection texts of the ack rules.
const (
	rejectLease        = "invalid or expired lease"
	rejectCommitted    = "already committed: the cursor moved past this message before this ack"
	rejectUnresolvable = "unresolvable: transaction not in the ack window (hash purged or never pushed); if leased, the message redelivers"
)

// ackBatch posts to /api/v1/ack/batch.
func (b *testBundle) ackBatch(t testing.TB, group string, acks ...map[string]any) []ackResult {
	t.Helper()
	body := map[string]any{"acknowledgments": acks}
	if group != "" {
		body["consumerGroup"] = group
	}
	r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body)
	txs := make([]string, len(acks))
	for i, a := range acks {
		txs[i] = a["transactionId"].(string)
	}
	return checkAcks(t, r, txs)
}

// ackOf builds an acknowledgement of m; lease "" leaves it out.
func ackOf(m message, status, lease string) map[string]any {
	a := map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": status}
	if lease != "" {
		a["leaseId"] = lease
	}
	if m.ConsumerGroup != "" && m.ConsumerGroup != queueMode {
		a["consumerGroup"] = m.ConsumerGroup
	}
	return a
}

func requireAckOK(t testing.TB, a ackResult, queue, partition string) {
	t.Helper()
	require.True(t, a.Success, "%+v", a)
	require.Nil(t, a.Error)
	require.NotNil(t, a.QueueName)
	require.Equal(t, queue, *a.QueueName)
	require.NotNil(t, a.PartitionName)
	require.Equal(t, partition, *a.PartitionName)
}

func requireRejected(t testing.TB, a ackResult, text string) {
	t.Helper()
	require.False(t, a.Success, "%+v", a)
	require.NotNil(t, a.Error, "%+v", a)
	require.Equal(t, text, *a.Error)
	require.False(t, a.LeaseReleased)
	require.False(t, a.DLQ)
	require.False(t, a.Noop)
}

// freshQueue configures a queue with retryDelay 0 (so failed acks are redelivered at once) plus opts.
func (b *testBundle) freshQueue(t testing.TB, prefix string, opts map[string]any) (string, string) {
	t.Helper()
	q := uniqueName(prefix)
	o := map[string]any{"retryDelay": 0}
	for k, v := range opts {
		o[k] = v
	}
	res := configure(t, b.raw, map[string]any{"queue": q, "options": o})
	return q, res["partitionId"].(string)
}

func TestAck(t *testing.T) {
	t.Parallel()
	b := setupClock(t, nil)

	t.Run("single ack, lease release, repeated completion is a noop", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "ack", nil)
		b.push(t, newItem(q, "", "t1", 1), newItem(q, "", "t2", 2))
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		m := p.Messages[0]
		a := b.ack(t, ackOf(m, "completed", p.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		require.False(t, a.DLQ)
		require.False(t, a.Noop)

		again := b.ack(t, ackOf(m, "completed", p.LeaseID))
		requireAckOK(t, again, q, "Default")
		require.True(t, again.Noop)
		require.False(t, again.LeaseReleased)
		noLease := b.ack(t, ackOf(m, "", ""))
		require.True(t, noLease.Success)
		require.True(t, noLease.Noop)
		succ := b.ack(t, ackOf(m, "success", p.LeaseID))
		require.True(t, succ.Success)
		require.True(t, succ.Noop)

		next := b.pop(t, q, "")
		require.NotNil(t, next, "the lease was released")
		require.Equal(t, []string{"t2"}, txIDs(next.Messages))
	})

	t.Run("batch ack in request order", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "ackb", nil)
		b.push(t, newItem(q, "", "t0", 0), newItem(q, "", "t1", 1), newItem(q, "", "t2", 2), newItem(q, "", "t3", 3))
		p := b.pop(t, q, "", "batch", "3", "consumerGroup", "grp")
		require.NotNil(t, p)
		require.Len(t, p.Messages, 3)
		acks := make([]map[string]any, 0, 4)
		for _, m := range p.Messages {
			a := ackOf(m, "completed", p.LeaseID)
			a["consumerGroup"] = "ignored" // the top-level group overrides per-item groups
			acks = append(acks, a)
		}
		acks = append(acks, ackOf(p.Messages[2], "completed", p.LeaseID)) // repeated in the same request
		res := b.ackBatch(t, "grp", acks...)
		for i, r := range res[:3] {
			requireAckOK(t, r, q, "Default")
			require.Equal(t, i == 2, r.LeaseReleased, "the lease ends with the last delivered message")
			require.False(t, r.Noop)
		}
		require.True(t, res[3].Success)
		require.True(t, res[3].Noop)
		require.False(t, res[3].LeaseReleased)

		p = b.pop(t, q, "", "batch", "10", "consumerGroup", "grp")
		require.NotNil(t, p)
		require.Equal(t, []string{"t3"}, txIDs(p.Messages))
	})

	t.Run("empty acknowledgments", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"acknowledgments":[]}`, `{"consumerGroup":"g","acknowledgments":[]}`} {
			r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body)
			requireJSON(t, r, http.StatusOK, nil)
			require.Equal(t, "[]", string(r.body))
		}
	})

	t.Run("per-request indices under concurrency", func(t *testing.T) {
		t.Parallel()
		pid := uuid.NewString()
		reqs := make([][]map[string]any, 10)
		txs := make([][]string, len(reqs))
		for g := range reqs {
			for i := range 1 + g%4 {
				tx := fmt.Sprintf("r%d-%d", g, i)
				reqs[g] = append(reqs[g], map[string]any{"transactionId": tx, "partitionId": pid})
				txs[g] = append(txs[g], tx)
			}
		}
		replies := parallel(t, len(reqs), func(g int) (reply, error) {
			return b.raw.exchange(t.Context(), "POST", "/api/v1/ack/batch", map[string]any{"acknowledgments": reqs[g]})
		})
		for g, r := range replies {
			for _, res := range checkAcks(t, r, txs[g]) { // checks index 0..n-1 and request order
				requireRejected(t, res, rejectUnresolvable)
			}
		}
	})

	t.Run("unresolvable: the cursor does not move and the message redelivers", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "unres", nil)
		b.push(t, newItem(q, "", "u1", 1))
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		m := p.Messages[0]

		a := b.ack(t, map[string]any{"transactionId": "never-pushed", "partitionId": m.PartitionID, "leaseId": p.LeaseID})
		requireRejected(t, a, rejectUnresolvable)
		a = b.ack(t, map[string]any{"transactionId": m.TransactionID, "partitionId": uuid.NewString()})
		requireRejected(t, a, rejectUnresolvable)
		res := b.ackBatch(t, "", map[string]any{"transactionId": "nope", "partitionId": m.PartitionID, "leaseId": p.LeaseID, "status": "failed"})
		requireRejected(t, res[0], rejectUnresolvable)

		// The lease is intact (a retry under it releases it) and the message comes back unchanged.
		r := b.ack(t, ackOf(m, "retry", p.LeaseID))
		requireAckOK(t, r, q, "Default")
		require.True(t, r.LeaseReleased)
		again := b.pop(t, q, "")
		require.NotNil(t, again)
		require.Equal(t, m.ID, again.Messages[0].ID)
		require.Zero(t, again.Messages[0].RetryCount, "retry does not count")
	})

	t.Run("invalid or expired lease: the cursor does not move and the message redelivers", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		q, _ := b.freshQueue(t, "lease", map[string]any{"leaseTime": 60})
		b.push(t, newItem(q, "", "l1", 1), newItem(q, "", "l2", 2))
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		m := p.Messages[0]

		requireRejected(t, b.ack(t, ackOf(m, "completed", uuid.NewString())), rejectLease)
		res := b.ackBatch(t, "", ackOf(m, "failed", uuid.NewString()), ackOf(m, "dlq", uuid.NewString()))
		requireRejected(t, res[0], rejectLease)
		requireRejected(t, res[1], rejectLease)

		// Nothing moved: once the lease expires, the same message is delivered again.
		require.Nil(t, b.pop(t, q, ""), "the lease still holds")
		b.clock.Advance(61 * time.Second)
		r := b.call(t, t.Context(), "GET", popPath(q, "", "wait", "true", "timeout", "30000"), nil)
		var again popResult
		requireJSON(t, r, http.StatusOK, &again)
		require.Equal(t, m.ID, again.Messages[0].ID)
		require.NotEqual(t, p.LeaseID, again.LeaseID)

		// The old lease is now expired and replaced; an ack without a lease is not validated.
		requireRejected(t, b.ack(t, ackOf(m, "completed", p.LeaseID)), rejectLease)
		requireAckOK(t, b.ack(t, ackOf(again.Messages[0], "completed", "")), q, "Default")
		next := b.pop(t, q, "", "wait", "true", "timeout", "30000")
		require.NotNil(t, next)
		require.Equal(t, "l2", next.Messages[0].TransactionID)
	})

	t.Run("already committed", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "commit", nil)
		b.push(t, newItem(q, "", "c1", 1), newItem(q, "", "c2", 2), newItem(q, "", "c3", 3))
		p1 := b.pop(t, q, "")
		require.NotNil(t, p1)
		m1 := p1.Messages[0]
		requireAckOK(t, b.ack(t, ackOf(m1, "completed", p1.LeaseID)), q, "Default")

		// A failed / dlq ack for a message behind the cursor is refused, even under its own lease.
		requireRejected(t, b.ack(t, ackOf(m1, "failed", p1.LeaseID)), rejectCommitted)
		requireRejected(t, b.ack(t, ackOf(m1, "dlq", "")), rejectCommitted)
		requireRejected(t, b.ack(t, ackOf(m1, "completed", uuid.NewString())), rejectCommitted)

		// The cursor did not move back: the next pop serves c2.
		p2 := b.pop(t, q, "")
		require.NotNil(t, p2)
		m2 := p2.Messages[0]
		require.Equal(t, "c2", m2.TransactionID)

		// A completion without a lease is a harmless repeat.
		repeated := b.ack(t, ackOf(m1, "completed", ""))
		require.True(t, repeated.Success, "%+v", repeated)
		require.True(t, repeated.Noop)

		// None of this disturbed c2's lease.
		a := b.ack(t, ackOf(m2, "completed", p2.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		p3 := b.pop(t, q, "")
		require.NotNil(t, p3)
		require.Equal(t, "c3", p3.Messages[0].TransactionID)
	})

	t.Run("repeated completion: noop under the delivering lease, already committed under another", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "relax", nil)
		b.push(t, newItem(q, "", "c1", 1), newItem(q, "", "c2", 2))
		p1 := b.pop(t, q, "")
		require.NotNil(t, p1)
		m1 := p1.Messages[0]
		requireAckOK(t, b.ack(t, ackOf(m1, "completed", p1.LeaseID)), q, "Default")
		p2 := b.pop(t, q, "")
		require.NotNil(t, p2)
		m2 := p2.Messages[0]
		require.Equal(t, "c2", m2.TransactionID)

		// decisions.md: a completion of a message behind the cursor is a noop when "repeated under the
		// lease that delivered it (or with no lease)"; "a completion under another lease" is "already
		// committed", even when that other lease is the partition's current one.
		requireRejected(t, b.ack(t, ackOf(m1, "completed", p2.LeaseID)), rejectCommitted)
		repeated := b.ack(t, ackOf(m1, "completed", p1.LeaseID))
		require.True(t, repeated.Success, "%+v", repeated)
		require.True(t, repeated.Noop)

		// None of this disturbed c2's lease.
		a := b.ack(t, ackOf(m2, "completed", p2.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
	})

	t.Run("failed within retryLimit redelivers with retryCount incremented", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "retry", map[string]any{"retryLimit": 2})
		b.push(t, newItem(q, "", "f1", 1), newItem(q, "", "f2", 2))
		var lastLease string
		for want := range 3 {
			p := b.pop(t, q, "")
			require.NotNil(t, p, "delivery %d", want)
			m := p.Messages[0]
			require.Equal(t, "f1", m.TransactionID)
			require.Equal(t, want, m.RetryCount)
			require.NotEqual(t, lastLease, p.LeaseID)
			lastLease = p.LeaseID
			a := b.ack(t, map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": p.LeaseID, "status": "failed", "error": "boom"})
			requireAckOK(t, a, q, "Default")
			require.True(t, a.LeaseReleased)
			require.Equal(t, want == 2, a.DLQ, "retries exhausted after retryLimit failures")
			if want < 2 {
				// The released lease is no longer valid.
				requireRejected(t, b.ack(t, ackOf(m, "completed", p.LeaseID)), rejectLease)
			}
		}
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		require.Equal(t, "f2", p.Messages[0].TransactionID)
		require.Zero(t, p.Messages[0].RetryCount, "the next message has a fresh budget")
	})

	t.Run("failed past retryLimit goes to the DLQ and the next message is served", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "nodlq", map[string]any{"retryLimit": 0})
		b.push(t, newItem(q, "", "d1", 1), newItem(q, "", "d2", 2), newItem(q, "", "d3", 3))
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		a := b.ack(t, ackOf(p.Messages[0], "failed", p.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.DLQ)
		require.True(t, a.LeaseReleased)

		p = b.pop(t, q, "")
		require.NotNil(t, p)
		require.Equal(t, "d2", p.Messages[0].TransactionID)
		a = b.ack(t, ackOf(p.Messages[0], "dlq", p.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.DLQ)
		require.True(t, a.LeaseReleased)

		p = b.pop(t, q, "")
		require.NotNil(t, p)
		require.Equal(t, "d3", p.Messages[0].TransactionID)
	})

	t.Run("status dlq with the default retry budget", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "dlq", nil)
		b.push(t, newItem(q, "", "x1", 1), newItem(q, "", "x2", 2))
		p := b.pop(t, q, "", "batch", "2")
		require.NotNil(t, p)
		res := b.ackBatch(t, "", ackOf(p.Messages[0], "dlq", p.LeaseID), ackOf(p.Messages[1], "completed", p.LeaseID))
		requireAckOK(t, res[0], q, "Default")
		require.True(t, res[0].DLQ)
		require.False(t, res[0].LeaseReleased)
		requireAckOK(t, res[1], q, "Default")
		require.False(t, res[1].DLQ)
		require.True(t, res[1].LeaseReleased)
		require.Nil(t, b.pop(t, q, ""))
	})

	t.Run("validation errors", func(t *testing.T) {
		t.Parallel()
		pid := uuid.NewString()
		for _, c := range []struct{ body, want string }{
			{`{}`, "transactionId is required"},
			{`{"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":5,"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":null,"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":"t"}`, "partitionId is required to ensure message uniqueness"},
			{`{"transactionId":"t","partitionId":5}`, "partitionId is required to ensure message uniqueness"},
			{`{"transactionId":"t","partitionId":null}`, "partitionId is required to ensure message uniqueness"},
		} {
			requireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/ack", c.body), http.StatusBadRequest, c.want)
		}
		for _, bad := range []string{"not-a-uuid", pid + "0", strings.ReplaceAll(pid, "-", "")} {
			requireError(t, b.call(t, t.Context(), "POST", "/api/v1/ack", map[string]any{"transactionId": "t", "partitionId": bad}), http.StatusBadRequest)
		}
		for _, body := range []string{`{"transactionId":`, `[]x`, ``, ` `} {
			requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack", body))
		}
		requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack", nil))

		for _, c := range []struct{ body, want string }{
			{`{}`, "acknowledgments array is required"},
			{`{"consumerGroup":"g"}`, "acknowledgments array is required"},
			{`{"acknowledgments":null}`, "acknowledgments array is required"},
			{`{"acknowledgments":"x"}`, "acknowledgments array is required"},
			{`{"acknowledgments":{"transactionId":"t"}}`, "acknowledgments array is required"},
			{`{"acknowledgments":[{"partitionId":"` + pid + `"}]}`, "Each acknowledgment must have a valid transactionId string"},
			{`{"acknowledgments":[{"transactionId":1,"partitionId":"` + pid + `"}]}`, "Each acknowledgment must have a valid transactionId string"},
			{`{"acknowledgments":[{"transactionId":"t"}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
			{`{"acknowledgments":[{"transactionId":"t","partitionId":false}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
			{`{"acknowledgments":[{"transactionId":"t","partitionId":"` + pid + `"},{"transactionId":"u"}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
		} {
			requireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", c.body), http.StatusBadRequest, c.want)
		}
		requireError(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch",
			map[string]any{"acknowledgments": []any{map[string]any{"transactionId": "t", "partitionId": "zzz"}}}), http.StatusBadRequest)
		for _, body := range []string{`{"acknowledgments":[`, `nope`, ``} {
			requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body))
		}
	})

	t.Run("a refused batch applies nothing", func(t *testing.T) {
		t.Parallel()
		q, _ := b.freshQueue(t, "refuse", nil)
		b.push(t, newItem(q, "", "r1", 1))
		p := b.pop(t, q, "")
		require.NotNil(t, p)
		m := p.Messages[0]
		r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", map[string]any{"acknowledgments": []any{
			ackOf(m, "completed", p.LeaseID),
			map[string]any{"transactionId": "x", "partitionId": "not-a-uuid"},
		}})
		requireError(t, r, http.StatusBadRequest)
		// The valid first item was not applied: the message is still pending under its lease.
		a := b.ack(t, ackOf(m, "retry", p.LeaseID))
		requireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		again := b.pop(t, q, "")
		require.NotNil(t, again)
		require.Equal(t, m.ID, again.Messages[0].ID)
	})
}
