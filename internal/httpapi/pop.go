package httpapi

import (
	"net/http"
	"time"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

// subject is the authenticated caller's sub claim, stamped as producerSub on pushes ("" without auth).
func subject(r *http.Request) string {
	p, _ := auth.FromContext(r.Context())
	return p.Subject
}

func (s *Server) handlePop(w http.ResponseWriter, r *http.Request) error {
	req := engine.PopRequest{Queue: r.PathValue("queue"), Partition: r.PathValue("partition")}
	q := r.URL.Query() // once: every Get of r.URL.Query() would parse the query string again
	var err error
	if req.Batch, err = intParam(q, "batch", s.opt.DefaultBatchSize, 1); err != nil {
		return err
	}
	if req.Partitions, err = intParam(q, "partitions", 1, 1); err != nil {
		return err
	}
	timeoutMs, err := intParam(q, "timeout", int(s.opt.DefaultTimeout/time.Millisecond), 0)
	if err != nil {
		return err
	}
	req.Timeout = time.Duration(timeoutMs) * time.Millisecond
	if req.Wait, err = boolParam(q, "wait"); err != nil {
		return err
	}
	if req.AutoAck, err = boolParam(q, "autoAck"); err != nil {
		return err
	}
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
