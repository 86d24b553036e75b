package httpapi

import (
	"encoding/json"

	"github.com/queen-go/queen/internal/views"
)

func (s *Server) handleRecordTrace(q request) (map[string]any, error) {
	var b traceBody
	if err := q.decode(&b); err != nil {
		return nil, err
	}
	const missing = "transactionId and partitionId are required"
	var tx, pidS, group, ev, worker string
	if err := readStrings(required(b.TransactionID, &tx, missing), required(b.PartitionID, &pidS, missing)); err != nil {
		return nil, err
	}
	pid, ok := parseUUID(pidS)
	if !ok {
		return nil, badRequest("partitionId must be a UUID")
	}
	if !present(b.Data) {
		return nil, badRequest("data is required")
	}
	const notStrings = "consumerGroup, eventType and workerId must be strings"
	if err := readStrings(optional(b.ConsumerGroup, &group, notStrings), optional(b.EventType, &ev, notStrings),
		optional(b.WorkerID, &worker, notStrings)); err != nil {
		return nil, err
	}
	if ev == "" {
		ev = "info"
	}
	var names []string
	if present(b.TraceNames) {
		if one, ok := optString(b.TraceNames); ok {
			names = []string{one}
		} else if json.Unmarshal(b.TraceNames, &names) != nil {
			return nil, badRequest("traceNames must be a string or an array of strings")
		}
	}
	id, err := s.views.RecordTrace(q.Context(), views.TraceRecord{PartitionID: pid, TransactionID: tx, EventType: ev,
		Data: b.Data, ConsumerGroup: group, WorkerID: worker, Names: names})
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "traceId": id.String()}, nil
}

// traceBody is a trace event recorded on a message (handleRecordTrace).
type traceBody struct {
	rawAddress
	EventType  json.RawMessage `json:"eventType"`
	WorkerID   json.RawMessage `json:"workerId"`
	Data       json.RawMessage `json:"data"`
	TraceNames json.RawMessage `json:"traceNames"`
}

func (s *Server) handleMessageTraces(q request) (traceList, error) {
	pid, tx, err := messageAddress(q)
	if err != nil {
		return traceList{}, err
	}
	ts, err := s.views.MessageTraces(q.Context(), pid, tx)
	return traceList{ts}, err
}

func (s *Server) handleTracesByName(q request) (namedTracePage, error) {
	p, err := pageOf(q.Request, 100)
	if err != nil {
		return namedTracePage{}, err
	}
	ts, total, err := s.views.TracesByName(q.Context(), q.PathValue("traceName"), p.capped(), p.Offset)
	return namedTracePage{ts, total, p}, err
}

func (s *Server) handleTraceNames(q request) (traceNamePage, error) {
	p, err := pageOf(q.Request, 50)
	if err != nil {
		return traceNamePage{}, err
	}
	ns, total, err := s.views.TraceNames(q.Context(), p.capped(), p.Offset)
	return traceNamePage{ns, total, p}, err
}
