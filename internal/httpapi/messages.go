package httpapi

import (
	"github.com/google/uuid"
	"github.com/queen-go/queen/internal/views"
)

// messageListing parses the filters shared by /messages and /status/queues/{queue}/messages.
func messageListing(q request, queue string, defLimit int) (views.MessageFilter, error) {
	f := filterOf(q.Request)
	p := views.MessageFilter{Queue: queue, Partition: f.Partition, Namespace: q.URL.Query().Get("ns"),
		Task: f.Task, Group: f.Group, Status: q.URL.Query().Get("status")}
	if p.Namespace == "" {
		p.Namespace = f.Namespace
	}
	switch p.Status {
	case "", "pending", "processing", "completed", "dead_letter":
	default:
		return p, badRequest("status must be one of pending, processing, completed, dead_letter")
	}
	pg, err := pageOf(q.Request, defLimit)
	if err != nil {
		return p, err
	}
	p.Limit, p.Offset = pg.capped(), pg.Offset
	return p, nil
}

func (s *Server) handleListMessages(q request) (messagePage, error) {
	p, err := messageListing(q, filterOf(q.Request).Queue, 200)
	if err != nil {
		return messagePage{}, err
	}
	l, err := s.views.Messages(q.Context(), p)
	if err != nil {
		return messagePage{}, err
	}
	return messagePage{Messages: l.Messages, ConsumerGroup: l.ConsumerGroup, Pagination: page{p.Limit, p.Offset}, Mode: l.Mode}, nil
}

// messageAddress reads the (partitionId, transactionId) a message route names.
func messageAddress(q request) (uuid.UUID, string, error) {
	pid, ok := parseUUID(q.PathValue("partitionId"))
	if !ok {
		return uuid.Nil, "", badRequest("partitionId must be a UUID")
	}
	return pid, q.PathValue("transactionId"), nil
}

func (s *Server) handleGetMessage(q request) (*views.MessageView, error) {
	pid, tx, err := messageAddress(q)
	if err != nil {
		return nil, err
	}
	return s.views.Message(q.Context(), pid, tx)
}

func (s *Server) handleDeleteMessage(q request) (map[string]any, error) {
	pid, tx, err := messageAddress(q)
	if err != nil {
		return nil, err
	}
	if err := s.views.DeleteMessage(q.Context(), pid, tx); err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "partitionId": pid.String(), "transactionId": tx,
		"message": "Message deleted successfully"}, nil
}

func (s *Server) handleStatusQueueMessages(q request) ([]queueMessage, error) {
	p, err := messageListing(q, q.PathValue("queue"), 50)
	if err != nil {
		return nil, err
	}
	l, err := s.views.QueueMessages(q.Context(), p)
	if err != nil {
		return nil, err
	}
	out := make([]queueMessage, len(l.Messages))
	for i, m := range l.Messages {
		out[i] = queueMessage{MessageRef: m.MessageRef, Status: m.Status, CreatedAt: m.CreatedAt}
	}
	return out, nil
}
