package engine

import (
	"testing"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// TestAckRule is the acknowledgement rule of docs/decisions.md as a table: which ack, in which consumer
// state, succeeds, is a noop, or is rejected with which text.
func TestAckRule(t *testing.T) {
	cur, prev, other := uuid.New(), uuid.New(), uuid.New()
	id := func(u uuid.UUID) *uuid.UUID { return &u }
	// The previous lease delivered 6..10 (all acked: cursor 10); the live one delivered 11..13.
	live := store.ConsumerState{Cursor: 10, LeaseID: id(cur), LeaseLive: true, ClaimCursor: 10, DeliveredSeq: 13,
		PrevLeaseID: id(prev), PrevClaimCursor: 5, PrevDeliveredSeq: 10}
	expired := live
	expired.LeaseLive = false
	const (
		ok        = "ok"
		noop      = "noop"
		committed = RejectCommitted
		lease     = RejectLease
		undeliv   = RejectNotDelivered
		unknown   = RejectUnresolvable
	)
	cases := []struct {
		name    string
		state   store.ConsumerState
		lease   string
		seq     int64 // 0 = no such message
		status  string
		redeliv bool
		want    string
	}{
		{"lease, first delivered", live, cur.String(), 11, AckCompleted, false, ok},
		{"lease, last delivered", live, cur.String(), 13, AckCompleted, false, ok},
		{"lease, beyond delivered", live, cur.String(), 14, AckCompleted, false, undeliv},
		{"lease, far beyond, failed", live, cur.String(), 50, AckFailed, false, undeliv},
		{"lease, beyond, dlq", live, cur.String(), 14, AckDLQ, false, undeliv},
		{"lease, beyond, retry", live, cur.String(), 14, AckRetry, false, undeliv},
		{"no lease, delivered", live, "", 12, AckCompleted, false, ok},
		{"no lease, never delivered", live, "", 14, AckCompleted, false, undeliv},
		{"no lease, never delivered, failed", live, "", 20, AckFailed, false, undeliv},
		{"other lease", live, other.String(), 11, AckCompleted, false, lease},
		{"other lease beyond delivered", live, other.String(), 14, AckCompleted, false, lease},
		{"behind cursor, its own previous lease", live, prev.String(), 9, AckCompleted, false, noop},
		{"behind cursor, the live lease", live, cur.String(), 9, AckCompleted, false, committed},
		{"behind cursor, no lease", live, "", 9, AckCompleted, false, noop},
		{"behind cursor, failed", live, "", 9, AckFailed, false, committed},
		{"unknown message", live, cur.String(), 0, AckCompleted, false, unknown},
		{"expired lease, no leaseId, delivered", expired, "", 12, AckCompleted, false, ok},
		{"expired lease, no leaseId, not delivered", expired, "", 14, AckCompleted, false, undeliv},
		{"expired lease, its leaseId", expired, cur.String(), 12, AckCompleted, false, lease},
		{"retried dead letter under the lease", live, cur.String(), 3, AckCompleted, true, ok},
	}
	key := store.ConsumerKey{PartitionID: uuid.New(), Group: QueueMode}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.state
			d := ackDecider{states: map[store.ConsumerKey]*store.ConsumerState{key: &st}, touched: map[store.ConsumerKey]*store.ConsumerUpdate{}}
			m := store.ResolvedMessage{Found: c.seq != 0, Seq: c.seq, Queue: "q", Partition: "p", RetryLimit: 3, Redelivery: c.redeliv}
			if c.redeliv {
				st.Redeliveries = 1
			}
			r := d.decide(0, AckItem{TransactionID: "t", PartitionID: key.PartitionID, LeaseID: c.lease, Status: c.status, Group: QueueMode}, key, m)
			got := ok
			switch {
			case r.Error != nil:
				got = *r.Error
			case r.Noop:
				got = noop
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if (c.want == ok || c.want == noop) != r.Success {
				t.Fatalf("success %v for %q", r.Success, got)
			}
		})
	}
}
