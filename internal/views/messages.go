package views

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// Messages at rest: listing, reading and deleting them outside the pop/ack flow.

// MessageFilter selects the messages of a listing; empty strings match everything.
type MessageFilter struct {
	Queue, Partition, Namespace, Task string
	Group                             string // the consumer group statuses are relative to ("": queue mode)
	Status                            string // pending, processing, completed, dead_letter or ""
	Limit, Offset                     int
}

// MessageRef names a message and where it lives; every message shape starts with it.
type MessageRef struct {
	ID            string `json:"id"`
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	QueuePath     string `json:"queuePath"`
	Queue         string `json:"queue"`
	Partition     string `json:"partition"`
}

func messageRef(id, partitionID uuid.UUID, tx, queue, partition string) MessageRef {
	return MessageRef{ID: id.String(), TransactionID: tx, PartitionID: partitionID.String(), QueuePath: queue + "/" + partition,
		Queue: queue, Partition: partition}
}

// MessageItem is one message of a listing, without payload.
type MessageItem struct {
	MessageRef
	Namespace      string  `json:"namespace"`
	Task           string  `json:"task"`
	Status         string  `json:"status"`
	ConsumerGroup  string  `json:"consumerGroup"`
	TraceID        *string `json:"traceId"`
	ProducerSub    *string `json:"producerSub"`
	QueuePriority  int32   `json:"queuePriority"`
	CreatedAt      string  `json:"createdAt"`
	LeaseExpiresAt *string `json:"leaseExpiresAt"`
}

// ConsumptionMode says how a queue is consumed: by queue mode, by named groups (bus), both, or not yet.
type ConsumptionMode struct {
	HasQueueMode     bool   `json:"hasQueueMode"`
	BusGroupsCount   int    `json:"busGroupsCount"`
	Type             string `json:"type"`
	ConsumedByGroups *int   `json:"consumedByGroups,omitempty"` // set on one message: the groups that consumed it
}

func modeOf(groups []string) ConsumptionMode {
	hasQ := slices.Contains(groups, engine.QueueMode)
	bus := len(groups)
	if hasQ {
		bus--
	}
	typ := "none"
	switch {
	case hasQ && bus > 0:
		typ = "hybrid"
	case hasQ:
		typ = "queue"
	case bus > 0:
		typ = "bus"
	}
	return ConsumptionMode{HasQueueMode: hasQ, BusGroupsCount: bus, Type: typ}
}

// MessageList is a page of messages; Mode is set when the listing names a queue.
type MessageList struct {
	Messages      []MessageItem
	ConsumerGroup string
	Mode          *ConsumptionMode
}

// Messages lists messages newest first, with their status for one consumer group.
func (v *Views) Messages(ctx context.Context, f MessageFilter) (*MessageList, error) {
	if f.Group == "" {
		f.Group = engine.QueueMode
	}
	var rows []store.MessageRow
	var groups []string
	err := v.read(ctx, func(st *store.Store) (err error) { // one store for both reads
		if rows, err = st.Messages().ListMessages(ctx, store.ListMessagesParams(f)); err != nil || f.Queue == "" {
			return engine.OpFailed("list messages", err)
		}
		groups, err = st.Queues().QueueGroups(ctx, f.Queue)
		return engine.OpFailed("queue groups", err)
	})
	if err != nil {
		return nil, err
	}
	out := &MessageList{Messages: make([]MessageItem, len(rows)), ConsumerGroup: f.Group}
	for i, m := range rows {
		out.Messages[i] = MessageItem{MessageRef: messageRef(m.ID, m.PartitionID, m.TransactionID, m.Queue, m.Partition),
			Namespace: m.Namespace, Task: m.Task, Status: m.Status, ConsumerGroup: f.Group, TraceID: engine.OptUUID(m.TraceID), ProducerSub: m.ProducerSub,
			QueuePriority: m.Priority, CreatedAt: engine.ISOMillis(m.CreatedAt), LeaseExpiresAt: engine.OptTime(m.LeaseExpiresAt)}
	}
	if f.Queue != "" {
		mode := modeOf(groups)
		out.Mode = &mode
	}
	return out, nil
}

// QueueMessages lists a queue's messages like [Engine.Messages]; a NotFoundError when the queue does not exist.
func (v *Views) QueueMessages(ctx context.Context, f MessageFilter) (*MessageList, error) {
	if err := v.read(ctx, func(st *store.Store) error { _, err := queueInfo(ctx, st, f.Queue); return err }); err != nil {
		return nil, err
	}
	return v.Messages(ctx, f)
}

// MessageGroup is one consumer group's view of a message.
type MessageGroup struct {
	Name           string  `json:"name"`
	Consumed       bool    `json:"consumed"`
	RetryCount     int32   `json:"retryCount"`
	LeaseExpiresAt *string `json:"leaseExpiresAt"`
	DeadLetter     bool    `json:"deadLetter"`
}

// MessageQueueConfig is the part of a queue's configuration a message view shows.
type MessageQueueConfig struct {
	LeaseTime  int32 `json:"leaseTime"`
	RetryLimit int32 `json:"retryLimit"`
	RetryDelay int32 `json:"retryDelay"`
	TTL        int32 `json:"ttl"`
	Priority   int32 `json:"priority"`
}

// MessageView is one message with its decrypted payload and its status across consumer groups: dead_letter
// when a group dead-lettered it, completed when every group consumed it, processing while leased.
type MessageView struct {
	MessageRef
	Namespace      string             `json:"namespace"`
	Task           string             `json:"task"`
	Status         string             `json:"status"`
	Payload        json.RawMessage    `json:"payload"`
	IsEncrypted    bool               `json:"isEncrypted"`
	TraceID        *string            `json:"traceId"`
	ProducerSub    *string            `json:"producerSub"`
	CreatedAt      string             `json:"createdAt"`
	ErrorMessage   *string            `json:"errorMessage"`
	RetryCount     *int32             `json:"retryCount"`
	LeaseExpiresAt *string            `json:"leaseExpiresAt"`
	QueueConfig    MessageQueueConfig `json:"queueConfig"`
	Mode           ConsumptionMode    `json:"mode"`
	ConsumerGroups []MessageGroup     `json:"consumerGroups"`
}

// Message reads one message (payload decrypted) and every group's view of it; a NotFoundError when missing.
func (v *Views) Message(ctx context.Context, partitionID uuid.UUID, tx string) (*MessageView, error) {
	var m *store.MessageDetail
	var cs []store.MessageConsumer
	err := v.read(ctx, func(st *store.Store) (err error) {
		m, cs, err = st.Messages().GetMessage(ctx, partitionID, tx)
		return err
	})
	if err != nil {
		return nil, engine.OpFailedOr("get message", err, "Message not found: %s/%s", partitionID, tx)
	}
	payload, err := v.payloads.DecryptPayload(m.Payload, m.Encrypted)
	if err != nil {
		return nil, engine.OpFailed("get message", err)
	}
	view := &MessageView{MessageRef: messageRef(m.ID, m.PartitionID, m.TransactionID, m.Queue, m.Partition),
		Namespace: m.Namespace, Task: m.Task, Status: "pending", Payload: payload, IsEncrypted: m.Encrypted, TraceID: engine.OptUUID(m.TraceID),
		ProducerSub: m.ProducerSub, CreatedAt: engine.ISOMillis(m.CreatedAt),
		QueueConfig: MessageQueueConfig{LeaseTime: m.LeaseTime, RetryLimit: m.RetryLimit, RetryDelay: m.RetryDelay,
			TTL: m.TTL, Priority: m.Priority},
		ConsumerGroups: make([]MessageGroup, len(cs))}
	names := make([]string, len(cs))
	consumedBy, processing, dead := 0, false, false
	for i, c := range cs {
		names[i] = c.Group
		if c.Consumed {
			consumedBy++
		}
		if c.LeaseExpiresAt != nil {
			processing = true
			view.LeaseExpiresAt = engine.OptTime(c.LeaseExpiresAt)
		}
		deadHere := c.DLQError != nil || c.DLQRetries != nil
		if deadHere {
			dead = true
			var retries int32
			if c.DLQRetries != nil {
				retries = *c.DLQRetries
			}
			view.ErrorMessage, view.RetryCount = c.DLQError, &retries
		}
		view.ConsumerGroups[i] = MessageGroup{Name: c.Group, Consumed: c.Consumed, RetryCount: c.Retries,
			LeaseExpiresAt: engine.OptTime(c.LeaseExpiresAt), DeadLetter: deadHere}
	}
	switch {
	case dead:
		view.Status = "dead_letter"
	case len(cs) > 0 && consumedBy == len(cs):
		view.Status = "completed"
	case processing:
		view.Status = "processing"
	}
	view.Mode = modeOf(names)
	view.Mode.ConsumedByGroups = &consumedBy
	return view, nil
}

// DeleteMessage deletes one message; a NotFoundError when missing.
func (v *Views) DeleteMessage(ctx context.Context, partitionID uuid.UUID, tx string) error {
	return engine.OpFailedOr("delete message", v.st.Messages().DeleteMessage(ctx, partitionID, tx), "Message not found: %s/%s", partitionID, tx)
}
