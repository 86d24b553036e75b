package ctl_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

// The original CLI's e2e scenarios that need a specially configured broker: encryption at rest,
// retention sweeps, and concurrent pushes of one transaction id.
func TestScenariosEncryptionRetentionConcurrency(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, map[string]string{
		"QUEEN_ENCRYPTION_KEY": strings.Repeat("ab", 32),
		"RETENTION_INTERVAL":   "300",
	}))

	// encrypted payloads round-trip through push and pop
	enc := uniq(t, "enc")
	c.ok("queues", "configure", enc, "--encrypt")
	c.ok("push", enc, `{"secret":"s3cr3t"}`)
	var msg map[string]any
	var page struct{ Messages []map[string]any }
	c.js(&page, "messages", "list", "--queue", enc)
	c.js(&msg, "messages", "get", page.Messages[0]["partitionId"].(string), page.Messages[0]["transactionId"].(string))
	require.Equal(t, true, msg["isEncrypted"])
	require.Contains(t, c.ok("pop", enc, "--auto-ack"), `"secret":"s3cr3t"`)

	// retention: with retentionEnabled the sweep deletes old pending messages
	ret := uniq(t, "ret")
	c.ok("queues", "configure", ret, "--retention-enabled", "--retention", "1", "--completed-retention", "1")
	c.ok("push", ret, `{"r":1}`, `{"r":2}`)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		var info struct{ Totals map[string]int }
		if c.tryJS(ct, &info, "queues", "get", ret) {
			assert.Zero(ct, info.Totals["total"], "total")
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for retention to delete the pending messages")
	c.fails(ctl.ExitNoop, "pop", ret, "--cg", "late-reader", "--auto-ack")

	// concurrent pushes of one transaction id store it once
	dup := uniq(t, "dup")
	var wg sync.WaitGroup
	outs := make([]string, 6)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = c.ok("push", dup, "--data", `{"once":true}`, "--transaction-id", "same-id", "-o", "jsonpath={.queued}")
		}()
	}
	wg.Wait()
	require.Equal(t, 1, strings.Count(strings.Join(outs, ""), "1\n"), "%q", outs)
	require.Len(t, ndjson(t, c.ok("pop", dup, "-n", "10", "--auto-ack")), 1)
}
