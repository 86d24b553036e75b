package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/queen-go/queen/internal/engine"
)

type rawAck struct {
	TransactionID json.RawMessage `json:"transactionId"`
	PartitionID   json.RawMessage `json:"partitionId"`
	LeaseID       json.RawMessage `json:"leaseId"`
	Status        json.RawMessage `json:"status"`
	ConsumerGroup json.RawMessage `json:"consumerGroup"`
	Error         json.RawMessage `json:"error"`
}

// toItem validates one acknowledgement; missing is the message for a missing or non-string id field.
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
	it := engine.AckItem{TransactionID: tx, PartitionID: id}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{{"leaseId", a.LeaseID, &it.LeaseID}, {"status", a.Status, &it.Status}, {"consumerGroup", a.ConsumerGroup, &it.Group}, {"error", a.Error, &it.Error}} {
		v, ok := optString(f.raw)
		if !ok {
			return engine.AckItem{}, badRequest(f.name + " must be a string")
		}
		*f.dst = v
	}
	if err := engine.CheckAckStatus(it.Status); err != nil {
		return engine.AckItem{}, err
	}
	return it, nil
}

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
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if !present(body.Acknowledgments) || body.Acknowledgments[0] != '[' || json.Unmarshal(body.Acknowledgments, &raws) != nil {
		return nil, badRequest("acknowledgments array is required")
	}
	group, ok := optString(body.ConsumerGroup)
	if !ok {
		return nil, badRequest("consumerGroup must be a string")
	}
	items := make([]engine.AckItem, len(raws))
	for i, raw := range raws {
		var a rawAck
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
			return nil, badRequest(fmt.Sprintf("bad body: acknowledgments[%d] must be an object", i))
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
