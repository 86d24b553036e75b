package httpapi

import (
	"fmt"
	"net/http"

	"github.com/queen-go/queen/internal/engine"
)

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
	id, err := pathUUID(r, "partitionId", fmt.Sprintf("dead letter %s/%s not found", pid, tx))
	if err != nil {
		return engine.DLQAddress{}, err
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
