package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
)

// TestAckCannotSkipUndeliveredMessages: a pop delivers one of three messages; acking the third under
// that lease, or without a lease, is rejected per item (200) and moves nothing, so the second is the
// next one delivered.
func TestAckCannotSkipUndeliveredMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).rb
	a := newAPI(t, b.URL)
	res := a.push(pushItem{Queue: "ackq", Partition: "p", Payload: 1, TransactionID: "m1"},
		pushItem{Queue: "ackq", Partition: "p", Payload: 2, TransactionID: "m2"},
		pushItem{Queue: "ackq", Partition: "p", Payload: 3, TransactionID: "m3"})
	pid := res[0].PartitionID
	got := a.pop("/api/v1/pop/queue/ackq?batch=1&wait=false")
	require.Len(t, got.Messages, 1)
	require.Equal(t, "m1", got.Messages[0].TransactionID)

	for _, lease := range []string{got.LeaseID, ""} {
		st, body := a.do("POST", "/api/v1/ack", map[string]any{"transactionId": "m3", "partitionId": pid, "leaseId": lease, "status": "completed"})
		require.Equal(t, http.StatusOK, st, string(body))
		var r []ackResult
		require.NoError(t, json.Unmarshal(body, &r))
		require.False(t, r[0].Success, "lease %q: %s", lease, body)
		require.Equal(t, engine.RejectNotDelivered, *r[0].Error)
	}
	r := a.ackAll("", got.Messages, "completed")
	require.True(t, r[0].Success)
	next := a.pop("/api/v1/pop/queue/ackq?batch=1&wait=false")
	require.Equal(t, "m2", next.Messages[0].TransactionID, "the cursor skipped an undelivered message")
}
