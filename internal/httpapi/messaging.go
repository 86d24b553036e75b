package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

type rawPushItem struct {
	Queue         json.RawMessage `json:"queue"`
	Partition     json.RawMessage `json:"partition"`
	Payload       json.RawMessage `json:"payload"`
	TransactionID json.RawMessage `json:"transactionId"`
	TraceID       json.RawMessage `json:"traceId"`
}

// parsePushItems validates push items item by item; the first failure refuses the whole request.
func parsePushItems(raw json.RawMessage, producerSub string) ([]engine.PushItem, error) {
	var elems []json.RawMessage
	if !present(raw) || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, badRequest("items array is required")
	}
	items := make([]engine.PushItem, len(elems))
	for i, el := range elems {
		var it rawPushItem
		if len(el) == 0 || el[0] != '{' || json.Unmarshal(el, &it) != nil {
			return nil, badRequest(fmt.Sprintf("bad body: items[%d] must be an object", i))
		}
		q, ok := optString(it.Queue)
		if !ok || q == "" {
			return nil, badRequest("Queue must be a string")
		}
		p, ok := optString(it.Partition)
		if !ok {
			return nil, badRequest("Partition must be a string")
		}
		tx, ok := optString(it.TransactionID)
		if !ok {
			return nil, badRequest("TransactionId must be a string")
		}
		tr, ok := optString(it.TraceID)
		if !ok {
			return nil, badRequest("TraceId must be a string")
		}
		item := engine.PushItem{Queue: q, Partition: p, Payload: it.Payload, TransactionID: tx, ProducerSub: producerSub}
		if tr != "" {
			id, ok := parseUUID(tr)
			if !ok {
				return nil, badRequest(fmt.Sprintf("TraceId must be a UUID (item %d: %q)", i, tr))
			}
			item.TraceID = &id
		}
		items[i] = item
	}
	return items, nil
}

func (s *Server) handlePush(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Items json.RawMessage `json:"items"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	items, err := parsePushItems(body.Items, subject(r))
	if err != nil {
		return err
	}
	res, err := s.eng.Push(r.Context(), items)
	var sfe *engine.SpoolFailedError
	if errors.As(err, &sfe) {
		// Neither PostgreSQL nor the spool took them: 500 with every item marked failed.
		s.log.ErrorContext(r.Context(), "push refused: spool write failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, sfe.Results)
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

// subject is the authenticated caller's sub claim, stamped as producerSub on pushes ("" without auth).
func subject(r *http.Request) string {
	p, _ := auth.FromContext(r.Context())
	return p.Subject
}

func (s *Server) handlePop(w http.ResponseWriter, r *http.Request) error {
	req := engine.PopRequest{Queue: r.PathValue("queue"), Partition: r.PathValue("partition")}
	var err error
	if req.Batch, err = queryInt(r, "batch", s.opt.DefaultBatchSize, 1); err != nil {
		return err
	}
	if req.Partitions, err = queryInt(r, "partitions", 1, 1); err != nil {
		return err
	}
	timeoutMs, err := queryInt(r, "timeout", int(s.opt.DefaultTimeout/time.Millisecond), 0)
	if err != nil {
		return err
	}
	req.Timeout = time.Duration(timeoutMs) * time.Millisecond
	if req.Wait, err = queryBool(r, "wait"); err != nil {
		return err
	}
	if req.AutoAck, err = queryBool(r, "autoAck"); err != nil {
		return err
	}
	q := r.URL.Query()
	req.Group = q.Get("consumerGroup")
	req.SubscriptionMode, req.SubscriptionFrom = q.Get("subscriptionMode"), q.Get("subscriptionFrom")
	if req.Queue == "" {
		req.Namespace, req.Task = q.Get("namespace"), q.Get("task")
		if req.Namespace == "" && req.Task == "" {
			return badRequest("namespace or task is required")
		}
	}
	res, err := s.eng.Pop(r.Context(), req)
	if err != nil {
		return err
	}
	if res == nil {
		writeNoContent(w)
		return nil
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

type rawAck struct {
	TransactionID json.RawMessage `json:"transactionId"`
	PartitionID   json.RawMessage `json:"partitionId"`
	LeaseID       json.RawMessage `json:"leaseId"`
	Status        json.RawMessage `json:"status"`
	ConsumerGroup json.RawMessage `json:"consumerGroup"`
	Error         json.RawMessage `json:"error"`
}

// toItem validates one acknowledgement; missing is the message for a missing or non-string id field.
func (a rawAck) toItem(missingTx, missingPartition string) (engine.AckItem, error) {
	tx, ok := optString(a.TransactionID)
	if !ok || tx == "" {
		return engine.AckItem{}, badRequest(missingTx)
	}
	pid, ok := optString(a.PartitionID)
	if !ok || pid == "" {
		return engine.AckItem{}, badRequest(missingPartition)
	}
	id, ok := parseUUID(pid)
	if !ok {
		return engine.AckItem{}, badRequest(fmt.Sprintf("partitionId must be a UUID: %q", pid))
	}
	it := engine.AckItem{TransactionID: tx, PartitionID: id}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{{"leaseId", a.LeaseID, &it.LeaseID}, {"status", a.Status, &it.Status}, {"consumerGroup", a.ConsumerGroup, &it.Group}, {"error", a.Error, &it.Error}} {
		v, ok := optString(f.raw)
		if !ok {
			return engine.AckItem{}, badRequest(f.name + " must be a string")
		}
		*f.dst = v
	}
	if !engine.ValidAckStatus(it.Status) {
		return engine.AckItem{}, badRequest(fmt.Sprintf("status must be one of completed, success, failed, dlq, retry (got %q)", it.Status))
	}
	return it, nil
}

func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) error {
	var a rawAck
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &a); err != nil {
		return err
	}
	it, err := a.toItem("transactionId is required", "partitionId is required to ensure message uniqueness")
	if err != nil {
		return err
	}
	res, err := s.eng.Ack(r.Context(), []engine.AckItem{it})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleAckBatch(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ConsumerGroup   json.RawMessage `json:"consumerGroup"`
		Acknowledgments json.RawMessage `json:"acknowledgments"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	var raws []json.RawMessage
	if !present(body.Acknowledgments) || body.Acknowledgments[0] != '[' || json.Unmarshal(body.Acknowledgments, &raws) != nil {
		return badRequest("acknowledgments array is required")
	}
	group, ok := optString(body.ConsumerGroup)
	if !ok {
		return badRequest("consumerGroup must be a string")
	}
	items := make([]engine.AckItem, len(raws))
	for i, raw := range raws {
		var a rawAck
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
			return badRequest(fmt.Sprintf("bad body: acknowledgments[%d] must be an object", i))
		}
		it, err := a.toItem("Each acknowledgment must have a valid transactionId string",
			"Each acknowledgment must have a valid partitionId string to ensure message uniqueness")
		if err != nil {
			return err
		}
		if group != "" {
			it.Group = group
		}
		items[i] = it
	}
	res, err := s.eng.Ack(r.Context(), items)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleConfigure(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Queue     json.RawMessage     `json:"queue"`
		Namespace json.RawMessage     `json:"namespace"`
		Task      json.RawMessage     `json:"task"`
		Options   engine.QueueOptions `json:"options"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	q, ok := optString(body.Queue)
	if !ok || q == "" {
		return badRequest("queue is required")
	}
	ns, ok := optString(body.Namespace)
	if !ok {
		return badRequest("namespace must be a string")
	}
	task, ok := optString(body.Task)
	if !ok {
		return badRequest("task must be a string")
	}
	res, err := s.eng.Configure(r.Context(), q, ns, task, body.Options)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
