package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBatchItemCap: a push, an ack batch or a transaction carries at most QUEEN_MAX_BATCH_ITEMS
// entries; one more is a 413 that names the cap, whether the body is small enough for the fast readers
// or not, and however its array's key is spelled (encoding/json matches keys case-insensitively and
// unescapes them). A transaction's push operation counts its items.
func TestBatchItemCap(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"QUEEN_MAX_BATCH_ITEMS": "3"})
	list := func(n int, entry string) string {
		return strings.TrimSuffix(strings.Repeat(entry+",", n), ",")
	}
	push := func(key string, n int) string {
		return `{"` + key + `":[` + list(n, `{"queue":"cap","payload":1}`) + `]}`
	}
	acks := func(n int) string {
		return `{"acknowledgments":[` + list(n, `{"transactionId":"t","partitionId":"00000000-0000-0000-0000-000000000000","leaseId":"x"}`) + `]}`
	}
	big := `,"pad":"` + strings.Repeat("p", 9<<20) + `"` // past the size from which the fast readers step aside
	const capText = "exceeds QUEEN_MAX_BATCH_ITEMS (3): send at most 3 per request"
	for _, tc := range []struct {
		name, path, body string
		status           int
		text             string
	}{
		{"push at the cap", "/api/v1/push", push("items", 3), http.StatusCreated, ""},
		{"push over the cap", "/api/v1/push", push("items", 4), http.StatusRequestEntityTooLarge, "batch of 4 items " + capText},
		{"large push over the cap", "/api/v1/push", strings.TrimSuffix(push("items", 5), "}") + big + "}", http.StatusRequestEntityTooLarge, "batch of 5 items " + capText},
		{"push over the cap, key in capitals", "/api/v1/push", push("ITEMS", 4), http.StatusRequestEntityTooLarge, "batch of 4 items " + capText},
		{"push over the cap, key escaped", "/api/v1/push", push(`\u0069tems`, 4), http.StatusRequestEntityTooLarge, "batch of 4 items " + capText},
		{"ack batch at the cap", "/api/v1/ack/batch", acks(3), http.StatusOK, ""},
		{"ack batch over the cap", "/api/v1/ack/batch", acks(4), http.StatusRequestEntityTooLarge, "batch of 4 acknowledgments " + capText},
		{"transaction at the cap", "/api/v1/transaction", `{"operations":[{"type":"push","items":[` + list(2, `{"queue":"cap","payload":1}`) + `]},{"type":"push","queue":"cap","payload":2}]}`, http.StatusOK, ""},
		{"transaction over the cap by its pushed items", "/api/v1/transaction", `{"operations":[{"type":"push","items":[` + list(3, `{"queue":"cap","payload":1}`) + `]},{"type":"push","queue":"cap","payload":2}]}`,
			http.StatusRequestEntityTooLarge, "batch of 4 operations and pushed items " + capText},
	} {
		r := b.call(t, t.Context(), http.MethodPost, tc.path, tc.body)
		if tc.text == "" {
			require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r)
			continue
		}
		require.Equal(t, tc.text, requireError(t, r, tc.status), tc.name)
	}
	// Refused requests applied nothing: the queue holds the 3 + 3 messages the accepted ones pushed.
	r := b.call(t, t.Context(), http.MethodGet, "/api/v1/pop/queue/cap?batch=100", nil)
	var got struct{ Messages []any }
	requireJSON(t, r, http.StatusOK, &got)
	require.Len(t, got.Messages, 6, fmt.Sprint(r))
}
