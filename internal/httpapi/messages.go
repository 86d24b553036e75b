package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// messageListing parses the filters shared by /messages and /status/queues/{queue}/messages.
func messageListing(r *http.Request, queue string, defLimit int) (store.ListMessagesParams, error) {
	qv := r.URL.Query()
	p := store.ListMessagesParams{Queue: queue, Partition: qv.Get("partition"), Namespace: qv.Get("ns"),
		Task: qv.Get("task"), Group: qv.Get("consumerGroup"), Status: qv.Get("status")}
	if p.Namespace == "" {
		p.Namespace = qv.Get("namespace")
	}
	switch p.Status {
	case "", "pending", "processing", "completed", "dead_letter":
	default:
		return p, badRequest("status must be one of pending, processing, completed, dead_letter")
	}
	var err error
	if p.Limit, p.Offset, err = queryPage(r, defLimit); err != nil {
		return p, err
	}
	p.Limit = min(p.Limit, 10_000)
	return p, nil
}

func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request) error {
	p, err := messageListing(r, r.URL.Query().Get("queue"), 200)
	if err != nil {
		return err
	}
	rows, err := s.eng.ListMessages(r.Context(), p)
	if err != nil {
		return err
	}
	group := p.Group
	if group == "" {
		group = engine.QueueMode
	}
	out := make([]map[string]any, len(rows))
	for i, m := range rows {
		out[i] = map[string]any{"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
			"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition,
			"namespace": m.Namespace, "task": m.Task, "status": m.Status, "consumerGroup": group,
			"traceId": uuidOrNil(m.TraceID.Valid, m.TraceID.Bytes), "producerSub": textOrNil(m.ProducerSub.Valid, m.ProducerSub.String),
			"queuePriority": m.Priority, "createdAt": ts(m.CreatedAt),
			"leaseExpiresAt": tsOrNil(m.LeaseExpiresAt.Valid, m.LeaseExpiresAt.Time)}
	}
	body := map[string]any{"messages": out, "consumerGroup": group,
		"pagination": map[string]int{"limit": p.Limit, "offset": p.Offset}}
	if p.Queue != "" {
		groups, err := s.eng.QueueGroups(r.Context(), p.Queue)
		if err != nil {
			return err
		}
		body["mode"] = modeOf(groups)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// modeOf describes how a queue is consumed: by queue mode, by named groups (bus), both, or not yet.
func modeOf(groups []string) map[string]any {
	hasQ := slices.Contains(groups, engine.QueueMode)
	bus := len(groups)
	if hasQ {
		bus--
	}
	typ := "none"
	switch {
	case hasQ && bus > 0:
		typ = "hybrid"
	case hasQ:
		typ = "queue"
	case bus > 0:
		typ = "bus"
	}
	return map[string]any{"hasQueueMode": hasQ, "busGroupsCount": bus, "type": typ}
}

func messageAddress(r *http.Request) (uuid.UUID, string, error) {
	pid, ok := parseUUID(r.PathValue("partitionId"))
	if !ok {
		return uuid.Nil, "", badRequest("partitionId must be a UUID")
	}
	return pid, r.PathValue("transactionId"), nil
}

func (s *Server) handleGetMessage(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	m, cs, err := s.eng.GetMessage(r.Context(), pid, tx)
	if err != nil {
		return err
	}
	groups := make([]map[string]any, len(cs))
	names := make([]string, len(cs))
	status, consumedBy, processing, dead := "pending", 0, false, false
	var errMsg, retries any
	for i, c := range cs {
		names[i] = c.Group
		if c.Consumed {
			consumedBy++
		}
		if c.LeaseExpiresAt.Valid {
			processing = true
		}
		if c.DLQError.Valid || c.DLQRetries.Valid {
			dead = true
			errMsg, retries = textOrNil(c.DLQError.Valid, c.DLQError.String), c.DLQRetries.Int32
		}
		groups[i] = map[string]any{"name": c.Group, "consumed": c.Consumed, "retryCount": c.Retries,
			"leaseExpiresAt": tsOrNil(c.LeaseExpiresAt.Valid, c.LeaseExpiresAt.Time), "deadLetter": c.DLQError.Valid || c.DLQRetries.Valid}
	}
	var leaseExp any
	for _, c := range cs {
		if c.LeaseExpiresAt.Valid {
			leaseExp = ts(c.LeaseExpiresAt.Time)
		}
	}
	switch {
	case dead:
		status = "dead_letter"
	case len(cs) > 0 && consumedBy == len(cs):
		status = "completed"
	case processing:
		status = "processing"
	}
	mode := modeOf(names)
	mode["consumedByGroups"] = consumedBy
	writeJSON(w, http.StatusOK, map[string]any{
		"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
		"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition,
		"namespace": m.Namespace, "task": m.Task, "status": status, "payload": json.RawMessage(m.Payload), "isEncrypted": m.Encrypted,
		"traceId": uuidOrNil(m.TraceID.Valid, m.TraceID.Bytes), "producerSub": textOrNil(m.ProducerSub.Valid, m.ProducerSub.String),
		"createdAt": ts(m.CreatedAt), "errorMessage": errMsg, "retryCount": retries, "leaseExpiresAt": leaseExp,
		"queueConfig": map[string]int32{"leaseTime": m.LeaseTime, "retryLimit": m.RetryLimit, "retryDelay": m.RetryDelay,
			"ttl": m.TTL, "priority": m.Priority},
		"mode": mode, "consumerGroups": groups,
	})
	return nil
}

func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request) error {
	pid, tx, err := messageAddress(r)
	if err != nil {
		return err
	}
	if err := s.eng.DeleteMessage(r.Context(), pid, tx); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "partitionId": pid.String(), "transactionId": tx,
		"message": "Message deleted successfully"})
	return nil
}

func (s *Server) handleStatusQueueMessages(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("queue")
	if _, err := s.eng.QueueInfo(r.Context(), name); err != nil {
		return err
	}
	p, err := messageListing(r, name, 50)
	if err != nil {
		return err
	}
	rows, err := s.eng.ListMessages(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(rows))
	for i, m := range rows {
		out[i] = map[string]any{"id": m.ID.String(), "transactionId": m.TransactionID, "partitionId": m.PartitionID.String(),
			"queuePath": m.Queue + "/" + m.Partition, "queue": m.Queue, "partition": m.Partition, "status": m.Status,
			"createdAt": ts(m.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
