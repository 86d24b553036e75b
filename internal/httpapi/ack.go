package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleAck(q request) (engine.AckResults, error) {
	b, err := readBody(q.w, q.Request, q.max)
	if err != nil {
		return nil, err
	}
	a, fast := scanAck(b) // ackwire.go; its fields alias b
	if !fast {
		if err := parseBody(b, &a); err != nil {
			return nil, err
		}
	}
	it, err := a.toItem("transactionId is required", "partitionId is required to ensure message uniqueness")
	if err != nil {
		return nil, err
	}
	return s.eng.Ack(q.Context(), []engine.AckItem{it})
}

func (s *Server) handleAckBatch(q request) (engine.AckResults, error) {
	b, err := readBody(q.w, q.Request, q.max)
	if err != nil {
		return nil, err
	}
	items, fast, err := fastAckBatch(b, s.maxBatchItems()) // ackwire.go; gives up past the cap
	if !fast {
		if err := checkBatchSize(b, "acknowledgments", "", "acknowledgments", s.maxBatchItems()); err != nil {
			return nil, err
		}
		items, err = parseAckBatch(b)
	}
	if err != nil {
		return nil, err
	}
	return s.eng.Ack(q.Context(), items)
}

// parseAckBatch reads a batch body with encoding/json, wording the error of any malformed one.
func parseAckBatch(b []byte) ([]engine.AckItem, error) {
	var body struct {
		ConsumerGroup   json.RawMessage `json:"consumerGroup"`
		Acknowledgments json.RawMessage `json:"acknowledgments"`
	}
	if err := parseBody(b, &body); err != nil {
		return nil, err
	}
	raws, err := rawArray(body.Acknowledgments, "acknowledgments array is required")
	if err != nil {
		return nil, err
	}
	return batchAckItems(body.ConsumerGroup, len(raws), func(i int) (rawAck, error) {
		var a rawAck
		return a, decodeElement(raws[i], &a, "acknowledgments", i)
	})
}

// rawAddress is how a body names a message, and the consumer group it speaks for.
type rawAddress struct {
	TransactionID json.RawMessage `json:"transactionId"`
	PartitionID   json.RawMessage `json:"partitionId"`
	ConsumerGroup json.RawMessage `json:"consumerGroup"`
}

// rawAck is one acknowledgement as a body gives it: every field raw, so that toItem words the error
// for the field it finds wrong.
type rawAck struct {
	rawAddress
	LeaseID json.RawMessage `json:"leaseId"`
	Status  json.RawMessage `json:"status"`
	Error   json.RawMessage `json:"error"`
}

// toItem validates one acknowledgement; missing is the message for a missing or non-string id field.
// The fields are checked in a fixed order and the first bad one is the error.
func (a rawAck) toItem(missingTx, missingPartition string) (engine.AckItem, error) {
	tx, ok := optString(a.TransactionID)
	if !ok || tx == "" {
		return engine.AckItem{}, badRequest(missingTx)
	}
	pid, ok := optString(a.PartitionID)
	if !ok || pid == "" {
		return engine.AckItem{}, badRequest(missingPartition)
	}
	id, ok := parseUUID(pid)
	if !ok {
		return engine.AckItem{}, badRequest(fmt.Sprintf("partitionId must be a UUID: %q", pid))
	}
	// Read without readStrings: its destinations would be pointers to this item, which escape
	// analysis then moves to the heap, once per acknowledged message.
	var err error
	it := engine.AckItem{TransactionID: tx, PartitionID: id}
	it.LeaseID = optField(a.LeaseID, "leaseId must be a string", &err)
	it.Status = optField(a.Status, "status must be a string", &err)
	it.Group = optField(a.ConsumerGroup, "consumerGroup must be a string", &err)
	it.Error = optField(a.Error, "error must be a string", &err)
	if err != nil {
		return engine.AckItem{}, err
	}
	if err := engine.CheckAckStatus(it.Status); err != nil {
		return engine.AckItem{}, err
	}
	return it, nil
}

// optField reads an optional string field unless *err already holds an earlier field's error; a
// field that is not a string sets *err to a 400 with the text bad.
func optField(raw json.RawMessage, bad string, err *error) string {
	if *err != nil {
		return ""
	}
	s, ok := optString(raw)
	if !ok {
		*err = badRequest(bad)
	}
	return s
}
