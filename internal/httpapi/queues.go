package httpapi

import (
	"encoding/json"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/views"
)

func (s *Server) handleResourceQueues(q request) (queueList, error) {
	l, err := s.views.Queues(q.Context(), views.QueueFilter{})
	if err != nil {
		return queueList{}, err
	}
	return queueList{Queues: l.Queues, StatsAge: l.StatsAge}, nil
}

func (s *Server) handleResourceQueue(q request) (*views.QueueDetail, error) {
	return s.views.Queue(q.Context(), q.PathValue("queue"))
}

func (s *Server) handleNamespaces(q request) (namespaceList, error) {
	ns, err := s.views.Namespaces(q.Context())
	return namespaceList{ns}, err
}

func (s *Server) handleTasks(q request) (taskList, error) {
	ts, err := s.views.Tasks(q.Context())
	return taskList{ts}, err
}

func (s *Server) handleStatusQueues(q request) (queueList, error) {
	p, err := pageOf(q.Request, 100)
	if err != nil {
		return queueList{}, err
	}
	f := filterOf(q.Request)
	l, err := s.views.Queues(q.Context(), views.QueueFilter{Namespace: f.Namespace, Task: f.Task, Limit: p.Limit, Offset: p.Offset})
	if err != nil {
		return queueList{}, err
	}
	return queueList{Queues: l.Queues, Pagination: &p, StatsAge: l.StatsAge}, nil
}

func (s *Server) handleStatusQueue(q request) (statusQueue, error) {
	d, err := s.views.Queue(q.Context(), q.PathValue("queue"))
	if err != nil {
		return statusQueue{}, err
	}
	return statusQueueOf(d), nil
}

func (s *Server) handleQueueDelete(q request) (map[string]any, error) {
	name := q.PathValue("queue")
	if err := s.eng.DeleteQueue(q.Context(), name); err != nil {
		return nil, err
	}
	return map[string]any{"deleted": true, "queue": name, "existed": true}, nil
}

func (s *Server) handleConfigure(q request) (*engine.ConfigureResult, error) {
	var body struct {
		Queue     json.RawMessage     `json:"queue"`
		Namespace json.RawMessage     `json:"namespace"`
		Task      json.RawMessage     `json:"task"`
		Options   engine.QueueOptions `json:"options"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	// "" names a queue (the original's clients configure one); only a missing, null or non-string
	// queue is refused.
	if len(body.Queue) == 0 || string(body.Queue) == "null" {
		return nil, badRequest("queue is required")
	}
	var name, ns, task string
	if err := readStrings(optional(body.Queue, &name, "queue is required"), optional(body.Namespace, &ns, "namespace must be a string"),
		optional(body.Task, &task, "task must be a string")); err != nil {
		return nil, err
	}
	return s.eng.Configure(q.Context(), name, ns, task, body.Options)
}
