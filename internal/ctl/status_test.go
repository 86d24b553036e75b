package ctl_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

func TestStatusAnalyticsHealth(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "stat")
	ns := uniq(t, "ns")
	c.ok("queues", "configure", q, "--namespace", ns, "--task", "reports")
	c.ok("push", q, `{"s":1}`, `{"s":2}`)

	var st []map[string]any
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if c.tryJS(ct, &st, "status", "--namespace", ns) && assert.Len(ct, st, 1) {
			assert.Equal(ct, "2", fmt.Sprint(st[0]["messages"].(map[string]any)["pending"]), "pending")
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for status counts")
	tbl := c.ok("status", "-o", "table")
	for _, h := range []string{"QUEUE", "NAMESPACE", "PENDING", "PROCESSING", "COMPLETED", "DLQ"} {
		require.Contains(t, tbl, h)
	}
	var one map[string]any
	c.js(&one, "status", q)
	require.NotEmpty(t, one["partitions"])
	require.Contains(t, c.ok("status", q, "-o", "table"), "Default")
	c.fails(ctl.ExitNotFound, "status", "no-such-queue")
	w := c.ok("status", "--namespace", ns, "-o", "name", "-w", "--interval", "50ms", "--watch-count", "2")
	require.Equal(t, 2, strings.Count(w, "queue/"+q))

	for _, sub := range []string{"overview", "throughput", "queue-lag", "queue-ops", "retention", "buffers", "resources"} {
		var v any
		c.js(&v, "analytics", sub, "--from", "1h ago", "--to", "now")
		require.NotNil(t, v, sub)
		require.NotEmpty(t, c.ok("analytics", sub, "-o", "table"), sub)
	}
	c.fails(ctl.ExitUsage, "analytics", "overview", "--from", "last tuesday")

	var nss struct{ Namespaces []map[string]any }
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if !c.tryJS(ct, &nss, "namespaces") {
			return
		}
		if out, ok := c.try(ct, "namespaces", "-o", "name"); ok {
			assert.Contains(ct, out, "namespace/"+ns)
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for namespace listed")
	require.Contains(t, c.ok("tasks", "-o", "name"), "task/reports")
	require.Contains(t, c.ok("tasks", "-o", "table"), "QUEUES")

	var h map[string]any
	c.js(&h, "health")
	require.Equal(t, "healthy", h["status"])
	require.Equal(t, "connected", h["database"])
	require.Contains(t, c.ok("ping", "-o", "table"), "healthy")
	var m map[string]any
	c.js(&m, "metrics")
	require.NotEmpty(t, m)
	require.Contains(t, c.ok("metrics", "--prometheus"), "# TYPE")
	var v map[string]any
	c.js(&v, "version")
	require.NotEmpty(t, v["client"])
	require.Contains(t, v, "server")
}
