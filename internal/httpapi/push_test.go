package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestPush(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)

	t.Run("queued item, trace id echoed, auto-created queue", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("push")
		trace := uuid.NewString()
		res := b.push(t, map[string]any{"queue": q, "partition": "p1", "payload": map[string]any{"k": "v"}, "transactionId": "t1", "traceId": trace})
		require.Equal(t, "queued", res[0].Status)
		require.NotNil(t, res[0].TraceID)
		require.Equal(t, trace, *res[0].TraceID)
		require.Equal(t, q, res[0].QueueName)

		p := b.pop(t, q, "p1")
		require.NotNil(t, p, "the auto-created queue serves the message")
		require.Equal(t, res[0].MessageID, p.Messages[0].ID)
		require.Equal(t, res[0].PartitionID, p.Messages[0].PartitionID)
		require.NotNil(t, p.Messages[0].TraceID)
		require.Equal(t, trace, *p.Messages[0].TraceID)
		require.JSONEq(t, `{"k":"v"}`, string(p.Messages[0].Data))
	})

	t.Run("trace id null when not given, default partition, generated transaction id", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("push")
		r := b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[{"queue":"`+q+`","payload":{"n":1}},{"queue":"`+q+`","traceId":"","transactionId":""}]}`)
		var raw []map[string]any
		requireJSON(t, r, http.StatusCreated, &raw)
		require.Len(t, raw, 2)
		for i, it := range raw {
			require.Equal(t, queuedKeys, sortedKeys(it))
			v, present := it["trace_id"]
			require.True(t, present, "trace_id is present")
			require.Nil(t, v, "trace_id is null when none was given")
			require.Equal(t, json.Number(strconv.Itoa(i)), it["index"])
			require.NotEmpty(t, it["transaction_id"], "a transaction id is generated")
		}
		require.NotEqual(t, raw[0]["transaction_id"], raw[1]["transaction_id"])

		p := b.pop(t, q, "Default", "batch", "10")
		require.NotNil(t, p)
		require.Equal(t, "Default", p.Partition)
		require.Len(t, p.Messages, 2)
		require.Nil(t, p.Messages[0].TraceID)
		require.Equal(t, raw[0]["transaction_id"], p.Messages[0].TransactionID)
		require.Equal(t, "null", string(p.Messages[1].Data), "a missing payload is stored as null")
	})

	t.Run("duplicates within a request and across requests", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("dup")
		res := b.push(t,
			newItem(q, "p", "a", 1),
			newItem(q, "p", "a", 2),
			newItem(q, "other", "a", 3), // uniqueness is per partition
			newItem(q, "p", "b", 4),
		)
		require.Equal(t, []string{"queued", "duplicate", "queued", "queued"}, []string{res[0].Status, res[1].Status, res[2].Status, res[3].Status})
		require.Equal(t, res[0].MessageID, res[1].MessageID, "a duplicate names the original message")
		require.Equal(t, duplicateKeys, res[1].keys, "no partition_id / trace_id on duplicates")
		require.NotEqual(t, res[0].MessageID, res[2].MessageID)

		again := b.push(t, map[string]any{"queue": q, "partition": "p", "transactionId": "a", "payload": 9, "traceId": uuid.NewString()})
		require.Equal(t, "duplicate", again[0].Status)
		require.Equal(t, res[0].MessageID, again[0].MessageID)
		require.Equal(t, duplicateKeys, again[0].keys)

		// Nothing was stored by the duplicates: partition p holds a then b, with a's first payload.
		p := b.pop(t, q, "p", "batch", "10")
		require.NotNil(t, p)
		require.Equal(t, []string{"a", "b"}, txIDs(p.Messages))
		require.JSONEq(t, `1`, string(p.Messages[0].Data))
	})

	t.Run("empty items", func(t *testing.T) {
		t.Parallel()
		r := b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[]}`)
		requireJSON(t, r, http.StatusCreated, nil)
		require.Equal(t, "[]", string(r.body))
	})

	t.Run("per-request indices under concurrency", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("idx")
		reqs := make([][]map[string]any, 8)
		for g := range reqs {
			for i := range 1 + g%3 {
				reqs[g] = append(reqs[g], newItem(q, fmt.Sprintf("p%d", g%2), fmt.Sprintf("g%d-i%d", g, i), i))
			}
		}
		replies := parallel(t, len(reqs), func(g int) (reply, error) {
			return b.raw.exchange(t.Context(), "POST", "/api/v1/push", map[string]any{"items": reqs[g]})
		})
		for g, r := range replies {
			for _, res := range checkPush(t, r, reqs[g]) { // checks index 0..n-1 and the transaction ids in order
				require.Equal(t, "queued", res.Status)
			}
		}
	})

	t.Run("validation errors", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("bad")
		for _, c := range []struct{ body, want string }{
			{`{}`, "items array is required"},
			{`{"items":null}`, "items array is required"},
			{`{"items":"x"}`, "items array is required"},
			{`{"items":{"queue":"q"}}`, "items array is required"},
			{`{"items":[{"payload":1}]}`, "Queue must be a string"},
			{`{"items":[{"queue":5}]}`, "Queue must be a string"},
			{`{"items":[{"queue":null}]}`, "Queue must be a string"},
			{`{"items":[{"queue":"` + q + `","partition":5}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","partition":{}}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":5}]}`, "TransactionId must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":true}]}`, "TransactionId must be a string"},
			{`{"items":[{"queue":"` + q + `","traceId":5}]}`, "TraceId must be a string"},
			{`{"items":[{"queue":"` + q + `","traceId":["x"]}]}`, "TraceId must be a string"},
			// Checked item by item: the first failure wins, and nothing of the request is stored.
			{`{"items":[{"queue":"` + q + `","transactionId":"ok"},{"queue":"` + q + `","partition":1}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":1},{"queue":7}]}`, "TransactionId must be a string"},
		} {
			requireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/push", c.body), http.StatusBadRequest, c.want)
		}
		// A non-UUID traceId is a 400 for this request.
		for _, tr := range []string{"not-a-uuid", "019dc9b7cb4f7c1a9b217e8a5c3a40e1x", "{019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1}"} {
			requireError(t, b.call(t, t.Context(), "POST", "/api/v1/push",
				map[string]any{"items": []any{map[string]any{"queue": q, "transactionId": "ok", "traceId": tr}}}), http.StatusBadRequest)
		}
		// Unparseable or empty bodies.
		for _, body := range []string{`{"items":[`, `{"items":[]}}`, `nope`, ``, "\n\t "} {
			requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/push", body))
		}
		requireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/push", nil))
		// Nothing of any refused request was stored.
		require.Nil(t, b.pop(t, q, "", "batch", "10"))
	})

	t.Run("a bad request never fails a concurrent good one", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("iso")
		item := func(i int) map[string]any {
			if i%2 == 0 {
				return map[string]any{"queue": q, "transactionId": fmt.Sprintf("bad-%d", i), "traceId": "bad-trace"}
			}
			return newItem(q, "", fmt.Sprintf("good-%d", i), i)
		}
		replies := parallel(t, 10, func(i int) (reply, error) {
			return b.raw.exchange(t.Context(), "POST", "/api/v1/push", map[string]any{"items": []any{item(i)}})
		})
		for i, r := range replies {
			if i%2 == 0 {
				requireError(t, r, http.StatusBadRequest)
				continue
			}
			res := checkPush(t, r, []map[string]any{item(i)})
			require.Equal(t, "queued", res[0].Status)
		}
		p := b.pop(t, q, "", "batch", "100")
		require.NotNil(t, p)
		require.Len(t, p.Messages, 5)
	})
}
