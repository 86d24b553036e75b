package ctl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

// The streams commands round-trip through /streams/v1/*: register (409 on a changed hash without
// --reset), a hand-made cycle that upserts state and acks the source, state reads, a rolled-back cycle.
func TestStreams(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "stream-src")
	c.ok("push", q, `{"v":1}`)
	c.fails(ctl.ExitUsage, "streams", "register", "--name", "x")
	c.fails(ctl.ExitUsage, "streams", "cycle")
	require.Equal(t, ctl.ExitUsage, c.runIn("{nope", "streams", "cycle", "-f", "-").code)

	var reg map[string]any
	c.js(&reg, "streams", "register", "--name", "q1", "--source", q, "--config-hash", "h1")
	require.Equal(t, true, reg["fresh"])
	qid := strings.TrimSpace(c.ok("streams", "register", "--name", "q1", "--source", q, "--config-hash", "h1", "-o", "jsonpath={.query_id}"))
	require.NotEmpty(t, qid)
	r := c.run("streams", "register", "--name", "q1", "--source", q, "--config-hash", "h2")
	require.Equal(t, ctl.ExitUsage, r.code, "a changed hash without --reset is a 409")
	c.ok("streams", "register", "--name", "q1", "--source", q, "--config-hash", "h2", "--reset")

	m := ndjson(t, c.ok("pop", q, "--cg", "streams.q1"))[0]
	cycle := fmt.Sprintf(`{"query_id":%q,"partition_id":%q,"consumer_group":"streams.q1",
"state_ops":[{"type":"upsert","key":"k1","value":{"n":1}}],
"ack":{"transactionId":%q,"leaseId":%q,"status":"completed"}}`, qid, m["partitionId"], m["transactionId"], m["leaseId"])
	c.okIn(cycle, "streams", "cycle", "-f", "-")
	var st struct{ Rows []map[string]any }
	c.js(&st, "streams", "state", qid, m["partitionId"].(string), "--key", "k1")
	require.Len(t, st.Rows, 1)
	require.Equal(t, "k1\n", c.ok("streams", "state", qid, m["partitionId"].(string), "--prefix", "k", "-o", "name"))
	// the same cycle again fails on the released lease: rolled back, exit 2
	require.Equal(t, ctl.ExitServer, c.runIn(cycle, "streams", "cycle", "-f", "-").code)
}
