package ctl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

func TestMaintenance(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "maint")
	var s map[string]any
	c.js(&s, "maintenance", "get")
	require.Equal(t, false, s["maintenanceMode"])
	require.Equal(t, false, s["popMaintenanceMode"])
	r := c.fails(ctl.ExitUsage, "maintenance", "on")
	require.Contains(t, r.err, "--yes")

	// push maintenance: pushes are buffered to the disk spool, then drained into the queue
	c.js(&s, "maintenance", "on", "--yes")
	require.Equal(t, true, s["maintenanceMode"])
	require.Contains(t, c.ok("maint", "get", "-o", "table"), "PUSH-MAINTENANCE")
	var p pushOut
	c.js(&p, "push", q, `{"m":1}`)
	require.Equal(t, 1, p.Buffered)
	c.js(&s, "maintenance", "off")
	require.Equal(t, false, s["maintenanceMode"])
	require.EventuallyWithT(t, func(ct *assert.CollectT) { c.try(ct, "pop", q, "--auto-ack") },
		15*time.Second, 100*time.Millisecond, "timed out waiting for spooled message to drain")

	// pop maintenance is independent and blocks pops
	c.ok("push", q, `{"m":2}`)
	c.fails(ctl.ExitUsage, "maintenance", "on", "--pop")
	c.js(&s, "maintenance", "on", "--pop", "--yes")
	require.Equal(t, true, s["popMaintenanceMode"])
	c.js(&s, "maintenance", "get", "--pop")
	require.Equal(t, true, s["popMaintenanceMode"])
	c.js(&s, "maintenance", "get")
	require.Equal(t, false, s["maintenanceMode"])
	require.Equal(t, true, s["popMaintenanceMode"], "get shows both flags")
	c.fails(ctl.ExitNoop, "pop", q)
	c.js(&s, "maintenance", "off", "--pop")
	require.Equal(t, false, s["popMaintenanceMode"])
	c.ok("pop", q, "--auto-ack")
}
