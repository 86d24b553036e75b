package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

type txResult struct {
	TransactionID string           `json:"transactionId"`
	Success       bool             `json:"success"`
	Error         string           `json:"error"`
	Results       []map[string]any `json:"results"`
}

func (a *api) tx(ops ...map[string]any) txResult {
	t := a.t
	t.Helper()
	var res txResult
	raw := a.json("POST", "/api/v1/transaction", map[string]any{"operations": ops}, http.StatusOK, &res)
	require.NotNil(t, res.Results, "%s", raw)
	return res
}

func txAck(m message, status, lease string) map[string]any {
	return map[string]any{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID,
		"leaseId": lease, "status": status, "consumerGroup": m.ConsumerGroup}
}

func txPush(q string, txs ...string) map[string]any {
	items := make([]map[string]any, len(txs))
	for i, tx := range txs {
		items[i] = map[string]any{"queue": q, "payload": map[string]any{"out": tx}, "transactionId": tx}
	}
	return map[string]any{"type": "push", "items": items}
}

func TestTransaction(t *testing.T) {
	t.Parallel()
	srv := setupClock(t, pollEnv(nil))

	t.Run("AckAndPushCommitTogether", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		b := srv
		a := b.rawFor(t)
		in, out := uniqueName("txin"), uniqueName("txout")
		configure(t, a, map[string]any{"queue": in, "options": map[string]any{"leaseTime": 60}})
		a.pushTxs(in, "", "input")
		m := a.popOne(popPath(in, ""))
		res := a.tx(txAck(m, "completed", m.LeaseID), txPush(out, "o1", "o2"))
		require.True(t, res.Success, "%+v", res)
		require.Len(t, res.Results, 3)
		require.Equal(t, "ack", res.Results[0]["type"])
		require.Equal(t, true, res.Results[0]["success"])
		for i, tx := range []string{"o1", "o2"} {
			r := res.Results[i+1]
			require.Equal(t, "push", r["type"])
			require.Equal(t, true, r["success"])
			require.Equal(t, tx, r["transactionId"])
			require.Equal(t, out, r["queueName"])
		}
		require.Equal(t, []string{"o1", "o2"}, a.drain(out, ""))
		// The input is consumed: nothing comes back, not even after its lease would have expired.
		b.clock.Advance(120 * time.Second)
		a.popNone(popPath(in, ""))
	})

	t.Run("DuplicatePushRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		in, out := uniqueName("dupin"), uniqueName("dupout")
		a.pushTxs(out, "", "taken")
		a.pushTxs(in, "", "input")
		m := a.popOne(popPath(in, ""))
		res := a.tx(txAck(m, "completed", m.LeaseID), txPush(out, "fresh", "taken"))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Contains(t, res.Error, "taken")
		require.Empty(t, res.Results)
		// No trace: the other output was not stored ...
		require.Equal(t, []string{"taken"}, a.drain(out, ""))
		// ... and the input is still leased and unacked: "retry" under its lease succeeds and it
		// is delivered again.
		r := a.ackOK(m, "retry", "")
		require.True(t, r.LeaseReleased)
		again := a.popOne(popPath(in, ""))
		require.Equal(t, "input", again.TransactionID)
		a.ackOK(again, "completed", "")
	})

	t.Run("RejectedAckRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		in, out := uniqueName("rejin"), uniqueName("rejout")
		a.pushTxs(in, "", "input")
		m := a.popOne(popPath(in, ""))
		res := a.tx(txPush(out, "o1"), txAck(m, "completed", uuid.NewString()))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QTXN"), "%q", res.Error)
		require.Contains(t, res.Error, "invalid or expired lease")
		require.Empty(t, res.Results)
		a.popNone(popPath(out, ""))
		r := a.ackOK(m, "completed", "")
		require.False(t, r.Noop, "the rolled-back transaction must not have acked the input")
		require.True(t, r.LeaseReleased)
	})

	t.Run("AckOfAConsumedMessageRollsBackEverything", func(t *testing.T) {
		// A completion under the lease that delivered it, of a message already consumed, is a noop on
		// /ack; in a transaction it would apply the push a second time for one consumption.
		t.Parallel()
		a := srv.rawFor(t)
		in, out := uniqueName("againin"), uniqueName("againout")
		a.pushTxs(in, "", "input")
		m := a.popOne(popPath(in, ""))
		res := a.tx(txAck(m, "completed", m.LeaseID), txPush(out, "first"))
		require.True(t, res.Success, "%+v", res)
		res = a.tx(txAck(m, "completed", m.LeaseID), txPush(out, "second"))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QTXN"), "%q", res.Error)
		require.Contains(t, res.Error, "already committed")
		require.Empty(t, res.Results)
		require.Equal(t, []string{"first"}, a.drain(out, ""))
		// On /ack the same repeat stays a harmless noop.
		require.True(t, a.ackOK(m, "completed", "").Noop)
	})

	t.Run("FailedAckSpendsRetryBudget", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("txfail")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 1, "retryDelay": 0}})
		a.pushTxs(q, "", "f1")
		m := a.popOne(popPath(q, ""))
		res := a.tx(txAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, false, res.Results[0]["dlq"])
		m = a.popOne(popPath(q, ""))
		require.Equal(t, 1, m.RetryCount)
		res = a.tx(txAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, true, res.Results[0]["dlq"])
		a.popNone(popPath(q, ""))
		require.Equal(t, 1, a.dlq("queue", q).Total)
	})

	t.Run("BadRequests", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		require.Equal(t, "operations array required",
			a.errorText("POST", "/api/v1/transaction", map[string]any{}, http.StatusBadRequest))
		require.Equal(t, "operations array required",
			a.errorText("POST", "/api/v1/transaction", map[string]any{"operations": "x"}, http.StatusBadRequest))
		require.Equal(t, "operations array cannot be empty",
			a.errorText("POST", "/api/v1/transaction", map[string]any{"operations": []any{}}, http.StatusBadRequest))
		for _, op := range []any{
			map[string]any{"type": "publish", "queue": "q"},
			42,
			map[string]any{"type": "ack"},
			map[string]any{"type": "ack", "transactionId": "t", "partitionId": "not-a-uuid"},
			map[string]any{"type": "push", "items": "nope"},
		} {
			a.errorText("POST", "/api/v1/transaction", map[string]any{"operations": []any{op}}, http.StatusBadRequest)
		}
	})
}

func TestTransactionLimits(t *testing.T) {
	t.Parallel()
	srv := setup(t, pollEnv(nil))

	t.Run("DuplicateWithinOneTransaction", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		out := uniqueName("dupself")
		res := a.tx(txPush(out, "same", "same"))
		require.False(t, res.Success, "%+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Empty(t, res.Results)
		a.popNone(popPath(out, ""))
	})

	t.Run("TransactionalPushRespectsMaxSize", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("txmax")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"maxSize": 1}})
		a.pushTxs(q, "", "m0")
		res := a.tx(txPush(q, "over"))
		// maxSize holds for transactional pushes too (QFULL rolls the transaction back).
		require.False(t, res.Success, "a transactional push into a full queue must not commit: %+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QFULL"), "%q", res.Error)
		require.Equal(t, []string{"m0"}, a.drain(q, ""))
	})
}
