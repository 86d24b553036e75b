package ctl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

func TestMessagesAndTraces(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "msgs")
	c.ok("push", q, "--partition", "p1", `{"m":1}`, `{"m":2}`)

	var page struct {
		Messages []map[string]any
	}
	c.js(&page, "messages", "list", "--queue", q)
	require.Len(t, page.Messages, 2)
	pid, tx := page.Messages[0]["partitionId"].(string), page.Messages[0]["transactionId"].(string)
	require.Equal(t, "pending", page.Messages[0]["status"])
	require.Len(t, lines(c.ok("messages", "list", "--queue", q, "-o", "name")), 2)
	tbl := c.ok("messages", "list", "--queue", q, "-o", "wide")
	require.Contains(t, tbl, "PARTITIONID")
	require.Contains(t, tbl, pid)
	c.js(&page, "messages", "list", "--queue", q, "--status", "completed")
	require.Empty(t, page.Messages)
	c.fails(ctl.ExitUsage, "messages", "list", "--status", "sideways")

	var msg map[string]any
	c.js(&msg, "messages", "get", pid, tx)
	require.Equal(t, tx, msg["transactionId"])
	require.NotNil(t, msg["payload"])
	require.Contains(t, c.ok("messages", "get", pid, tx, "-o", "table"), "DATA")

	// traces: record, then read by message, by name and the names
	c.ok("traces", "record", pid, tx, "--name", "order-42", "--event", "info", "--data", `{"step":"paid"}`)
	c.ok("traces", "record", pid, tx, "--name", "order-42", "--data", `{"step":"shipped"}`)
	var tr struct{ Traces []map[string]any }
	c.js(&tr, "traces", "by-message", pid, tx)
	require.Len(t, tr.Traces, 2)
	c.js(&tr, "messages", "traces", pid, tx)
	require.Len(t, tr.Traces, 2)
	c.js(&tr, "traces", "by-name", "order-42")
	require.Len(t, tr.Traces, 2)
	require.Contains(t, c.ok("traces", "by-name", "order-42", "-o", "table"), "shipped")
	require.Equal(t, "order-42\n", c.ok("traces", "names", "-o", "name"))
	require.Contains(t, c.ok("traces", "names", "-o", "table"), "EVENTS")
	c.fails(ctl.ExitUsage, "traces", "record", pid, tx, "--data", "{nope")
	c.fails(ctl.ExitNotFound, "traces", "record", pid, "no-such-tx")

	// delete needs --yes; then the message is gone (404 exits 5)
	c.fails(ctl.ExitUsage, "messages", "delete", pid, tx)
	c.ok("messages", "delete", pid, tx, "--yes")
	r := c.fails(ctl.ExitNotFound, "messages", "get", pid, tx)
	require.Contains(t, r.err, "404 Not Found")
	c.fails(ctl.ExitNotFound, "messages", "delete", pid, tx, "--yes")
	c.fails(ctl.ExitUsage, "messages", "get", "not-a-uuid", tx)
}

func TestDLQ(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "dlq")
	c.ok("queues", "configure", q, "--dlq", "--dlq-after-max-retries", "--retry-limit", "1", "--retry-delay", "1")

	// A message that fails past its retry limit reaches the dead-letter queue.
	c.ok("push", q, `{"bad":1}`)
	for range 2 {
		var m map[string]any
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			if out, ok := c.try(ct, "pop", q); ok {
				if ms := ndjson(ct, out); assert.NotEmpty(ct, ms) {
					m = ms[0]
				}
			}
		}, 15*time.Second, 100*time.Millisecond, "timed out waiting for delivery")
		c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--lease-id", m["leaseId"].(string),
			"--failed", "--error", "cannot parse")
	}
	// Two more straight to the DLQ.
	c.ok("push", q, `{"bad":2}`, `{"bad":3}`)
	for _, m := range ndjson(t, c.ok("pop", q, "-n", "2")) {
		c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--dlq", "--error", "poison")
	}

	var page struct {
		Messages []map[string]any
		Total    int
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if c.tryJS(ct, &page, "dlq", "list", "--queue", q) {
			assert.Equal(ct, 3, page.Total, "dead letters")
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for 3 dead letters")
	errs := map[string]bool{}
	for _, m := range page.Messages {
		errs[m["errorMessage"].(string)] = true
	}
	require.True(t, errs["cannot parse"] && errs["poison"], "%v", errs)
	tbl := c.ok("dlq", "list", "--queue", q, "-o", "table")
	require.Contains(t, tbl, "FAILED-AT")
	require.Contains(t, tbl, "poison")
	c.js(&page, "dlq", "list", "--queue", q, "--limit", "1")
	require.Len(t, page.Messages, 1)
	c.js(&page, "dlq", "list", "--queue", q, "--from", "1h ago", "--to", "now")
	require.Equal(t, 3, page.Total)
	for _, from := range []string{"2d ago", "90m", "beginning", "2000-01-01", "2000-01-01 00:00:00", "1000000000", "2000-01-01T00:00:00Z"} {
		c.js(&page, "dlq", "list", "--queue", q, "--from", from)
		require.Equal(t, 3, page.Total, from)
	}
	c.js(&page, "dlq", "list", "--queue", q, "--from", "2099-01-01")
	require.Zero(t, page.Total)
	c.js(&page, "dlq", "list", "--queue", q, "--to", "2000-01-01")
	require.Zero(t, page.Total)
	c.fails(ctl.ExitUsage, "dlq", "list", "--from", "the other day")

	c.js(&page, "dlq", "list", "--queue", q)
	one := page.Messages[0]
	pid, tx := one["partitionId"].(string), one["transactionId"].(string)
	var got map[string]any
	c.js(&got, "dlq", "get", pid, tx)
	require.Equal(t, tx, got["transactionId"])
	c.fails(ctl.ExitNotFound, "dlq", "get", pid, "nope")

	// retry one: it is served again
	c.ok("dlq", "retry", pid, tx)
	redelivered := ndjson(t, c.ok("pop", q, "--auto-ack"))
	require.Equal(t, tx, redelivered[0]["transactionId"])

	// bulk: needs a filter and --yes; --dry-run lists; then deletes all; then nothing matches (exit 4)
	c.fails(ctl.ExitUsage, "dlq", "delete", "--all")
	c.fails(ctl.ExitUsage, "dlq", "delete", "--all", "--queue", q)
	c.fails(ctl.ExitUsage, "dlq", "delete", pid)
	var rows []map[string]any
	c.js(&rows, "dlq", "delete", "--all", "--queue", q, "--dry-run")
	require.Len(t, rows, 2)
	require.Equal(t, "would be deleted", rows[0]["result"])
	c.js(&page, "dlq", "list", "--queue", q)
	require.Equal(t, 2, page.Total)
	c.js(&rows, "dlq", "drain", "--all", "--queue", q, "--yes")
	require.Len(t, rows, 2)
	c.js(&page, "dlq", "list", "--queue", q)
	require.Zero(t, page.Total)
	c.fails(ctl.ExitNoop, "dlq", "retry", "--all", "--queue", q, "--yes")

	// manual requeue: push the payload again and delete the dead letter
	c.ok("push", q, `{"bad":9}`)
	m := ndjson(t, c.ok("pop", q))[0]
	c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--dlq")
	c.js(&page, "dlq", "list", "--queue", q)
	require.Equal(t, 1, page.Total)
	var dl map[string]any
	c.js(&dl, "dlq", "get", page.Messages[0]["partitionId"].(string), page.Messages[0]["transactionId"].(string))
	c.okIn(string(mustJSON(t, dl["data"]))+"\n", "push", q)
	c.ok("dlq", "delete", page.Messages[0]["partitionId"].(string), page.Messages[0]["transactionId"].(string))
	require.Contains(t, c.ok("pop", q, "--auto-ack"), `"bad":9`)

	// bulk retry by filter
	c.ok("push", q, `{"r":1}`, `{"r":2}`)
	for _, m := range ndjson(t, c.ok("pop", q, "-n", "2")) {
		c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--dlq")
	}
	c.js(&rows, "dlq", "retry", "--all", "--queue", q, "--yes")
	require.Len(t, rows, 2)
	require.Len(t, ndjson(t, c.ok("pop", q, "-n", "5", "--auto-ack")), 2)
}

func TestGroups(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "cg")
	c.ok("push", q, "--partition", "a", `{"n":1}`, `{"n":2}`)
	c.ok("push", q, "--partition", "b", `{"n":3}`)
	require.Len(t, ndjson(t, c.ok("pop", q, "--cg", "billing", "-n", "10", "--max-partitions", "2", "--auto-ack")), 3)
	c.fails(ctl.ExitNoop, "pop", q, "--cg", "billing", "--auto-ack")

	var groups []map[string]any
	c.js(&groups, "groups", "list")
	names := map[string]bool{}
	for _, g := range groups {
		names[g["name"].(string)] = true
	}
	require.True(t, names["billing"], "%v", groups)
	require.Contains(t, c.ok("cg", "list", "-o", "name"), "cg/billing\n")
	require.Contains(t, c.ok("groups", "list", "-o", "table"), "MEMBERS")

	var desc map[string][]map[string]any
	c.js(&desc, "groups", "describe", "billing")
	require.Len(t, desc[q], 2)
	require.Contains(t, c.ok("groups", "describe", "billing", "-o", "table"), "CONSUMED")
	c.fails(ctl.ExitNotFound, "groups", "describe", "nobody")

	// seek to the beginning replays; to the end skips; replay is the same by another name
	var seek map[string]any
	c.js(&seek, "groups", "seek", "billing", q, "--to", "beginning")
	require.Equal(t, true, seek["success"])
	require.Len(t, ndjson(t, c.ok("pop", q, "--cg", "billing", "-n", "10", "--max-partitions", "2", "--auto-ack")), 3)
	c.ok("replay", q, "--cg", "billing", "--to", "1h ago")
	require.Len(t, ndjson(t, c.ok("pop", q, "--cg", "billing", "-n", "10", "--max-partitions", "2", "--auto-ack")), 3)
	c.ok("push", q, "--partition", "a", `{"n":4}`)
	c.ok("groups", "seek", "billing", q, "--to", "end")
	c.fails(ctl.ExitNoop, "pop", q, "--cg", "billing", "--auto-ack")
	c.ok("push", q, "--partition", "b", `{"n":5}`)
	c.ok("groups", "seek", "billing", q, "--to", "end", "--partition", "b")
	c.fails(ctl.ExitNoop, "pop", q, "--cg", "billing", "--auto-ack")
	c.fails(ctl.ExitUsage, "groups", "seek", "billing", q)
	c.fails(ctl.ExitUsage, "groups", "seek", "billing", q, "--to", "whenever")
	c.fails(ctl.ExitUsage, "groups", "seek", "billing", q, "--to", "beginning", "--partition", "b")
	c.fails(ctl.ExitUsage, "replay", q, "--to", "end")
	// A group that never read the queue is placed too: after a seek to the end it has nothing to read.
	c.ok("groups", "seek", "nobody", q, "--to", "end")
	c.fails(ctl.ExitNoop, "pop", q, "--cg", "nobody", "--auto-ack")
	c.fails(ctl.ExitNotFound, "groups", "seek", "billing", uniq(t, "no-such-queue"), "--to", "end")
	var dry map[string]any
	c.js(&dry, "replay", q, "--cg", "billing", "--to", "beginning", "--dry-run")
	require.Equal(t, true, dry["dryRun"])

	// lag: a group behind on a partition
	c.ok("push", q, "--partition", "a", `{"n":6}`)
	var lag []map[string]any
	c.js(&lag, "lag")
	c.js(&lag, "groups", "lag", "--min-seconds", "0")
	require.Contains(t, c.ok("lag", "-o", "table"), "OFFSET-LAG")
	c.fails(ctl.ExitUsage, "lag", "--min-seconds", "-1")

	// delete: needs --yes; scoped to a queue; then the group is gone
	c.fails(ctl.ExitUsage, "groups", "delete", "billing")
	var del map[string]any
	c.js(&del, "groups", "delete", "billing", "--queue", q, "--metadata", "--yes")
	require.Equal(t, true, del["success"])
	c.fails(ctl.ExitNotFound, "groups", "describe", "billing")
	require.Len(t, ndjson(t, c.ok("pop", q, "--cg", "billing", "-n", "10", "--max-partitions", "2", "--auto-ack")), 6)
	c.ok("groups", "delete", "billing", "--yes")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonMarshal(v)
	require.NoError(t, err)
	return b
}

var _ = strings.TrimSpace
