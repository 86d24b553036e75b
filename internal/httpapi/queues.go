package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleResourceQueues(w http.ResponseWriter, r *http.Request) error {
	l, err := s.eng.Queues(r.Context(), engine.QueueFilter{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, queueList{Queues: l.Queues, StatsAge: l.StatsAge})
	return nil
}

func (s *Server) handleResourceQueue(w http.ResponseWriter, r *http.Request) error {
	q, err := s.eng.Queue(r.Context(), r.PathValue("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) handleNamespaces(w http.ResponseWriter, r *http.Request) error {
	ns, err := s.eng.Namespaces(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Namespaces []engine.NamespaceTotals `json:"namespaces"`
	}{ns})
	return nil
}

func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.eng.Tasks(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Tasks []engine.TaskTotals `json:"tasks"`
	}{ts})
	return nil
}

func (s *Server) handleStatusQueues(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := queryPage(r, 100)
	if err != nil {
		return err
	}
	qf := r.URL.Query()
	l, err := s.eng.Queues(r.Context(), engine.QueueFilter{Namespace: qf.Get("namespace"), Task: qf.Get("task"),
		Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, queueList{Queues: l.Queues, Pagination: &page{limit, offset}, StatsAge: l.StatsAge})
	return nil
}

func (s *Server) handleStatusQueue(w http.ResponseWriter, r *http.Request) error {
	q, err := s.eng.Queue(r.Context(), r.PathValue("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusQueueOf(q))
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
