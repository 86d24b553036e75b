package ctl_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/ctl"
	"github.com/queen-go/queen/internal/testenv"
)

// Every option configure accepts has a flag, a configure with every option off its default (zeros
// included) reads back as sent, and a read applied again changes nothing.
func TestQueuesConfigureEveryOptionRoundTrip(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, map[string]string{"QUEEN_ENCRYPTION_KEY": strings.Repeat("cd", 32)}))
	q := uniq(t, "roundtrip")
	args := []string{"queues", "configure", q, "--namespace", "ns", "--task", "tk",
		"--lease-time", "0", "--retry-limit", "0", "--retry-delay", "0", "--ttl", "0",
		"--max-size", "11", "--priority", "12", "--delayed-processing", "13", "--window-buffer", "14",
		"--retention", "15", "--completed-retention", "16", "--max-wait-time", "17",
		"--retention-enabled", "--encrypt", "--dlq", "--dlq-after-max-retries"}

	var dry struct{ Options map[string]any }
	c.js(&dry, append(args, "--dry-run")...)
	names := client.QueueOptionNames()
	slices.Sort(names)
	require.Equal(t, names, sortedKeys(dry.Options), "the test sets every option configure accepts")

	var conf struct{ Options map[string]any }
	c.js(&conf, args...)
	require.Equal(t, dry.Options, conf.Options, "configure stored what was sent")
	var st queueStatus
	c.js(&st, "queues", "describe", q)
	for k, v := range dry.Options {
		require.Equal(t, v, st.Queue.Config[k], "describe shows %s as configured", k)
	}

	// read → apply → read changes nothing
	manifest, err := jsonMarshal(map[string]any{"kind": "Queue", "name": q, "namespace": st.Queue.Namespace,
		"task": st.Queue.Task, "config": pick(st.Queue.Config, names)})
	require.NoError(t, err)
	c.okIn(string(manifest), "apply", "-f", "-")
	var again queueStatus
	c.js(&again, "queues", "describe", q)
	require.Equal(t, st.Queue, again.Queue)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func pick(m map[string]any, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

type groupEntry struct {
	ConsumerGroup string
	QueueMode     bool
	Messages      map[string]int
}

// queueGroups reads the per-group counts of queue q from `queues list`.
func queueGroups(c *cli, q string) map[string]groupEntry {
	var qs queueList
	c.js(&qs, "queues", "list")
	return qs.groups(q)
}

// tryQueueGroups is queueGroups for the condition of require.EventuallyWithT; it says whether it read
// them.
func tryQueueGroups(ct *assert.CollectT, c *cli, q string) (map[string]groupEntry, bool) {
	var qs queueList
	if !c.tryJS(ct, &qs, "queues", "list") {
		return nil, false
	}
	return qs.groups(q), true
}

// queueList is the output of `queues list -o json`.
type queueList []struct {
	Name           string
	ConsumerGroups []groupEntry
}

func (qs queueList) groups(q string) map[string]groupEntry {
	out := map[string]groupEntry{}
	for _, x := range qs {
		if x.Name == q {
			for _, g := range x.ConsumerGroups {
				out[g.ConsumerGroup] = g
			}
		}
	}
	return out
}

// tableLines returns the header and the lines of a table that contain s.
func tableLines(out, s string) (header []string, rows [][]string) {
	ls := lines(out)
	for _, l := range ls[1:] {
		if strings.Contains(l, s) {
			rows = append(rows, strings.Fields(strings.ReplaceAll(l, "(queue mode)", "(queue-mode)")))
		}
	}
	return strings.Fields(ls[0]), rows
}

// Counts are shown per consumer group, queue mode being one of them: a queue fully consumed shows
// its messages completed, a dead letter shows in DLQ, and no column is left empty.
func TestQueuesCountsPerConsumerGroup(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	done, dead := uniq(t, "done"), uniq(t, "dead")
	c.ok("queues", "configure", done, "--namespace", "shop", "--task", "mail")
	c.ok("queues", "configure", dead, "--namespace", "shop", "--task", "mail", "--dlq")

	c.ok("push", done, `{"n":1}`, `{"n":2}`)
	require.Len(t, ndjson(t, c.ok("pop", done, "-n", "10", "--auto-ack")), 2)
	require.Len(t, ndjson(t, c.ok("pop", done, "--cg", "analytics", "-n", "1", "--auto-ack")), 1)
	c.ok("push", dead, `{"poison":1}`)
	m := ndjson(t, c.ok("pop", dead))[0]
	c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--dlq", "--error", "poison")

	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if g, ok := tryQueueGroups(ct, c, done); ok {
			assert.Equal(ct, 2, g[client.QueueMode].Messages["completed"], "queue mode completed")
			assert.Equal(ct, 1, g["analytics"].Messages["completed"], "analytics completed")
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for the queue-mode group completed both messages, analytics one")
	g := queueGroups(c, done)
	require.True(t, g[client.QueueMode].QueueMode)
	for k, v := range map[string]int{"total": 2, "pending": 0, "processing": 0, "completed": 2, "deadLetter": 0} {
		require.Equal(t, v, g[client.QueueMode].Messages[k], k)
	}
	require.False(t, g["analytics"].QueueMode)
	require.Equal(t, 1, g["analytics"].Messages["pending"])
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if g, ok := tryQueueGroups(ct, c, dead); ok {
			assert.Equal(ct, 1, g[client.QueueMode].Messages["deadLetter"], "dead letters")
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for the dead letter counted")

	// Tables: one row per group, labelled, every column filled.
	for _, cmd := range [][]string{{"queues", "list"}, {"status"}, {"queues", "get", done}} {
		header, rows := tableLines(c.ok(append(cmd, "-o", "table")...), done)
		require.Contains(t, header, "GROUP", cmd)
		require.Contains(t, header, "COMPLETED", cmd)
		require.Len(t, rows, 2, "%v: one row per group", cmd)
		for _, r := range rows {
			require.Len(t, r, len(header), "%v: every column has a value: %v", cmd, r)
		}
		col := slices.Index(header, "COMPLETED")
		require.Equal(t, []string{"2", "1"}, []string{rows[0][col], rows[1][col]}, "%v: queue mode first, then analytics", cmd)
		require.Equal(t, "(queue-mode)", rows[0][slices.Index(header, "GROUP")])
		require.Equal(t, "analytics", rows[1][slices.Index(header, "GROUP")])
	}
	header, rows := tableLines(c.ok("queues", "list", "-o", "table"), dead)
	require.Len(t, rows, 1)
	require.Equal(t, "1", rows[0][slices.Index(header, "DLQ")])
	require.Equal(t, "queue/"+done+"\n", c.ok("queues", "get", done, "-o", "name"), "one name for the queue's rows")

	// One queue: each partition's counts per group.
	for _, cmd := range [][]string{{"status", done}, {"partitions", "list", done}} {
		header, rows := tableLines(c.ok(append(cmd, "-o", "table")...), "Default")
		require.Len(t, rows, 2, cmd)
		for _, r := range rows {
			require.Len(t, r, len(header), "%v: every column has a value: %v", cmd, r)
		}
	}
	desc := c.ok("queues", "describe", done, "-o", "table")
	require.Contains(t, desc, "(queue mode)")
	require.Contains(t, desc, "analytics")

	var groups []struct {
		Name, QueueName string
		QueueMode       bool
		Messages        map[string]int
	}
	c.js(&groups, "groups", "list")
	found := 0
	for _, x := range groups {
		if x.QueueName == done {
			found++
			require.Equal(t, x.Name == client.QueueMode, x.QueueMode)
		}
	}
	require.Equal(t, 2, found)
}

// lag lists a partition whose messages are older than --min-seconds even when no group ever read
// it: for queue mode on a queue nobody consumes, and for a group on the partitions it never read.
func TestLagListsNeverReadPartitions(t *testing.T) {
	t.Parallel()
	clk := testenv.NewClock()
	c := newCLI(t, startRunning(t, nil, broker.Options{Clock: clk.Now}).URL)
	idle, part := uniq(t, "idle"), uniq(t, "part")
	c.ok("push", idle, `{"n":1}`)
	c.ok("push", part, "--partition", "read", `{"n":1}`)
	c.ok("push", part, "--partition", "unread", `{"n":2}`)
	require.Len(t, ndjson(t, c.ok("pop", part, "--partition", "read", "--cg", "analytics", "--auto-ack")), 1)
	clk.Advance(5 * time.Second)

	type lagRow struct {
		ConsumerGroup string `json:"consumer_group"`
		QueueName     string `json:"queue_name"`
		PartitionName string `json:"partition_name"`
		OffsetLag     int    `json:"offset_lag"`
		HasCursor     bool   `json:"has_cursor"`
	}
	var rows []lagRow
	c.js(&rows, "lag", "--min-seconds", "1")
	mine := map[string]lagRow{}
	for _, r := range rows {
		if r.QueueName == idle || r.QueueName == part {
			mine[r.QueueName+"/"+r.PartitionName+"/"+r.ConsumerGroup] = r
		}
	}
	require.Equal(t, map[string]lagRow{
		idle + "/Default/" + client.QueueMode: {client.QueueMode, idle, "Default", 1, false},
		part + "/unread/analytics":            {"analytics", part, "unread", 1, false},
	}, mine)
	tbl := c.ok("groups", "lag", "--min-seconds", "1", "-o", "table")
	require.Contains(t, tbl, idle)
	require.Contains(t, tbl, "unread")

	c.js(&rows, "lag", "--min-seconds", "3600")
	for _, r := range rows {
		require.NotContains(t, []string{idle, part}, r.QueueName, "nothing is an hour old")
	}
	c.fails(ctl.ExitUsage, "lag", "--min-seconds", "-1")
}
