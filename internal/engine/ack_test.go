package engine

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestAckDecide walks the pure acknowledgement rules of ackDecider.decide, one row per rule: the
// locked state of the (partition, group) cursor and the resolved message go in, the item's result
// and the cursor update come out.
func TestAckDecide(t *testing.T) {
	t.Parallel()
	lease, prev, other := uuid.New(), uuid.New(), uuid.New()
	pid := uuid.New()
	key := store.ConsumerKey{PartitionID: pid, Group: QueueMode}
	msg := func(seq int64) store.ResolvedMessage {
		return store.ResolvedMessage{Found: true, Seq: seq, Queue: "q", Partition: "p", RetryLimit: 2, RetryDelayMs: 500}
	}
	// A live lease that claimed at cursor 4 and delivered up to seq 7; the lease before it delivered (2, 4].
	state := func() *store.ConsumerState {
		return &store.ConsumerState{Cursor: 4, LeaseID: &lease, LeaseLive: true, ClaimCursor: 4, DeliveredSeq: 7,
			PrevLeaseID: &prev, PrevClaimCursor: 2, PrevDeliveredSeq: 4}
	}
	type want struct {
		success, noop, dlq, released bool
		err                          string
		cursor                       int64 // the cursor update; -1: no update
		retries                      int32
		deadLetters                  int
	}
	rows := []struct {
		name  string
		state func() *store.ConsumerState
		item  AckItem
		msg   store.ResolvedMessage
		want  want
	}{
		{"unknown message", state, AckItem{Status: AckCompleted, LeaseID: lease.String()}, store.ResolvedMessage{},
			want{err: RejectUnresolvable, cursor: -1}},
		{"no cursor row", func() *store.ConsumerState { return nil }, AckItem{Status: AckCompleted}, msg(5),
			want{err: RejectUnresolvable, cursor: -1}},
		{"completed at the head moves the cursor", state, AckItem{Status: AckCompleted, LeaseID: lease.String()}, msg(5),
			want{success: true, cursor: 5}},
		{"success is completed", state, AckItem{Status: AckSuccess, LeaseID: lease.String()}, msg(5),
			want{success: true, cursor: 5}},
		{"completing the last delivered message ends the lease", state, AckItem{Status: AckCompleted, LeaseID: lease.String()}, msg(7),
			want{success: true, released: true, cursor: 7}},
		{"repeated completion under the delivering lease is a noop", state, AckItem{Status: AckCompleted, LeaseID: prev.String()}, msg(3),
			want{success: true, noop: true, cursor: -1}},
		{"completion without a lease behind the cursor is a noop", state, AckItem{Status: AckCompleted}, msg(3),
			want{success: true, noop: true, cursor: -1}},
		{"already committed under another lease", state, AckItem{Status: AckCompleted, LeaseID: other.String()}, msg(3),
			want{err: RejectCommitted, cursor: -1}},
		{"failed behind the cursor is already committed", state, AckItem{Status: AckFailed, LeaseID: lease.String()}, msg(4),
			want{err: RejectCommitted, cursor: -1}},
		{"invalid lease", state, AckItem{Status: AckCompleted, LeaseID: other.String()}, msg(5),
			want{err: RejectLease, cursor: -1}},
		{"expired lease", func() *store.ConsumerState { s := state(); s.LeaseLive = false; return s },
			AckItem{Status: AckCompleted, LeaseID: lease.String()}, msg(5), want{err: RejectLease, cursor: -1}},
		{"failed within the budget retries and ends the lease", state, AckItem{Status: AckFailed, LeaseID: lease.String()}, msg(5),
			want{success: true, released: true, cursor: 4, retries: 1}},
		{"failed past the budget dead-letters", func() *store.ConsumerState { s := state(); s.Retries = 2; return s },
			AckItem{Status: AckFailed, LeaseID: lease.String(), Error: "boom"}, msg(5),
			want{success: true, dlq: true, cursor: 5, deadLetters: 1}},
		{"dlq dead-letters at once", state, AckItem{Status: AckDLQ, LeaseID: lease.String()}, msg(5),
			want{success: true, dlq: true, cursor: 5, deadLetters: 1}},
		{"retry ends the lease without spending the budget", state, AckItem{Status: AckRetry, LeaseID: lease.String()}, msg(5),
			want{success: true, released: true, cursor: 4}},
		{"a redelivered dead letter settles without moving the cursor back",
			func() *store.ConsumerState { s := state(); s.Redeliveries = 1; return s },
			AckItem{Status: AckCompleted, LeaseID: lease.String()},
			func() store.ResolvedMessage { m := msg(2); m.Redelivery = true; return m }(),
			want{success: true, cursor: 4}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			states := map[store.ConsumerKey]*store.ConsumerState{}
			if st := row.state(); st != nil {
				states[key] = st
			}
			d := ackDecider{states: states, touched: map[store.ConsumerKey]*store.ConsumerUpdate{}}
			item := row.item
			item.TransactionID, item.PartitionID, item.Group = "tx", pid, QueueMode
			r := d.decide(0, item, key, row.msg)
			if row.want.err != "" {
				require.False(t, r.Success)
				require.NotNil(t, r.Error)
				require.Equal(t, row.want.err, *r.Error)
			} else {
				require.Nil(t, r.Error)
				require.True(t, r.Success)
			}
			require.Equal(t, row.want.noop, r.Noop, "noop")
			require.Equal(t, row.want.dlq, r.DLQ, "dlq")
			require.Equal(t, row.want.released, r.LeaseReleased, "leaseReleased")
			require.Len(t, d.eff.DeadLetters, row.want.deadLetters)
			u := d.touched[key]
			if row.want.cursor < 0 {
				require.Nil(t, u, "no cursor update")
				return
			}
			require.NotNil(t, u)
			require.Equal(t, row.want.cursor, u.Cursor, "cursor")
			require.Equal(t, row.want.retries, u.Retries, "retries")
			require.Equal(t, row.want.released, u.Release, "release")
		})
	}
}

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
