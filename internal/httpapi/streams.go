package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/queen-go/queen/internal/streams"
)

// object reads a body that must be one JSON object into its raw fields.
func (q request) object() (map[string]json.RawMessage, error) {
	b, err := readBody(q.w, q.Request, q.max)
	var ae *apiError
	if errors.As(err, &ae) && ae.kind == kindBadRequest {
		return nil, badRequest("request body must be a JSON object") // empty or unreadable
	}
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	var m map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &m) != nil {
		return nil, badRequest("request body must be a JSON object")
	}
	// The input limits of every body (docs/decisions.md): what PostgreSQL would refuse is a 400 here.
	if err := guardBody(b); err != nil {
		return nil, err
	}
	return m, nil
}

// optBool reads an optional boolean field (absent or null: def).
func optBool(raw json.RawMessage, def bool) (bool, bool) {
	if !present(raw) {
		return def, true
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, false
	}
	return b, true
}

// handleStreamsRegister is a handler of its own: a config_hash conflict answers 409 with a body of
// the contract's shape, not the error envelope.
func (s *Server) handleStreamsRegister(w http.ResponseWriter, r *http.Request) error {
	m, err := newRequest(s, w, r).object()
	if err != nil {
		return err
	}
	var q streams.Query
	if err := readStrings(required(m["name"], &q.Name, "name is required"), required(m["source_queue"], &q.SourceQueue, "source_queue is required"),
		required(m["config_hash"], &q.ConfigHash, "config_hash is required"), optional(m["sink_queue"], &q.SinkQueue, "sink_queue must be a string")); err != nil {
		return err
	}
	var ok bool
	if q.Reset, ok = optBool(m["reset"], false); !ok {
		return badRequest("reset must be a boolean")
	}
	res, err := s.streams.Register(r.Context(), q)
	if err != nil {
		return err
	}
	if res.Conflict {
		writeJSON(w, http.StatusConflict, map[string]any{"success": false, "query_id": res.QueryID, "name": res.Name, "error": res.Error})
		return nil
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleStreamsCycle(q request) (*streams.CycleResult, error) {
	m, err := q.object()
	if err != nil {
		return nil, err
	}
	var req streams.CycleRequest
	if err := readStrings(required(m["query_id"], &req.QueryID, "query_id is required"), required(m["partition_id"], &req.PartitionID, "partition_id is required")); err != nil {
		return nil, err
	}
	// Past the two ids, the body is the procedure's to judge: what it cannot read fails the cycle
	// (200, success:false) like any other rolled-back cycle.
	var ok bool
	req.ConsumerGroup, _ = optString(m["consumer_group"])
	if id, ok := optString(m["cycle_id"]); !ok || len(id) > 255 {
		req.Invalid = "cycle_id must be a string of at most 255 bytes"
	} else {
		req.CycleID = id
	}
	if req.ReleaseLease, ok = optBool(m["release_lease"], true); !ok {
		req.Invalid = "release_lease must be a boolean"
	}
	if ops, msg := parseStateOps(m["state_ops"]); msg != "" {
		req.Invalid = msg
	} else {
		req.StateOps = ops
	}
	if raw := m["push_items"]; present(raw) {
		items, err := parsePushItems(raw, subject(q.Request))
		if err != nil {
			req.Invalid = "push_items: " + err.Error()
		}
		req.PushItems = items
	}
	if raw := m["ack"]; present(raw) {
		a, msg := parseCycleAck(raw)
		if msg != "" {
			req.Invalid = msg
		}
		req.Ack = a
	}
	return s.streams.Cycle(q.Context(), req)
}

func parseStateOps(raw json.RawMessage) ([]streams.StateOp, string) {
	if !present(raw) {
		return nil, ""
	}
	var elems []map[string]json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, "state_ops must be an array of objects"
	}
	ops := make([]streams.StateOp, len(elems))
	for i, el := range elems {
		typ, ok := optString(el["type"])
		if !ok {
			return nil, "Unknown state_op type: " + string(el["type"])
		}
		key, ok := optString(el["key"])
		if !ok || !present(el["key"]) {
			return nil, fmt.Sprintf("state_ops[%d]: key must be a string", i)
		}
		ops[i] = streams.StateOp{Type: typ, Key: key, Value: el["value"]}
		if raw, ok := el["expect"]; ok {
			// Absent: no check; null: the key must not exist; a string: the updated_at read.
			ex := &streams.StateExpect{Absent: !present(raw)}
			if !ex.Absent {
				at, ok := optString(raw)
				t, err := time.Parse(time.RFC3339Nano, at)
				if !ok || err != nil {
					return nil, fmt.Sprintf("state_ops[%d]: expect must be null or an updated_at timestamp", i)
				}
				ex.UpdatedAt = t
			}
			ops[i].Expect = ex
		}
	}
	return ops, ""
}

func parseCycleAck(raw json.RawMessage) (*streams.CycleAck, string) {
	// The cycle's ack is an acknowledgement with a count; it names no partition (the cycle does).
	var a struct {
		rawAck
		Count json.RawMessage `json:"count"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
		return nil, "ack must be an object"
	}
	out := &streams.CycleAck{}
	var ok bool
	if out.TransactionID, ok = optString(a.TransactionID); !ok {
		return nil, "ack.transactionId is required"
	}
	if out.LeaseID, ok = optString(a.LeaseID); !ok {
		return nil, "ack.leaseId must be a string"
	}
	if out.Status, ok = optString(a.Status); !ok {
		return nil, "Unknown ack.status: " + string(a.Status)
	}
	if out.Error, ok = optString(a.Error); !ok {
		out.Error = strings.Trim(string(a.Error), `"`)
	}
	if present(a.Count) {
		var n float64
		if json.Unmarshal(a.Count, &n) != nil || n != float64(int(n)) {
			return nil, "ack.count must be an integer"
		}
		out.Count = int(n)
	}
	return out, ""
}

func (s *Server) handleStreamsStateGet(q request) (map[string]any, error) {
	m, err := q.object()
	if err != nil {
		return nil, err
	}
	var qid, pid string
	if err := readStrings(required(m["query_id"], &qid, "query_id is required"), required(m["partition_id"], &pid, "partition_id is required")); err != nil {
		return nil, err
	}
	var f streams.StateQuery
	var ok bool
	if f.QueryID, ok = parseUUID(qid); !ok {
		return nil, badRequest(fmt.Sprintf("query_id must be a UUID (got %q)", qid))
	}
	if f.PartitionID, ok = parseUUID(pid); !ok {
		return nil, badRequest(fmt.Sprintf("partition_id must be a UUID (got %q)", pid))
	}
	if raw := m["keys"]; present(raw) {
		if raw[0] != '[' || json.Unmarshal(raw, &f.Keys) != nil {
			return nil, badRequest("keys must be an array of strings")
		}
	}
	if f.KeyPrefix, ok = optString(m["key_prefix"]); !ok {
		return nil, badRequest("key_prefix must be a string")
	}
	// Only a JSON number filters by ripeness, as in the original; anything else is ignored.
	if raw := m["ripe_at_or_before"]; present(raw) && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		var n float64
		if json.Unmarshal(raw, &n) == nil {
			f.RipeAtOrBefore = &n
		}
	}
	rows, err := s.streams.State(q.Context(), f)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "rows": rows}, nil
}
