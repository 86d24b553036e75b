package engine

import (
	"context"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// Messages at rest: listing, reading and deleting them outside the pop/ack flow.

// ListMessages lists messages with their status for one group.
func (e *Engine) ListMessages(ctx context.Context, p store.ListMessagesParams) ([]store.MessageRow, error) {
	if p.Group == "" {
		p.Group = QueueMode
	}
	out, err := e.st.ListMessages(ctx, p)
	return out, opErr("list messages", err)
}

// GetMessage reads one message (payload decrypted) and every group's view of it.
func (e *Engine) GetMessage(ctx context.Context, partitionID uuid.UUID, tx string) (*store.MessageDetail, []store.MessageConsumer, error) {
	m, cs, err := e.st.GetMessage(ctx, partitionID, tx)
	if err != nil {
		return nil, nil, opErrOr("get message", err, "Message not found: %s/%s", partitionID, tx)
	}
	if m.Payload, err = e.DecryptPayload(m.Payload, m.Encrypted); err != nil {
		return nil, nil, opErr("get message", err)
	}
	return m, cs, nil
}

// DeleteMessage deletes one message; a NotFoundError when missing.
func (e *Engine) DeleteMessage(ctx context.Context, partitionID uuid.UUID, tx string) error {
	return opErrOr("delete message", e.st.DeleteMessage(ctx, partitionID, tx), "Message not found: %s/%s", partitionID, tx)
}
