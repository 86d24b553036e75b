package httpapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleDLQList(q request) (*engine.DLQPage, error) {
	rf := filterOf(q.Request)
	f := engine.DLQFilter{Queue: rf.Queue, Group: rf.Group, Partition: rf.Partition}
	var err error
	if f.From, err = queryTime(q.Request, "from"); err != nil {
		return nil, err
	}
	if f.To, err = queryTime(q.Request, "to"); err != nil {
		return nil, err
	}
	pg, err := pageOf(q.Request, 100)
	if err != nil {
		return nil, err
	}
	f.Limit, f.Offset = pg.Limit, pg.Offset
	return s.eng.DeadLetters().ListDLQ(q.Context(), f)
}

// dlqAddress reads the (partitionId, transactionId) a DLQ row route names; a non-UUID partition id
// cannot name anything.
func dlqAddress(q request) (engine.DLQAddress, error) {
	pid, tx := q.PathValue("partitionId"), q.PathValue("transactionId")
	id, err := pathUUID(q.Request, "partitionId", fmt.Sprintf("dead letter %s/%s not found", pid, tx))
	if err != nil {
		return engine.DLQAddress{}, err
	}
	return engine.DLQAddress{PartitionID: id, TransactionID: tx, Group: q.URL.Query().Get("consumerGroup")}, nil
}

func (s *Server) handleDLQGet(q request) (*engine.DeadLetter, error) {
	a, err := dlqAddress(q)
	if err != nil {
		return nil, err
	}
	return s.eng.DeadLetters().GetDLQ(q.Context(), a.PartitionID, a.TransactionID, a.Group)
}

// dlqAction is a route that acts on one dead letter (delete, retry): it answers with the address and
// the count of rows touched under the name done.
func dlqAction(done string, act func(d *engine.DeadLetters, ctx context.Context, partitionID uuid.UUID, txID, group string) (int64, error)) call[map[string]any] {
	return func(s *Server, q request) (map[string]any, error) {
		a, err := dlqAddress(q)
		if err != nil {
			return nil, err
		}
		n, err := act(s.eng.DeadLetters(), q.Context(), a.PartitionID, a.TransactionID, a.Group)
		if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "partitionId": a.PartitionID.String(), "transactionId": a.TransactionID, done: n}, nil
	}
}
