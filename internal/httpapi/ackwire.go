package httpapi

import (
	"encoding/json"
	"sync"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/jsonscan"
)

// Every delivered message is acknowledged, by every consumer group: the ack routes' JSON work is done
// once per delivery, and through encoding/json it was one pass of the input guard, one of the
// decoder over the body, one more over the acknowledgments array and one per acknowledgment. This
// file reads an ack body in one pass with the push route's reader (pushwire.go: the same rules, the
// same giving up on any body it is not sure to read as encoding/json does, the general path then
// decoding it and wording any error); the answer writes itself (engine.AckResults). Tests compare
// both with encoding/json (ackwire_internal_test.go, and FuzzAckBody on every body it sends).

// ackFields are rawAck's fields, in the order ackField stores them, and ackKinds how the rules treat
// them.
var (
	ackFields = [...]string{"transactionId", "partitionId", "consumerGroup", "leaseId", "status", "error"}
	ackKinds  [len(ackFields)]jsonguard.Kind
)

func init() {
	for i, f := range ackFields {
		ackKinds[i] = jsonguard.API.KindOf([]byte(f))
	}
}

// Depths of an acknowledgment's members, as jsonguard counts them.
const (
	ackMemberDepth      = bodyMemberDepth // POST /api/v1/ack: {"transactionId": here
	batchAckMemberDepth = 3               // {"acknowledgments":[{"transactionId": here
)

// field is where ackFields[i] goes.
func (a *rawAck) field(i int) *json.RawMessage {
	switch i {
	case 0:
		return &a.TransactionID
	case 1:
		return &a.PartitionID
	case 2:
		return &a.ConsumerGroup
	case 3:
		return &a.LeaseID
	case 4:
		return &a.Status
	}
	return &a.Error
}

// ack reads an acknowledgment object after its opening brace into a, its members at depth.
func (s *pushScan) ack(a *rawAck, depth int) bool {
	return s.fields(depth, ackFields[:], ackKinds[:], func(i int) *json.RawMessage { return a.field(i) }) // see item
}

// scanAck reads the body of POST /api/v1/ack, one acknowledgment object, as decodeBody reads it into
// a rawAck; its fields alias b. ok=false: the general path must read this body.
func scanAck(b []byte) (rawAck, bool) {
	s := pushScan{Scanner: jsonscan.Scanner{B: b}}
	var a rawAck
	s.WS()
	if !s.Eat('{') || !s.ack(&a, ackMemberDepth) || !s.End() {
		return rawAck{}, false
	}
	return a, true
}

// scanAckBatch reads the body of POST /api/v1/ack/batch, appending its acknowledgments (each an
// object) to acks; the fields alias b. ok=false: the general path must read this body (it has no
// acknowledgments array, or one with an element that is not an object, or anything the reader is not
// sure of).
func scanAckBatch(b []byte, acks []rawAck, limit int) (group json.RawMessage, _ []rawAck, ok bool) {
	s := pushScan{Scanner: jsonscan.Scanner{B: b}, limit: limit}
	s.WS()
	if !s.Eat('{') {
		return nil, nil, false
	}
	seen := false
	ok = s.Members(func(k []byte) bool {
		switch idx, ok := jsonscan.Known(k, "acknowledgments", "consumerGroup"); {
		case !ok:
			return false
		case idx == 0:
			if seen {
				return false // encoding/json keeps the last one: not worth the reader's while
			}
			seen = true
			acks, ok = s.acks(acks)
			return ok
		case idx == 1:
			group, ok = s.value(bodyMemberDepth, ackKinds[2])
			return ok
		}
		_, ok := s.value(bodyMemberDepth, jsonguard.API.KindOf(k))
		return ok
	})
	if !ok || !s.End() || !seen {
		return nil, nil, false
	}
	return group, acks, true
}

// acks reads the acknowledgments array, appending to acks; every element must be an object.
func (s *pushScan) acks(acks []rawAck) ([]rawAck, bool) {
	ok := s.objects(func() bool {
		if s.full(len(acks)) {
			return false
		}
		acks = append(acks, rawAck{})
		return s.ack(&acks[len(acks)-1], batchAckMemberDepth)
	})
	return acks, ok
}

// rawAcks recycles the reader's acknowledgments: they only live while their items are made.
var rawAcks = sync.Pool{New: func() any { return new([]rawAck) }}

// fastAckBatch is the batch body read by scanAckBatch and checked as the general path checks it:
// the same items, or the same error. fast=false: the general path must read this body.
func fastAckBatch(b []byte, limit int) (items []engine.AckItem, fast bool, err error) {
	pooled := rawAcks.Get().(*[]rawAck)
	group, acks, ok := scanAckBatch(b, (*pooled)[:0], limit)
	defer func() { recycle(&rawAcks, pooled, acks) }()
	if !ok {
		return nil, false, nil
	}
	items, err = batchAckItems(group, len(acks), func(i int) (rawAck, error) { return acks[i], nil })
	return items, true, err
}

// batchAckItems checks a batch's consumerGroup and then its n acknowledgments in order (element
// decodes element i, or words why it cannot); the first failure is the error.
func batchAckItems(rawGroup json.RawMessage, n int, element func(i int) (rawAck, error)) ([]engine.AckItem, error) {
	group, ok := optString(rawGroup)
	if !ok {
		return nil, badRequest("consumerGroup must be a string")
	}
	items := make([]engine.AckItem, n)
	for i := range items {
		a, err := element(i)
		if err != nil {
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
	return items, nil
}
