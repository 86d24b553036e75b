package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

type smTxResult struct {
	TransactionID string           `json:"transactionId"`
	Success       bool             `json:"success"`
	Error         string           `json:"error"`
	Results       []map[string]any `json:"results"`
}

func smTx(t testing.TB, a *api, ops ...map[string]any) smTxResult {
	t.Helper()
	var res smTxResult
	raw := smJSON(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": ops}, http.StatusOK, &res)
	require.NotNil(t, res.Results, "%s", raw)
	return res
}

func smTxAck(m smMessage, status, lease string) map[string]any {
	return map[string]any{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID,
		"leaseId": lease, "status": status, "consumerGroup": m.ConsumerGroup}
}

func smTxPush(q string, txs ...string) map[string]any {
	items := make([]map[string]any, len(txs))
	for i, tx := range txs {
		items[i] = map[string]any{"queue": q, "payload": map[string]any{"out": tx}, "transactionId": tx}
	}
	return map[string]any{"type": "push", "items": items}
}

func TestTransaction(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("AckAndPushCommitTogether", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("txin"), smName("txout")
		smConfigure(t, a, in, "", map[string]any{"leaseTime": 1})
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxAck(m, "completed", m.LeaseID), smTxPush(out, "o1", "o2"))
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
		require.Equal(t, []string{"o1", "o2"}, smDrain(t, a, out, ""))
		// The input is consumed: nothing comes back, not even after its 1 s lease would have expired.
		smNoMessage(t, a, smPopPath(in, "", "wait", "true", "timeout", "2000"))
	})

	t.Run("DuplicatePushRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("dupin"), smName("dupout")
		smPush(t, a, out, "", "taken")
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxAck(m, "completed", m.LeaseID), smTxPush(out, "fresh", "taken"))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Contains(t, res.Error, "taken")
		require.Empty(t, res.Results)
		// No trace: the other output was not stored ...
		require.Equal(t, []string{"taken"}, smDrain(t, a, out, ""))
		// ... and the input is still leased and unacked: "retry" under its lease succeeds and it
		// is delivered again.
		r := smAckOK(t, a, m, "retry", "")
		require.True(t, r.LeaseReleased)
		again := smOne(t, a, smPopPath(in, ""))
		require.Equal(t, "input", again.TransactionID)
		smAckOK(t, a, again, "completed", "")
	})

	t.Run("RejectedAckRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("rejin"), smName("rejout")
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxPush(out, "o1"), smTxAck(m, "completed", uuid.NewString()))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QTXN"), "%q", res.Error)
		require.Contains(t, res.Error, "invalid or expired lease")
		require.Empty(t, res.Results)
		smNoMessage(t, a, smPopPath(out, ""))
		r := smAckOK(t, a, m, "completed", "")
		require.False(t, r.Noop, "the rolled-back transaction must not have acked the input")
		require.True(t, r.LeaseReleased)
	})

	t.Run("FailedAckSpendsRetryBudget", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("txfail")
		smConfigure(t, a, q, "", map[string]any{"retryLimit": 1, "retryDelay": 0})
		smPush(t, a, q, "", "f1")
		m := smOne(t, a, smPopPath(q, ""))
		res := smTx(t, a, smTxAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, false, res.Results[0]["dlq"])
		m = smOne(t, a, smPopPath(q, ""))
		require.Equal(t, 1, m.RetryCount)
		res = smTx(t, a, smTxAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, true, res.Results[0]["dlq"])
		smNoMessage(t, a, smPopPath(q, ""))
		require.Equal(t, 1, smDLQ(t, a, "queue", q).Total)
	})

	t.Run("BadRequests", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		require.Equal(t, "operations array required",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{}, http.StatusBadRequest))
		require.Equal(t, "operations array required",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": "x"}, http.StatusBadRequest))
		require.Equal(t, "operations array cannot be empty",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": []any{}}, http.StatusBadRequest))
		for _, op := range []any{
			map[string]any{"type": "publish", "queue": "q"},
			42,
			map[string]any{"type": "ack"},
			map[string]any{"type": "ack", "transactionId": "t", "partitionId": "not-a-uuid"},
			map[string]any{"type": "push", "items": "nope"},
		} {
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": []any{op}}, http.StatusBadRequest)
		}
	})
}

func TestTransactionLimits(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("DuplicateWithinOneTransaction", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		out := smName("dupself")
		res := smTx(t, a, smTxPush(out, "same", "same"))
		require.False(t, res.Success, "%+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Empty(t, res.Results)
		smNoMessage(t, a, smPopPath(out, ""))
	})

	t.Run("TransactionalPushRespectsMaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("txmax")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 1})
		smPush(t, a, q, "", "m0")
		res := smTx(t, a, smTxPush(q, "over"))
		// maxSize holds for transactional pushes too (QFULL rolls the transaction back).
		require.False(t, res.Success, "a transactional push into a full queue must not commit: %+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QFULL"), "%q", res.Error)
		require.Equal(t, []string{"m0"}, smDrain(t, a, q, ""))
	})
}
