package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
)

func (s *Server) handlePush(q request) (engine.PushResults, error) {
	b, err := readBody(q.w, q.Request, q.max)
	if err != nil {
		return nil, err
	}
	// The items' payloads point into b, which lives as long as they do, whatever its size: no payload
	// is copied, so a push costs its body and the store's one row at a time (docs/decisions.md,
	// "Memory bound"). The reader applies guardBody's rules itself, and gives up past the item cap.
	items, _ := fastPushItems(b, subject(q.Request), s.maxBatchItems())
	if items == nil {
		if err := checkBatchSize(b, "items", "", "items", s.maxBatchItems()); err != nil {
			return nil, err
		}
		if err := guardBody(b); err != nil {
			return nil, err
		}
		if items, err = parsePushBody(b, subject(q.Request)); err != nil {
			return nil, err
		}
	}
	return s.eng.Push(q.Context(), items)
}

// badPayload is the 400 of a payload the input rules refuse.
func badPayload(err error, i int) error {
	var ge *jsonguard.Error
	if errors.As(err, &ge) {
		return badRequest("bad body: " + ge.Error())
	}
	return badRequest(fmt.Sprintf("bad body: items[%d].payload is not valid JSON", i))
}

// rawPushItem is one pushed message as a body gives it; parsePushItems reads its fields.
type rawPushItem struct {
	Queue         json.RawMessage   `json:"queue"`
	Partition     json.RawMessage   `json:"partition"`
	Payload       json.RawMessage   `json:"payload"`
	TransactionID json.RawMessage   `json:"transactionId"`
	TraceID       json.RawMessage   `json:"traceId"`
	payload       jsonguard.Payload // Payload, made by the one-pass reader as it checked it
}

// parsePushItems validates push items item by item; the first failure refuses the whole request.
func parsePushItems(raw json.RawMessage, producerSub string) ([]engine.PushItem, error) {
	// One pass decodes every item, copying each payload once (the memory bound counts copies); the
	// item-by-item pass below only runs to word the error of a malformed array.
	var its []*rawPushItem
	if !present(raw) || raw[0] != '[' || json.Unmarshal(raw, &its) != nil {
		elems, err := rawArray(raw, "items array is required")
		if err != nil {
			return nil, err
		}
		for i, el := range elems {
			if err := decodeElement(el, new(rawPushItem), "items", i); err != nil {
				return nil, err
			}
		}
		return nil, badRequest("items array is required")
	}
	return pushItemsFrom(its, producerSub)
}

// parsePushBody reads a push body. The common body decodes in one pass straight into the items; any
// body that pass refuses (or that has no items array) goes the two-step way, which words the errors.
func parsePushBody(b []byte, producerSub string) ([]engine.PushItem, error) {
	var fast struct {
		Items []*rawPushItem `json:"items"`
	}
	if json.Unmarshal(b, &fast) == nil && fast.Items != nil {
		return pushItemsFrom(fast.Items, producerSub)
	}
	var body struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, badBody(err)
	}
	return parsePushItems(body.Items, producerSub)
}

// pushItemsFrom checks the decoded items one by one; the first failure refuses the whole request.
func pushItemsFrom(its []*rawPushItem, producerSub string) ([]engine.PushItem, error) {
	items := make([]engine.PushItem, len(its))
	for i, it := range its {
		if it == nil {
			return nil, badRequest(fmt.Sprintf("bad body: items[%d] must be an object", i))
		}
		// Field by field rather than through readStrings: this runs once per pushed message, and
		// readStrings' argument list would put every item on the heap.
		q, ok := optString(it.Queue)
		if !ok || q == "" {
			return nil, badRequest("Queue must be a string")
		}
		p, ok := optString(it.Partition)
		if !ok {
			return nil, badRequest("Partition must be a string")
		}
		tx, ok := optString(it.TransactionID)
		if !ok {
			return nil, badRequest("TransactionId must be a string")
		}
		tr, ok := optString(it.TraceID)
		if !ok {
			return nil, badRequest("TraceId must be a string")
		}
		payload, err := jsonguard.NewPayload(it.Payload, fmt.Sprintf("items[%d].payload", i))
		if err != nil {
			return nil, badPayload(err, i)
		}
		item := engine.PushItem{Queue: q, Partition: p, Payload: payload, TransactionID: tx, ProducerSub: producerSub}
		if tr != "" {
			id, ok := parseUUID(tr)
			if !ok {
				return nil, badRequest(fmt.Sprintf("TraceId must be a UUID (item %d: %q)", i, tr))
			}
			item.TraceID = &id
		}
		items[i] = item
	}
	return items, nil
}
