package engine

import "github.com/queen-go/queen/internal/store"

// RejectNotDelivered answers an ack for a message ahead of the group's cursor that was never delivered
// to it: under a lease, beyond what that lease delivered; without one, beyond anything popped.
const RejectNotDelivered = "not delivered: this message was not delivered under this lease; only delivered messages can be acknowledged"

// delivered is the ack rule for a message ahead of the cursor (docs/decisions.md, "Ack rule"): an ack
// may only settle what was delivered. Under the live lease that is (ClaimCursor, DeliveredSeq], what
// the lease's pop handed out; without a leaseId, anything up to DeliveredSeq, the last message any pop
// of the group delivered from the partition (an expired lease's messages included). An ack past that
// would move the cursor over messages nobody received.
func delivered(st *store.ConsumerState, seq int64, withLease bool) bool {
	if withLease {
		return st.ClaimCursor < seq && seq <= st.DeliveredSeq
	}
	return seq <= st.DeliveredSeq
}
