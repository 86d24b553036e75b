package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
)

type rawTxOp struct {
	Type  json.RawMessage `json:"type"`
	Items json.RawMessage `json:"items"`
	Data  json.RawMessage `json:"data"`
}

func (s *Server) handleTransaction(q request) (*engine.TxResult, error) {
	var body struct {
		Operations json.RawMessage `json:"operations"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if !present(body.Operations) || body.Operations[0] != '[' || json.Unmarshal(body.Operations, &raws) != nil {
		return nil, badRequest("operations array required")
	}
	if len(raws) == 0 {
		return nil, badRequest("operations array cannot be empty")
	}
	sub := subject(q.Request)
	var ops []engine.TxOp
	for i, raw := range raws {
		var op rawTxOp
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &op) != nil {
			return nil, badRequest(fmt.Sprintf("bad body: operations[%d] must be an object", i))
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
				var single rawPushItem
				_ = json.Unmarshal(raw, &single)
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
