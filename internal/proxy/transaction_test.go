package proxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestTransactionPushes: pushes inside POST /api/v1/transaction meet the same caps, quotas and message
// bucket as POST /api/v1/push, and count only when the broker reports the transaction committed.
func TestTransactionPushes(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})
	b.plan(t, "p", func(p *proxystore.Plan) {
		p.MaxPayloadBytes = 100
		p.MaxBatchItems = 3
		p.MonthlyMessageQuota = 3
	})
	h, k, _ := b.cluster(t, "acme", "p", broker.URL)
	op := func(payload string) map[string]any {
		return map[string]any{"type": "push", "items": []map[string]any{{"queue": "tq", "payload": payload}}}
	}
	txn := func(ops ...map[string]any) map[string]any { return map[string]any{"operations": ops} }

	msg := requireCode(t, b.do(t, h, k, "POST", "/api/v1/transaction", txn(op("a"), op(strings.Repeat("z", 200)))), 413, "payload_too_large")
	require.Equal(t, "item 1: payload 202 bytes exceeds max_payload_bytes (100)", msg)
	msg = requireCode(t, b.do(t, h, k, "POST", "/api/v1/transaction", txn(op("a"), op("b"), op("c"), op("d"))), 413, "payload_too_large")
	require.Equal(t, "batch of 4 items exceeds max_batch_items (3)", msg)

	r := b.do(t, h, k, "POST", "/api/v1/transaction", txn(op("a"), op("b")))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"success":true`)
	// Two of three monthly messages used: two more are refused, one passes.
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/transaction", txn(op("c"), op("d"))), 403, "quota_exceeded")
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("tq", 2, 10)), 403, "quota_exceeded")
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("tq", 1, 10)).status)
}
