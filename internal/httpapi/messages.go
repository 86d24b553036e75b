package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
)

// messageListing parses the filters shared by /messages and /status/queues/{queue}/messages.
func messageListing(r *http.Request, queue string, defLimit int) (engine.MessageFilter, error) {
	qv := r.URL.Query()
	p := engine.MessageFilter{Queue: queue, Partition: qv.Get("partition"), Namespace: qv.Get("ns"),
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
	l, err := s.eng.Messages(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, messagePage{Messages: l.Messages, ConsumerGroup: l.ConsumerGroup,
		Pagination: page{p.Limit, p.Offset}, Mode: l.Mode})
	return nil
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
	m, err := s.eng.Message(r.Context(), pid, tx)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
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
	p, err := messageListing(r, r.PathValue("queue"), 50)
	if err != nil {
		return err
	}
	l, err := s.eng.QueueMessages(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]queueMessage, len(l.Messages))
	for i, m := range l.Messages {
		out[i] = queueMessage{MessageRef: m.MessageRef, Status: m.Status, CreatedAt: m.CreatedAt}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
