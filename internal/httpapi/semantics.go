package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/queen-go/queen/internal/engine"
)

type rawTxOp struct {
	Type  json.RawMessage `json:"type"`
	Items json.RawMessage `json:"items"`
	Data  json.RawMessage `json:"data"`
}

func (s *Server) handleTransaction(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Operations json.RawMessage `json:"operations"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	var raws []json.RawMessage
	if !present(body.Operations) || body.Operations[0] != '[' || json.Unmarshal(body.Operations, &raws) != nil {
		return badRequest("operations array required")
	}
	if len(raws) == 0 {
		return badRequest("operations array cannot be empty")
	}
	sub := subject(r)
	var ops []engine.TxOp
	for i, raw := range raws {
		var op rawTxOp
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &op) != nil {
			return badRequest(fmt.Sprintf("bad body: operations[%d] must be an object", i))
		}
		typ, ok := optString(op.Type)
		if !ok {
			return badRequest(fmt.Sprintf("operations[%d]: type must be a string", i))
		}
		switch typ {
		case "ack":
			var a rawAck
			_ = json.Unmarshal(raw, &a) // raw is an object: it decoded above
			it, err := a.toItem(fmt.Sprintf("operations[%d]: transactionId is required", i),
				fmt.Sprintf("operations[%d]: partitionId is required to ensure message uniqueness", i))
			if err != nil {
				return err
			}
			ops = append(ops, engine.TxOp{Ack: &it})
		case "push":
			var items []engine.PushItem
			var err error
			if present(op.Items) {
				items, err = parsePushItems(op.Items, sub)
			} else {
				var single rawPushItem
				_ = json.Unmarshal(raw, &single)
				if !present(single.Payload) {
					single.Payload = op.Data
				}
				b, _ := json.Marshal([]rawPushItem{single})
				items, err = parsePushItems(b, sub)
			}
			if err != nil {
				return badRequest(fmt.Sprintf("operations[%d]: %s", i, err.Error()))
			}
			for k := range items {
				ops = append(ops, engine.TxOp{Push: &items[k]})
			}
		default:
			return badRequest(fmt.Sprintf("operations[%d]: unsupported operation type %q (want ack or push)", i, typ))
		}
	}
	res, err := s.eng.Transaction(r.Context(), ops)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleLeaseExtend(w http.ResponseWriter, r *http.Request) error {
	id, ok := parseUUID(r.PathValue("leaseId"))
	if !ok {
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("lease %q not found", r.PathValue("leaseId"))}
	}
	var body struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	secs := 60.0
	if body.Seconds != nil {
		secs = *body.Seconds
	}
	if secs <= 0 || secs > 86400 {
		return badRequest("seconds must be between 1 and 86400")
	}
	res, err := s.eng.ExtendLease(r.Context(), id, time.Duration(secs*float64(time.Second)))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// queryTime reads an optional ISO-8601 timestamp query parameter.
func queryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badRequest(fmt.Sprintf("%s must be an ISO-8601 timestamp", name))
	}
	return t, nil
}

func (s *Server) handleDLQList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := engine.DLQFilter{Queue: q.Get("queue"), Group: q.Get("consumerGroup"), Partition: q.Get("partition")}
	var err error
	if f.From, err = queryTime(r, "from"); err != nil {
		return err
	}
	if f.To, err = queryTime(r, "to"); err != nil {
		return err
	}
	if f.Limit, f.Offset, err = queryPage(r, 100); err != nil {
		return err
	}
	res, err := s.eng.ListDLQ(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// dlqAddress reads the (partitionId, transactionId) a DLQ row route names; a non-UUID partition id
// cannot name anything.
func dlqAddress(r *http.Request) (engine.DLQAddress, error) {
	pid, tx := r.PathValue("partitionId"), r.PathValue("transactionId")
	id, ok := parseUUID(pid)
	if !ok {
		return engine.DLQAddress{}, &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("dead letter %s/%s not found", pid, tx)}
	}
	return engine.DLQAddress{PartitionID: id, TransactionID: tx, Group: r.URL.Query().Get("consumerGroup")}, nil
}

func (s *Server) handleDLQGet(w http.ResponseWriter, r *http.Request) error {
	a, err := dlqAddress(r)
	if err != nil {
		return err
	}
	res, err := s.eng.GetDLQ(r.Context(), a.PartitionID, a.TransactionID, a.Group)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleDLQDelete(w http.ResponseWriter, r *http.Request) error {
	a, err := dlqAddress(r)
	if err != nil {
		return err
	}
	n, err := s.eng.DeleteDLQ(r.Context(), a.PartitionID, a.TransactionID, a.Group)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "partitionId": a.PartitionID.String(),
		"transactionId": a.TransactionID, "deleted": n})
	return nil
}

func (s *Server) handleDLQRetry(w http.ResponseWriter, r *http.Request) error {
	a, err := dlqAddress(r)
	if err != nil {
		return err
	}
	n, err := s.eng.RetryDLQ(r.Context(), a.PartitionID, a.TransactionID, a.Group)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "partitionId": a.PartitionID.String(),
		"transactionId": a.TransactionID, "retried": n})
	return nil
}

func (s *Server) handleGroups(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.ConsumerGroups(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleLagging(w http.ResponseWriter, r *http.Request) error {
	secs, err := queryInt(r, "minLagSeconds", 3600, 0)
	if err != nil {
		return err
	}
	res, err := s.eng.LaggingPartitions(r.Context(), time.Duration(secs)*time.Second)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleGroup(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.ConsumerGroup(r.Context(), r.PathValue("group"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleGroupDelete(w http.ResponseWriter, r *http.Request) error {
	meta, err := queryBool(r, "deleteMetadata")
	if err != nil {
		return err
	}
	res, err := s.eng.DeleteConsumerGroup(r.Context(), r.PathValue("group"), r.PathValue("queue"), meta)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSubscription(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		SubscriptionTimestamp json.RawMessage `json:"subscriptionTimestamp"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	v, ok := optString(body.SubscriptionTimestamp)
	if !ok || v == "" {
		return badRequest("Missing subscriptionTimestamp in request body")
	}
	ts, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return badRequest("subscriptionTimestamp must be an ISO-8601 timestamp")
	}
	res, err := s.eng.UpdateSubscription(r.Context(), r.PathValue("group"), ts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSeek(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ToEnd     *bool           `json:"toEnd"`
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	toEnd := body.ToEnd != nil && *body.ToEnd
	v, ok := optString(body.Timestamp)
	if !ok {
		return badRequest("timestamp must be an ISO-8601 string")
	}
	var ts time.Time
	switch {
	case toEnd:
	case v == "start" || v == "beginning":
		ts = time.Unix(0, 0).UTC()
	case v != "":
		var err error
		if ts, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return badRequest("timestamp must be an ISO-8601 string")
		}
	default:
		return badRequest("Must specify either 'toEnd': true or 'timestamp'")
	}
	res, err := s.eng.SeekQueue(r.Context(), r.PathValue("group"), r.PathValue("queue"), toEnd, ts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSeekPartition(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.SeekPartition(r.Context(), r.PathValue("group"), r.PathValue("queue"), r.PathValue("partition"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleQueueDelete(w http.ResponseWriter, r *http.Request) error {
	q := r.PathValue("queue")
	if err := s.eng.DeleteQueue(r.Context(), q); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "queue": q, "existed": true})
	return nil
}
