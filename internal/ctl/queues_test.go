package ctl_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

type queueStatus struct {
	Queue struct {
		Name, Namespace, Task string
		Priority              int
		Config                map[string]any
	}
	Partitions []struct {
		Name  string
		Stats map[string]int
	}
	Totals map[string]any
}

func TestQueuesLifecycle(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "orders")

	var conf map[string]any
	c.js(&conf, "queues", "configure", q, "--lease-time", "60", "--retry-limit", "5", "--dlq", "--priority", "7",
		"--retention-enabled", "--retention", "600", "--completed-retention", "300", "--namespace", "billing", "--task", "invoices")
	require.Equal(t, true, conf["configured"])
	require.Equal(t, q, conf["queue"])

	// configure keeps distinct values: every option lands in its own field.
	var st queueStatus
	c.js(&st, "queues", "describe", q)
	require.Equal(t, "billing", st.Queue.Namespace)
	require.Equal(t, 7, st.Queue.Priority)
	require.EqualValues(t, 60, st.Queue.Config["leaseTime"])
	require.EqualValues(t, 5, st.Queue.Config["retryLimit"])
	require.EqualValues(t, 600, st.Queue.Config["retentionSeconds"])
	require.EqualValues(t, 300, st.Queue.Config["completedRetentionSeconds"])
	require.Equal(t, true, st.Queue.Config["retentionEnabled"])
	require.Equal(t, true, st.Queue.Config["deadLetterQueue"])
	// idempotent
	c.ok("queues", "configure", q, "--lease-time", "60", "--retry-limit", "5", "--dlq", "--priority", "7",
		"--retention-enabled", "--retention", "600", "--completed-retention", "300", "--namespace", "billing", "--task", "invoices")
	var st2 queueStatus
	c.js(&st2, "queues", "describe", q)
	require.Equal(t, st.Queue.Config, st2.Queue.Config)

	desc := c.ok("queues", "describe", q, "-o", "table")
	require.Contains(t, desc, "leaseTime")
	require.Contains(t, desc, "PARTITION")

	c.ok("push", q, "--partition", "p1", `{"n":1}`, `{"n":2}`)
	c.ok("push", q, "--partition", "p2", `{"n":3}`)
	var info struct {
		Name   string
		Totals map[string]int
	}
	c.js(&info, "queues", "get", q)
	require.Equal(t, q, info.Name)
	require.Equal(t, 3, info.Totals["pending"])
	require.Equal(t, "3\n", c.ok("queues", "get", q, "-o", "jsonpath={.totals.pending}"))
	require.Contains(t, c.ok("queues", "get", q, "-o", "table"), "PENDING")
	require.Equal(t, "queue/"+q+"\n", c.ok("queues", "get", q, "-o", "name"))
	require.Equal(t, "partition/Default\npartition/p1\npartition/p2\n", c.ok("partitions", "list", q, "-o", "name"))
	var parts []map[string]any
	c.js(&parts, "partitions", "list", q)
	require.Len(t, parts, 3)

	// Dry run prints the request and sends nothing.
	var dry map[string]any
	c.js(&dry, "queues", "configure", "never-created", "--lease-time", "9", "--dry-run")
	require.EqualValues(t, 9, dry["options"].(map[string]any)["leaseTime"])
	c.fails(ctl.ExitNotFound, "queues", "get", "never-created")
	c.fails(ctl.ExitUsage, "queues", "configure", q, "--lease-time", "abc")

	// delete needs --yes off a terminal; an unknown queue exits 5.
	r := c.fails(ctl.ExitUsage, "queues", "delete", q)
	require.Contains(t, r.err, "--yes")
	c.ok("queues", "get", q)
	var del []map[string]any
	c.js(&del, "queues", "delete", q, "--yes")
	require.Equal(t, true, del[0]["deleted"])
	r = c.fails(ctl.ExitNotFound, "queues", "get", q)
	require.Contains(t, r.err, "404")
	c.fails(ctl.ExitNotFound, "queues", "delete", q, "--yes")
}

func TestApply(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q1, q2 := uniq(t, "apply-a"), uniq(t, "apply-b")
	manifest := fmt.Sprintf(`kind: Queue
name: %s
namespace: billing
config: {leaseTime: 60, retryLimit: 5, retentionEnabled: true, retentionSeconds: 120, maxWaitTimeSeconds: 30}
---
kind: Queue
name: %s
options:
  lease-time: 45
  retrylimit: 2
---
kind: ConsumerGroup
name: analyzer
queue: %s
seekTo: beginning
`, q1, q2, q1)
	path := t.TempDir() + "/m.yaml"
	require.NoError(t, writeFile(path, manifest))

	var dry []map[string]any
	c.js(&dry, "apply", "-f", path, "--dry-run")
	require.Len(t, dry, 3)
	require.Equal(t, "dry-run", dry[0]["result"])
	c.fails(ctl.ExitNotFound, "queues", "get", q1)

	// camelCase keys (the original's bug ignored them) and kebab/lower case are all applied.
	out := c.ok("apply", "-f", path, "-o", "name")
	require.Equal(t, fmt.Sprintf("queue/%s\nqueue/%s\nconsumergroup/analyzer\n", q1, q2), out)
	var st queueStatus
	c.js(&st, "queues", "describe", q1)
	require.EqualValues(t, 60, st.Queue.Config["leaseTime"])
	require.EqualValues(t, 5, st.Queue.Config["retryLimit"])
	require.EqualValues(t, 120, st.Queue.Config["retentionSeconds"])
	require.Equal(t, true, st.Queue.Config["retentionEnabled"])
	c.js(&st, "queues", "describe", q2)
	require.EqualValues(t, 45, st.Queue.Config["leaseTime"])
	require.EqualValues(t, 2, st.Queue.Config["retryLimit"])
	var applied []map[string]any
	c.js(&applied, "apply", "-f", path)
	require.Equal(t, "seeked", applied[2]["result"], "a group that never consumed is placed too")

	// Once the group consumed everything, applying seekTo: beginning replays the queue for it.
	c.ok("push", q1, `{"n":1}`, `{"n":2}`)
	require.Len(t, ndjson(t, c.ok("pop", q1, "--cg", "analyzer", "-n", "10", "--auto-ack")), 2)
	c.fails(ctl.ExitNoop, "pop", q1, "--cg", "analyzer", "--auto-ack")
	c.js(&applied, "apply", "-f", path)
	require.Equal(t, "seeked", applied[2]["result"])
	require.Len(t, ndjson(t, c.ok("pop", q1, "--cg", "analyzer", "-n", "10", "--auto-ack")), 2)

	// stdin, JSON documents
	q3 := uniq(t, "apply-c")
	c.okIn(fmt.Sprintf(`{"kind":"Queue","name":%q,"config":{"leaseTime":33}}`, q3), "queues", "apply", "-f", "-")
	c.js(&st, "queues", "describe", q3)
	require.EqualValues(t, 33, st.Queue.Config["leaseTime"])

	// Bad input changes nothing.
	bad := fmt.Sprintf("kind: Queue\nname: %s\nconfig: {leaseTime: 1}\n---\nkind: Queue\nname: x\nconfig: {leaseTimee: 5}\n", q3)
	r := c.runIn(bad, "apply", "-f", "-")
	require.Equal(t, ctl.ExitUsage, r.code)
	require.Contains(t, r.err, `unknown queue option "leaseTimee"`)
	c.js(&st, "queues", "describe", q3)
	require.EqualValues(t, 33, st.Queue.Config["leaseTime"])
	require.Equal(t, ctl.ExitUsage, c.runIn("kind: Topic\nname: x\n", "apply", "-f", "-").code)
	require.Equal(t, ctl.ExitUsage, c.runIn("kind: [\n", "apply", "-f", "-").code)
	require.Equal(t, ctl.ExitUsage, c.runIn(`{"kind":"Queue","name":"x","config":{"leaseTime":"soon"}}`, "apply", "-f", "-").code)
	require.Equal(t, ctl.ExitNoop, c.runIn("", "apply", "-f", "-").code)
	require.Equal(t, ctl.ExitNotFound, c.runIn("kind: ConsumerGroup\nname: g\nqueue: no-such-queue\nseekTo: end\n", "apply", "-f", "-").code)
	c.fails(ctl.ExitUsage, "apply")
	c.fails(ctl.ExitUsage, "apply", "-f", "/does/not/exist.yaml")
	_ = json.Valid
}

// An option given as 0 or false is stored as that; only an option not given falls back to its
// default.
func TestQueuesConfigureZeroValues(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "jobs")

	var dry struct{ Options map[string]any }
	c.js(&dry, "queues", "configure", q, "--retry-limit", "0", "--retry-delay", "0", "--dlq=false", "--dry-run")
	require.Equal(t, map[string]any{"retryLimit": 0.0, "retryDelay": 0.0, "deadLetterQueue": false}, dry.Options,
		"given zeros are sent, options not given are not")

	c.ok("queues", "configure", q, "--retry-limit", "0", "--retry-delay", "0", "--ttl", "0")
	var st queueStatus
	c.js(&st, "queues", "describe", q)
	require.EqualValues(t, 0, st.Queue.Config["retryLimit"])
	require.EqualValues(t, 0, st.Queue.Config["retryDelay"])
	require.EqualValues(t, 0, st.Queue.Config["ttl"])
	require.EqualValues(t, 300, st.Queue.Config["leaseTime"], "an option not given is the default")

	// Configure replaces everything: without the flags the defaults come back.
	c.ok("queues", "configure", q)
	c.js(&st, "queues", "describe", q)
	require.EqualValues(t, 3, st.Queue.Config["retryLimit"])
	require.EqualValues(t, 1000, st.Queue.Config["retryDelay"])
	require.EqualValues(t, 3600, st.Queue.Config["ttl"])

	c.okIn(fmt.Sprintf("kind: Queue\nname: %s\nconfig: {retryLimit: 0, retry-delay: 0, ttl: 0}\n", q), "apply", "-f", "-")
	c.js(&st, "queues", "describe", q)
	require.EqualValues(t, 0, st.Queue.Config["retryLimit"])
	require.EqualValues(t, 0, st.Queue.Config["retryDelay"])
	require.EqualValues(t, 0, st.Queue.Config["ttl"])

	var spelled struct{ Options map[string]any }
	c.js(&spelled, "queues", "configure", q, "--dlq=no", "--retention-enabled=ON", "--dry-run")
	require.Equal(t, map[string]any{"deadLetterQueue": false, "retentionEnabled": true}, spelled.Options, "every switch spelling")
	c.fails(ctl.ExitUsage, "queues", "configure", q, "--dlq=maybe")
}
