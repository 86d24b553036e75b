package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/queen-go/queen/internal/engine"
)

type traceBody struct {
	TransactionID json.RawMessage `json:"transactionId"`
	PartitionID   json.RawMessage `json:"partitionId"`
	ConsumerGroup json.RawMessage `json:"consumerGroup"`
	EventType     json.RawMessage `json:"eventType"`
	WorkerID      json.RawMessage `json:"workerId"`
	Data          json.RawMessage `json:"data"`
	TraceNames    json.RawMessage `json:"traceNames"`
}

func (s *Server) handleRecordTrace(w http.ResponseWriter, r *http.Request) error {
	var b traceBody
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &b); err != nil {
		return err
	}
	tx, ok1 := optString(b.TransactionID)
	pidS, ok2 := optString(b.PartitionID)
	if !ok1 || !ok2 || tx == "" || pidS == "" {
		return badRequest("transactionId and partitionId are required")
	}
	pid, ok := parseUUID(pidS)
	if !ok {
		return badRequest("partitionId must be a UUID")
	}
	if !present(b.Data) {
		return badRequest("data is required")
	}
	group, ok1 := optString(b.ConsumerGroup)
	ev, ok2 := optString(b.EventType)
	worker, ok3 := optString(b.WorkerID)
	if !ok1 || !ok2 || !ok3 {
		return badRequest("consumerGroup, eventType and workerId must be strings")
	}
	if ev == "" {
		ev = "info"
	}
	var names []string
	if present(b.TraceNames) {
		if one, ok := optString(b.TraceNames); ok {
			names = []string{one}
		} else if json.Unmarshal(b.TraceNames, &names) != nil {
			return badRequest("traceNames must be a string or an array of strings")
		}
	}
	id, err := s.eng.RecordTrace(r.Context(), engine.TraceRecord{PartitionID: pid, TransactionID: tx, EventType: ev,
		Data: b.Data, ConsumerGroup: group, WorkerID: worker, Names: names})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "traceId": id.String()})
	return nil
}

func (s *Server) handleMessageTraces(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	ts, err := s.eng.MessageTraces(r.Context(), pid, tx)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Traces []engine.TraceEvent `json:"traces"`
	}{ts})
	return nil
}

func (s *Server) handleTracesByName(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 100)
	if err != nil {
		return err
	}
	ts, total, err := s.eng.TracesByName(r.Context(), r.PathValue("traceName"), min(limit, 10_000), offset)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Traces     []engine.NamedTraceEvent `json:"traces"`
		Total      int64                    `json:"total"`
		Pagination page                     `json:"pagination"`
	}{ts, total, page{limit, offset}})
	return nil
}

func (s *Server) handleTraceNames(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 50)
	if err != nil {
		return err
	}
	ns, total, err := s.eng.TraceNames(r.Context(), min(limit, 10_000), offset)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		TraceNames []engine.TraceNameUsage `json:"trace_names"`
		Total      int64                   `json:"total"`
		Pagination page                    `json:"pagination"`
	}{ns, total, page{limit, offset}})
	return nil
}
