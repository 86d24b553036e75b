package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

type cycleResp struct {
	Success         bool            `json:"success"`
	Error           string          `json:"error"`
	QueryID         string          `json:"query_id"`
	PartitionID     string          `json:"partition_id"`
	QueueName       *string         `json:"queueName"`
	StateOpsApplied int             `json:"state_ops_applied"`
	PushResults     []pushResult    `json:"push_results"`
	AckResult       json.RawMessage `json:"ack_result"`
	Duplicate       bool            `json:"duplicate"`
}

func (a *api) cycle(body any) cycleResp {
	a.t.Helper()
	st, out := a.do("POST", "/streams/v1/cycle", body)
	require.Equal(a.t, http.StatusOK, st, string(out))
	var r cycleResp
	require.NoError(a.t, json.Unmarshal(out, &r), string(out))
	return r
}

func (a *api) register(name, hash string, reset bool) (int, map[string]any) {
	a.t.Helper()
	st, out := a.do("POST", "/streams/v1/queries", map[string]any{"name": name, "source_queue": "src",
		"sink_queue": "sink", "config_hash": hash, "reset": reset})
	var m map[string]any
	require.NoError(a.t, json.Unmarshal(out, &m), string(out))
	return st, m
}

type stateRow struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

func (a *api) state(body map[string]any) []stateRow {
	a.t.Helper()
	st, out := a.do("POST", "/streams/v1/state/get", body)
	require.Equal(a.t, http.StatusOK, st, string(out))
	var r struct {
		Success bool       `json:"success"`
		Rows    []stateRow `json:"rows"`
	}
	require.NoError(a.t, json.Unmarshal(out, &r))
	require.True(a.t, r.Success)
	return r.Rows
}

func keysOf(rows []stateRow) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.Key)
	}
	return out
}

// TestStreamsRegister walks the registration decision table: fresh insert, same hash (state kept even
// with reset), changed hash without reset (409, nothing changed), changed hash with reset (state wiped),
// and the public schema's cascade from queries to state.
func TestStreamsRegister(t *testing.T) {
	t.Parallel()
	rb := setup(t, nil).rb
	a := newAPI(t, rb.URL)

	for _, c := range []struct {
		body any
		want string
	}{
		{[]int{1}, "request body must be a JSON object"},
		{map[string]any{"source_queue": "s", "config_hash": "h"}, "name is required"},
		{map[string]any{"name": "n", "config_hash": "h"}, "source_queue is required"},
		{map[string]any{"name": "n", "source_queue": "s", "config_hash": ""}, "config_hash is required"},
	} {
		st, out := a.do("POST", "/streams/v1/queries", c.body)
		require.Equal(t, http.StatusBadRequest, st)
		require.JSONEq(t, fmt.Sprintf(`{"error":%q}`, c.want), string(out))
	}
	for _, path := range []string{"/streams/v1/queries", "/streams/v1/cycle", "/streams/v1/state/get"} {
		for _, raw := range []string{"", "null", "[1]", `"x"`, "{"} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", rb.URL+path, strings.NewReader(raw))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %q", path, raw)
			require.JSONEq(t, `{"error":"request body must be a JSON object"}`, string(out), "%s %q", path, raw)
		}
	}

	st, m := a.register("q1", "h1", false)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, true, m["success"])
	require.Equal(t, true, m["fresh"])
	require.Equal(t, false, m["reset"])
	id := m["query_id"].(string)
	require.Len(t, id, 36)

	// Some state for the query.
	push := a.push(pushItem{Queue: "src", Partition: "p", Payload: 1})
	pid := push[0].PartitionID
	r := a.cycle(map[string]any{"query_id": id, "partition_id": pid,
		"state_ops": []map[string]any{{"type": "upsert", "key": "k", "value": map[string]int{"n": 1}}}})
	require.True(t, r.Success, r.Error)
	stateOf := map[string]any{"query_id": id, "partition_id": pid}

	st, m = a.register("q1", "h1", true)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, map[string]any{"success": true, "query_id": id, "name": "q1", "config_hash": "h1", "fresh": false, "reset": false}, m)
	require.Len(t, a.state(stateOf), 1, "same hash: reset:true keeps the state")

	st, m = a.register("q1", "h2", false)
	require.Equal(t, http.StatusConflict, st)
	require.Equal(t, map[string]any{"success": false, "query_id": id, "name": "q1",
		"error": "config_hash mismatch: operator chain changed for queryId 'q1'. Pass reset:true to wipe existing state, or use a new queryId."}, m)
	require.Len(t, a.state(stateOf), 1)

	st, m = a.register("q1", "h2", true)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, false, m["fresh"])
	require.Equal(t, true, m["reset"])
	require.Equal(t, id, m["query_id"])
	require.Empty(t, a.state(stateOf), "changed hash with reset wipes the state")

	// The schema is public: users delete a query with SQL and its state goes with it.
	r = a.cycle(map[string]any{"query_id": id, "partition_id": pid,
		"state_ops": []map[string]any{{"type": "upsert", "key": "k"}}})
	require.True(t, r.Success, r.Error)
	conn, err := pgx.Connect(t.Context(), rb.DatabaseURL)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var sink *string
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT sink_queue FROM queen_streams.queries WHERE name = 'q1'").Scan(&sink))
	require.Equal(t, "sink", *sink)
	_, err = conn.Exec(t.Context(), "DELETE FROM queen_streams.queries WHERE name LIKE 'q%'")
	require.NoError(t, err)
	var n int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM queen_streams.state").Scan(&n))
	require.Zero(t, n)
	st, m = a.register("q1", "h3", false)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, true, m["fresh"])
}

// TestStreamsCycle: one cycle applies state ops, pushes sink items through the push path (visible to
// an ordinary consumer at once) and acks the source cumulatively under the lease; a repeat of the
// same cycle (a client that lost the answer, or retried after a 500) is refused and applies nothing.
func TestStreamsCycle(t *testing.T) {
	t.Parallel()
	rb := setup(t, nil).rb
	a := newAPI(t, rb.URL)
	_, m := a.register("agg", "h", false)
	qid := m["query_id"].(string)
	for i := range 3 {
		a.push(pushItem{Queue: "src", Partition: "p1", Payload: map[string]int{"v": i + 1}, TransactionID: fmt.Sprint("t", i)})
	}
	pop := a.pop("/api/v1/pop/queue/src?batch=10&consumerGroup=streams.agg")
	require.Len(t, pop.Messages, 3)
	last := pop.Messages[2]
	body := map[string]any{
		"query_id": qid, "partition_id": last.PartitionID, "consumer_group": "streams.agg",
		"state_ops": []map[string]any{
			{"type": "upsert", "key": "win\x1fa", "value": map[string]any{"acc": 6, "windowEnd": 1000}},
			{"type": "upsert", "key": "win\x1fb", "value": map[string]any{"acc": 1, "windowEnd": 3000}},
			{"type": "upsert", "key": "other", "value": map[string]any{"x": true}},
			{"type": "delete", "key": "other"},
			{"type": "delete", "key": "never-existed"},
		},
		"push_items": []map[string]any{{"queue": "sink", "partition": "out", "payload": map[string]int{"sum": 6}},
			{"queue": "sink", "partition": "out", "payload": map[string]int{"sum": 7}}},
		"ack": map[string]any{"transactionId": last.TransactionID, "leaseId": last.LeaseID, "status": "completed", "count": 3},
	}
	r := a.cycle(body)
	require.True(t, r.Success, r.Error)
	require.Equal(t, 5, r.StateOpsApplied)
	require.Equal(t, "src", *r.QueueName)
	require.Equal(t, qid, r.QueryID)
	require.Len(t, r.PushResults, 2)
	require.Equal(t, "queued", r.PushResults[0].Status)
	require.Less(t, r.PushResults[0].MessageID, r.PushResults[1].MessageID, "UUIDv7 ids in emit order")
	require.JSONEq(t, `{"success":true,"count":3,"lease_released":true,"dlq":false}`, string(r.AckResult))

	// The cursor is past all three and the lease is gone: nothing more for the group.
	require.Nil(t, a.pop("/api/v1/pop/queue/src?batch=10&consumerGroup=streams.agg"))
	sink := a.pop("/api/v1/pop/queue/sink?batch=10")
	require.Len(t, sink.Messages, 2)
	require.JSONEq(t, `{"sum":6}`, string(sink.Messages[0].Data))
	require.JSONEq(t, `{"sum":7}`, string(sink.Messages[1].Data))

	shard := map[string]any{"query_id": qid, "partition_id": last.PartitionID}
	require.Equal(t, []string{"win\x1fa", "win\x1fb"}, keysOf(a.state(shard)))

	// The same cycle again, as a retry after a lost answer or a 500: refused, nothing applied twice.
	body["state_ops"] = []map[string]any{{"type": "upsert", "key": "win\x1fa", "value": map[string]any{"acc": 12, "windowEnd": 1000}}}
	r = a.cycle(body)
	require.False(t, r.Success)
	require.Equal(t, "Invalid or expired lease", r.Error)
	require.Empty(t, r.PushResults)
	require.Equal(t, "null", string(r.AckResult))
	rows := a.state(map[string]any{"query_id": qid, "partition_id": last.PartitionID, "keys": []string{"win\x1fa", "missing"}})
	require.Len(t, rows, 1)
	require.JSONEq(t, `{"acc":6,"windowEnd":1000}`, string(rows[0].Value))
	st, out := a.do("GET", "/api/v1/pop/queue/sink?batch=10&consumerGroup=audit", nil)
	require.Equal(t, http.StatusOK, st)
	var all popResult
	require.NoError(t, json.Unmarshal(out, &all))
	require.Len(t, all.Messages, 2, "the retried cycle pushed nothing")

	// state/get filters: prefix and ripeness (numeric windowEnd only), ANDed; bad ids are a 400.
	require.Equal(t, []string{"win\x1fa"}, keysOf(a.state(map[string]any{"query_id": qid, "partition_id": last.PartitionID,
		"key_prefix": "win\x1f", "ripe_at_or_before": 2000})))
	require.Len(t, a.state(map[string]any{"query_id": qid, "partition_id": last.PartitionID, "ripe_at_or_before": "2000"}), 2)
	st, out = a.do("POST", "/streams/v1/state/get", map[string]any{"query_id": "nope", "partition_id": last.PartitionID})
	require.Equal(t, http.StatusBadRequest, st, string(out))
	st, out = a.do("POST", "/streams/v1/state/get", map[string]any{"query_id": qid})
	require.Equal(t, http.StatusBadRequest, st)
	require.JSONEq(t, `{"error":"partition_id is required"}`, string(out))
	st, out = a.do("POST", "/streams/v1/cycle", map[string]any{"partition_id": "x"})
	require.Equal(t, http.StatusBadRequest, st)
	require.JSONEq(t, `{"error":"query_id is required"}`, string(out))
}

// TestStreamsCycleRollback: every business failure of a cycle answers 200 success:false and leaves no
// trace: state, sink and cursor are as before.
func TestStreamsCycleRollback(t *testing.T) {
	t.Parallel()
	rb := setup(t, nil).rb
	a := newAPI(t, rb.URL)
	_, m := a.register("rb", "h", false)
	qid := m["query_id"].(string)
	a.push(pushItem{Queue: "src", Partition: "p", Payload: 1, TransactionID: "m1"})
	pop := a.pop("/api/v1/pop/queue/src?batch=10&consumerGroup=streams.rb")
	msg := pop.Messages[0]
	good := func() map[string]any {
		return map[string]any{"query_id": qid, "partition_id": msg.PartitionID, "consumer_group": "streams.rb",
			"state_ops":  []map[string]any{{"type": "upsert", "key": "k", "value": 1}},
			"push_items": []map[string]any{{"queue": "rb-sink", "payload": 1}},
			"ack":        map[string]any{"transactionId": msg.TransactionID, "leaseId": msg.LeaseID}}
	}
	cases := []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"unknown op", func(b map[string]any) {
			b["state_ops"] = []map[string]any{{"type": "upsert", "key": "a"}, {"type": "merge", "key": "k"}}
		}, "Unknown state_op type: merge"},
		{"missing op type", func(b map[string]any) { b["state_ops"] = []map[string]any{{"key": "k"}} }, "Unknown state_op type: null"},
		{"unknown message", func(b map[string]any) { b["ack"].(map[string]any)["transactionId"] = "ghost" }, "Message not found"},
		{"wrong lease", func(b map[string]any) {
			b["ack"].(map[string]any)["leaseId"] = "00000000-0000-7000-8000-000000000000"
		}, "Invalid or expired lease"},
		{"no transactionId", func(b map[string]any) { b["ack"] = map[string]any{"leaseId": msg.LeaseID} }, "ack.transactionId is required"},
		{"bad status", func(b map[string]any) { b["ack"].(map[string]any)["status"] = "maybe" }, "Unknown ack.status: maybe"},
		{"bad uuid", func(b map[string]any) { b["query_id"] = "not-a-uuid" }, `invalid input syntax for type uuid: "not-a-uuid"`},
		{"unknown query", func(b map[string]any) { b["query_id"] = "00000000-0000-4000-8000-000000000000" },
			"query_id 00000000-0000-4000-8000-000000000000 is not registered"},
	}
	for _, c := range cases {
		b := good()
		c.edit(b)
		r := a.cycle(b)
		require.False(t, r.Success, c.name)
		if c.want != "" {
			require.Equal(t, c.want, r.Error, c.name)
		} else {
			require.NotEmpty(t, r.Error, c.name)
		}
		require.Zero(t, r.StateOpsApplied, c.name)
		require.Empty(t, r.PushResults, c.name)
		require.Equal(t, "null", string(r.AckResult), c.name)
	}
	require.Empty(t, a.state(map[string]any{"query_id": qid, "partition_id": msg.PartitionID}))
	st, _ := a.do("GET", "/api/v1/pop/queue/rb-sink?batch=10", nil)
	require.Equal(t, http.StatusNoContent, st, "no sink item survived a rolled-back cycle")

	// The lease is intact: the good cycle still commits.
	r := a.cycle(good())
	require.True(t, r.Success, r.Error)
	require.Equal(t, 1, r.StateOpsApplied)
}

// TestStreamsPartialAckKeepsLease: release_lease:false moves the cursor over an acked prefix and keeps
// the lease, so the tail comes back, in order, only after the lease expires (the gate's contract).
// failed/dlq dead-letter the acked message and release the lease.
func TestStreamsPartialAckKeepsLease(t *testing.T) {
	t.Parallel()
	b := setupClock(t, nil)
	a := b.raw
	st, out := a.do("POST", "/api/v1/configure", map[string]any{"queue": "gated", "options": map[string]any{"leaseTime": 60}})
	require.Equal(t, http.StatusOK, st, string(out))
	_, m := a.register("gate", "h", false)
	qid := m["query_id"].(string)
	for i := range 4 {
		a.push(pushItem{Queue: "gated", Partition: "p", Payload: i, TransactionID: fmt.Sprint("g", i)})
	}
	pop := a.pop("/api/v1/pop/queue/gated?batch=10&consumerGroup=streams.gate")
	require.Len(t, pop.Messages, 4)
	k := pop.Messages[1]
	r := a.cycle(map[string]any{"query_id": qid, "partition_id": k.PartitionID, "consumer_group": "streams.gate", "release_lease": false,
		"ack": map[string]any{"transactionId": k.TransactionID, "leaseId": k.LeaseID, "count": 2}})
	require.True(t, r.Success, r.Error)
	require.JSONEq(t, `{"success":true,"count":2,"lease_released":false,"dlq":false}`, string(r.AckResult))
	require.Nil(t, a.pop("/api/v1/pop/queue/gated?batch=10&consumerGroup=streams.gate"), "the lease is kept")

	b.clock.Advance(61 * time.Second)
	again := a.pop("/api/v1/pop/queue/gated?batch=10&consumerGroup=streams.gate")
	require.NotNil(t, again, "not redelivered once the lease expired")
	require.Len(t, again.Messages, 2)
	require.Equal(t, "g2", again.Messages[0].TransactionID)
	require.Equal(t, "g3", again.Messages[1].TransactionID)

	// failed: the message goes to the dead-letter queue and the lease ends.
	f := again.Messages[0]
	r = a.cycle(map[string]any{"query_id": qid, "partition_id": f.PartitionID, "consumer_group": "streams.gate",
		"ack": map[string]any{"transactionId": f.TransactionID, "leaseId": f.LeaseID, "status": "failed", "error": "bad input"}})
	require.True(t, r.Success, r.Error)
	require.JSONEq(t, `{"success":true,"count":1,"lease_released":true,"dlq":true}`, string(r.AckResult))
	st, out = a.do("GET", "/api/v1/dlq?queue=gated", nil)
	require.Equal(t, http.StatusOK, st)
	require.Contains(t, string(out), "bad input")
	next := a.pop("/api/v1/pop/queue/gated?batch=10&consumerGroup=streams.gate")
	require.NotNil(t, next, "released at once")
	require.Equal(t, "g3", next.Messages[0].TransactionID)
}

// TestStreamsStateExpect: the optional "expect" of a state op (our extension) refuses a cycle whose
// state changed since the writer read it, and applies nothing of it.
func TestStreamsStateExpect(t *testing.T) {
	t.Parallel()
	rb := setup(t, nil).rb
	a := newAPI(t, rb.URL)
	_, m := a.register("ex", "h", false)
	qid := m["query_id"].(string)
	pid := a.push(pushItem{Queue: "ex-src", Payload: 1})[0].PartitionID
	shard := map[string]any{"query_id": qid, "partition_id": pid}
	r := a.cycle(map[string]any{"query_id": qid, "partition_id": pid,
		"state_ops": []map[string]any{{"type": "upsert", "key": "w", "value": 1, "expect": nil}}})
	require.True(t, r.Success, r.Error)
	st, out := a.do("POST", "/streams/v1/state/get", shard)
	require.Equal(t, http.StatusOK, st)
	var got struct {
		Rows []struct {
			UpdatedAt string `json:"updated_at"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	read := got.Rows[0].UpdatedAt

	// "must not exist" fails now; so does a stale version; the read version passes once.
	r = a.cycle(map[string]any{"query_id": qid, "partition_id": pid, "push_items": []map[string]any{{"queue": "ex-out", "payload": 1}},
		"state_ops": []map[string]any{{"type": "upsert", "key": "other", "value": 9}, {"type": "upsert", "key": "w", "value": 2, "expect": nil}}})
	require.False(t, r.Success)
	require.Equal(t, `state conflict: key "w" changed since it was read`, r.Error)
	r = a.cycle(map[string]any{"query_id": qid, "partition_id": pid,
		"state_ops": []map[string]any{{"type": "upsert", "key": "w", "value": 2, "expect": read}}})
	require.True(t, r.Success, r.Error)
	r = a.cycle(map[string]any{"query_id": qid, "partition_id": pid,
		"state_ops": []map[string]any{{"type": "delete", "key": "w", "expect": read}}})
	require.False(t, r.Success, "the version moved on")
	rows := a.state(shard)
	require.Equal(t, []string{"w"}, keysOf(rows))
	require.JSONEq(t, "2", string(rows[0].Value))
	st, _ = a.do("GET", "/api/v1/pop/queue/ex-out", nil)
	require.Equal(t, http.StatusNoContent, st)
}

// TestStreamsCycleIdempotent: every cycle applies at most once, with or without an ack and with or
// without a cycle_id. An ack-less cycle (an idle flush) is refused while the source partition is
// leased, and when a delete finds no row; a repeat of an acked cycle is refused by the lease and the
// cursor; a repeat with a recorded cycle_id, or without an ack and id with the same body, is answered
// duplicate and applies nothing.
func TestStreamsCycleIdempotent(t *testing.T) {
	t.Parallel()
	rb := setup(t, nil).rb
	a := newAPI(t, rb.URL)
	_, m := a.register("idem", "h", false)
	qid := m["query_id"].(string)
	a.push(pushItem{Queue: "idem-src", Partition: "p", Payload: 1, TransactionID: "m1"},
		pushItem{Queue: "idem-src", Partition: "p", Payload: 2, TransactionID: "m2"})
	msg := a.pop("/api/v1/pop/queue/idem-src?batch=10&consumerGroup=streams.idem").Messages[1]
	sinkItems := 0
	sink := func() int {
		t.Helper()
		for {
			p := a.pop("/api/v1/pop/queue/idem-sink?batch=10&consumerGroup=check&autoAck=true")
			if p == nil {
				return sinkItems
			}
			sinkItems += len(p.Messages)
		}
	}
	body := func(ops []map[string]any, ack bool, cycleID any) map[string]any {
		b := map[string]any{"query_id": qid, "partition_id": msg.PartitionID, "consumer_group": "streams.idem",
			"state_ops": ops, "push_items": []map[string]any{{"queue": "idem-sink", "payload": 1}}}
		if ack {
			b["ack"] = map[string]any{"transactionId": msg.TransactionID, "leaseId": msg.LeaseID, "count": 2}
		}
		if cycleID != nil {
			b["cycle_id"] = cycleID
		}
		return b
	}
	upsert := []map[string]any{{"type": "upsert", "key": "w", "value": map[string]any{"n": 2}}}
	del := []map[string]any{{"type": "delete", "key": "w"}}

	r := a.cycle(body(upsert, false, nil))
	require.False(t, r.Success)
	require.Equal(t, "source partition is leased: a cycle without an ack waits until the lease is released", r.Error)
	require.Equal(t, 0, sink(), "a flush committed between the lease holder's read and its cycle")

	first := body(upsert, true, "c1")
	r = a.cycle(first)
	require.True(t, r.Success, r.Error)
	require.Equal(t, 1, r.StateOpsApplied)
	require.Equal(t, 1, sink())
	st, out := a.do("POST", "/streams/v1/cycle", first)
	require.Equal(t, http.StatusOK, st)
	var dup map[string]any
	require.NoError(t, json.Unmarshal(out, &dup))
	require.Equal(t, map[string]any{"success": true, "duplicate": true, "query_id": qid, "partition_id": msg.PartitionID,
		"queueName": "idem-src", "state_ops_applied": 0.0, "push_results": []any{}, "ack_result": nil}, dup,
		"the retry of a committed cycle is answered as committed and applies nothing")
	delete(first, "cycle_id")
	r = a.cycle(first)
	require.False(t, r.Success, "without its id the released lease refuses the repeat")
	require.Equal(t, "Invalid or expired lease", r.Error)
	require.Equal(t, 1, sink())

	// The lease is released: the flush may commit now, once.
	flush := body(del, false, nil)
	r = a.cycle(flush)
	require.True(t, r.Success, r.Error)
	require.Equal(t, 2, sink())
	r = a.cycle(flush)
	require.True(t, r.Success && r.Duplicate, "the same body again, without an id: a repeat %+v", r)
	require.Equal(t, 2, sink())
	other := body(del, false, nil)
	other["push_items"] = []map[string]any{{"queue": "idem-sink", "payload": 2}}
	r = a.cycle(other)
	require.False(t, r.Success, "its delete finds no row: computed from state another cycle changed")
	require.Equal(t, `state conflict: key "w" changed since it was read`, r.Error)
	require.Equal(t, 2, sink())
	require.Empty(t, a.state(map[string]any{"query_id": qid, "partition_id": msg.PartitionID}))

	// An ack-less cycle with an id and no delete (nothing else would tell its repeat) applies once.
	withID := body(upsert, false, "f1")
	require.True(t, a.cycle(withID).Success)
	require.True(t, a.cycle(withID).Success)
	require.Equal(t, 3, sink())

	r = a.cycle(body(upsert, false, 7))
	require.False(t, r.Success)
	require.Equal(t, "cycle_id must be a string of at most 255 bytes", r.Error)
}
