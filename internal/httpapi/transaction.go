package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleTransaction(q request) (*engine.TxResult, error) {
	var body struct {
		Operations json.RawMessage `json:"operations"`
	}
	b, err := readBody(q.w, q.Request, q.max)
	if err != nil {
		return nil, err
	}
	// A push operation counts its items: the cap bounds what the transaction decodes (batchcap.go).
	if err := checkBatchSize(b, "operations", "items", "operations and pushed items", s.maxBatchItems()); err != nil {
		return nil, err
	}
	if err := parseBody(b, &body); err != nil {
		return nil, err
	}
	raws, err := rawArray(body.Operations, "operations array required")
	if err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, badRequest("operations array cannot be empty")
	}
	sub := subject(q.Request)
	var ops []engine.TxOp
	for i, raw := range raws {
		var op rawTxOp
		if err := decodeElement(raw, &op, "operations", i); err != nil {
			return nil, err
		}
		typ, ok := optString(op.Type)
		if !ok {
			return nil, badRequest(fmt.Sprintf("operations[%d]: type must be a string", i))
		}
		switch typ {
		case "ack":
			var a rawAck
			_ = json.Unmarshal(raw, &a) // raw is an object: it decoded above
			it, err := a.toItem(fmt.Sprintf("operations[%d]: transactionId is required", i),
				fmt.Sprintf("operations[%d]: partitionId is required to ensure message uniqueness", i))
			if err != nil {
				return nil, err
			}
			ops = append(ops, engine.TxOp{Ack: &it})
		case "push":
			var items []engine.PushItem
			var err error
			if present(op.Items) {
				items, err = parsePushItems(op.Items, sub)
			} else {
				single := op.rawPushItem
				if !present(single.Payload) {
					single.Payload = op.Data
				}
				b, _ := json.Marshal([]rawPushItem{single})
				items, err = parsePushItems(b, sub)
			}
			if err != nil {
				return nil, badRequest(fmt.Sprintf("operations[%d]: %s", i, err.Error()))
			}
			for k := range items {
				ops = append(ops, engine.TxOp{Push: &items[k]})
			}
		default:
			return nil, badRequest(fmt.Sprintf("operations[%d]: unsupported operation type %q (want ack or push)", i, typ))
		}
	}
	return s.eng.Transaction(q.Context(), ops)
}

// rawTxOp is one operation of a transaction as the body gives it. A push operation without items
// is one message: its fields are the push item's, with data standing in for a missing payload. An
// ack operation is read again as a rawAck (its transactionId would clash with the push item's).
type rawTxOp struct {
	rawPushItem
	Type  json.RawMessage `json:"type"`
	Items json.RawMessage `json:"items"`
	Data  json.RawMessage `json:"data"`
}
