package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleAck(q request) ([]engine.AckResult, error) {
	var a rawAck
	if err := q.decode(&a); err != nil {
		return nil, err
	}
	it, err := a.toItem("transactionId is required", "partitionId is required to ensure message uniqueness")
	if err != nil {
		return nil, err
	}
	return s.eng.Ack(q.Context(), []engine.AckItem{it})
}

func (s *Server) handleAckBatch(q request) ([]engine.AckResult, error) {
	var body struct {
		ConsumerGroup   json.RawMessage `json:"consumerGroup"`
		Acknowledgments json.RawMessage `json:"acknowledgments"`
	}
	raws, err := q.batch(&body, &body.Acknowledgments, "acknowledgments array is required")
	if err != nil {
		return nil, err
	}
	group, ok := optString(body.ConsumerGroup)
	if !ok {
		return nil, badRequest("consumerGroup must be a string")
	}
	items := make([]engine.AckItem, len(raws))
	for i, raw := range raws {
		var a rawAck
		if err := decodeElement(raw, &a, "acknowledgments", i); err != nil {
			return nil, err
		}
		it, err := a.toItem("Each acknowledgment must have a valid transactionId string",
			"Each acknowledgment must have a valid partitionId string to ensure message uniqueness")
		if err != nil {
			return nil, err
		}
		if group != "" {
			it.Group = group
		}
		items[i] = it
	}
	return s.eng.Ack(q.Context(), items)
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
func (a rawAck) toItem(missingTx, missingPartition string) (engine.AckItem, error) {
	var it engine.AckItem
	var pid string
	if err := readStrings(required(a.TransactionID, &it.TransactionID, missingTx), required(a.PartitionID, &pid, missingPartition)); err != nil {
		return engine.AckItem{}, err
	}
	id, ok := parseUUID(pid)
	if !ok {
		return engine.AckItem{}, badRequest(fmt.Sprintf("partitionId must be a UUID: %q", pid))
	}
	it.PartitionID = id
	if err := readStrings(optional(a.LeaseID, &it.LeaseID, "leaseId must be a string"), optional(a.Status, &it.Status, "status must be a string"),
		optional(a.ConsumerGroup, &it.Group, "consumerGroup must be a string"), optional(a.Error, &it.Error, "error must be a string")); err != nil {
		return engine.AckItem{}, err
	}
	if err := engine.CheckAckStatus(it.Status); err != nil {
		return engine.AckItem{}, err
	}
	return it, nil
}
