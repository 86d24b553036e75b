package ctl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/ctl"
	"github.com/queen-go/queen/internal/testenv"
)

func TestPopPeekAck(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "pop")
	c.ok("queues", "configure", q, "--lease-time", "2", "--retry-limit", "5")

	r := c.fails(ctl.ExitNoop, "pop", q)
	require.Empty(t, r.out)
	c.ok("push", q, `{"n":1}`, `{"n":2}`, `{"n":3}`)

	peek := ndjson(t, c.ok("peek", q, "-o", "ndjson"))
	require.Len(t, peek, 3)
	require.Equal(t, map[string]any{"n": float64(1)}, peek[0]["data"])
	require.Contains(t, c.ok("peek", q, "-o", "table", "-n", "1"), `{"n":1}`)

	msgs := ndjson(t, c.ok("pop", q, "-n", "2"))
	require.Len(t, msgs, 2)
	require.Equal(t, map[string]any{"n": float64(1)}, msgs[0]["data"])
	require.NotEmpty(t, msgs[0]["leaseId"])
	require.NotEmpty(t, msgs[0]["partitionId"])
	// ack one by its address, the other by piping pop's line
	var acks []map[string]any
	c.js(&acks, "ack", msgs[0]["transactionId"].(string), "--partition-id", msgs[0]["partitionId"].(string),
		"--lease-id", msgs[0]["leaseId"].(string))
	require.Equal(t, true, acks[0]["success"])
	// The partition stays leased until the whole popped batch is acknowledged.
	c.fails(ctl.ExitNoop, "pop", q, "-n", "1")

	// A wrong lease is rejected: exit 2, the result says why.
	r = c.run("ack", msgs[1]["transactionId"].(string), "--partition-id", msgs[1]["partitionId"].(string), "--lease-id",
		"00000000-0000-0000-0000-000000000000", "-o", "json")
	require.Equal(t, ctl.ExitServer, r.code, r.err)
	require.Contains(t, r.out, `"success": false`)
	c.fails(ctl.ExitUsage, "ack", "tx-only")
	c.fails(ctl.ExitUsage, "ack")
	c.fails(ctl.ExitUsage, "ack", "a", "--partition-id", "b", "--failed", "--dlq")
	require.Equal(t, ctl.ExitUsage, c.runIn("{bad", "ack", "--batch", "-").code)
	require.Equal(t, ctl.ExitNoop, c.runIn("", "ack", "--batch", "-").code)

	// pop | ack --batch -
	q2 := uniq(t, "pipe")
	c.ok("push", q2, `1`, `2`, `3`, `4`)
	popped := c.ok("pop", q2, "-n", "4")
	require.Len(t, lines(popped), 4)
	out := c.okIn(popped, "ack", "--batch", "-", "-o", "json")
	require.Equal(t, 4, strings.Count(out, `"success": true`))
	c.fails(ctl.ExitNoop, "pop", q2)

	// failed → redelivered with a retry counted
	q3 := uniq(t, "fail")
	c.ok("push", q3, `{"f":1}`)
	m := ndjson(t, c.ok("pop", q3))[0]
	c.ok("ack", m["transactionId"].(string), "--partition-id", m["partitionId"].(string), "--lease-id", m["leaseId"].(string),
		"--failed", "--error", "boom")
	var again []map[string]any
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		if out, ok := c.try(ct, "pop", q3); ok {
			again = ndjson(ct, out)
			assert.NotEmpty(ct, again)
		}
	}, 15*time.Second, 100*time.Millisecond, "timed out waiting for redelivery after a failed ack")
	require.Equal(t, m["transactionId"], again[0]["transactionId"])
	require.EqualValues(t, 1, again[0]["retryCount"])

	// lease expiry redelivers (leaseTime 2 s)
	q4 := uniq(t, "lease")
	c.ok("queues", "configure", q4, "--lease-time", "1")
	c.ok("push", q4, `{"l":1}`)
	first := ndjson(t, c.ok("pop", q4))[0]
	redelivered := ndjson(t, c.ok("pop", q4, "--wait", "--timeout", "5s"))[0]
	require.Equal(t, first["transactionId"], redelivered["transactionId"])
	// lease extend on a live lease; an unknown lease exits 5
	q5 := uniq(t, "extend")
	c.ok("push", q5, `{}`)
	held := ndjson(t, c.ok("pop", q5))[0]
	var ext map[string]any
	c.js(&ext, "lease", "extend", held["leaseId"].(string), "--seconds", "120")
	require.Equal(t, true, ext["success"])
	c.fails(ctl.ExitNotFound, "lease", "extend", "00000000-0000-0000-0000-000000000000")

	// table output of pop
	q6 := uniq(t, "tbl")
	c.ok("push", q6, `{"t":1}`)
	tbl := c.ok("pop", q6, "--auto-ack", "-o", "table")
	require.Contains(t, tbl, "TX")
	require.Contains(t, tbl, `{"t":1}`)
	c.fails(ctl.ExitUsage, "pop", q6, "-n", "0")
	c.fails(ctl.ExitUsage, "pop")
	c.fails(ctl.ExitUsage, "pop", q6, "--from-mode", "sideways")
}

func TestPopScenarios(t *testing.T) {
	t.Parallel()
	rb := startRunning(t, nil, broker.Options{})
	c := newCLI(t, rb.URL)

	// long poll: a pop waiting with --wait gets a message pushed after it started
	q := uniq(t, "longpoll")
	c.ok("queues", "configure", q)
	var wg sync.WaitGroup
	var res result
	wg.Add(1)
	go func() { defer wg.Done(); res = c.run("pop", q, "--wait", "--timeout", "10s", "--auto-ack") }()
	waitParked(t, rb)
	c.ok("push", q, `{"late":true}`)
	wg.Wait()
	require.Equal(t, 0, res.code, res.err)
	require.Contains(t, res.out, `"late":true`)

	// batch size, partition scope, multi-partition claims
	q2 := uniq(t, "batch")
	for i := range 5 {
		c.ok("push", q2, "--partition", fmt.Sprintf("p%d", i%2), fmt.Sprintf(`{"i":%d}`, i))
	}
	require.Len(t, ndjson(t, c.ok("pop", q2, "--partition", "p1", "-n", "10", "--auto-ack")), 2)
	require.Len(t, ndjson(t, c.ok("pop", q2, "-n", "2", "--auto-ack")), 2)
	require.Len(t, ndjson(t, c.ok("pop", q2, "-n", "10", "--auto-ack")), 1)

	q3 := uniq(t, "multi")
	for i := range 6 {
		c.ok("push", q3, "--partition", fmt.Sprintf("m%d", i%3), `{}`)
	}
	require.Len(t, ndjson(t, c.ok("pop", q3, "-n", "10", "--max-partitions", "3", "--auto-ack")), 6)

	// namespace/task pops across queues
	ns := uniq(t, "ns")
	qa, qb := uniq(t, "nsa"), uniq(t, "nsb")
	c.ok("queues", "configure", qa, "--namespace", ns, "--task", "t")
	c.ok("queues", "configure", qb, "--namespace", ns, "--task", "t", "--priority", "5")
	c.ok("push", qa, `{"q":"a"}`)
	c.ok("push", qb, `{"q":"b"}`)
	first := ndjson(t, c.ok("pop", "--namespace", ns, "--auto-ack"))[0]
	require.Equal(t, qb, first["queue"], "the higher priority queue is served first")
	second := ndjson(t, c.ok("pop", "--task", "t", "--namespace", ns, "--auto-ack"))[0]
	require.Equal(t, qa, second["queue"])

	// delayed processing hides a message; window buffer holds a busy partition. A broker of their own
	// decides time by a clock the test advances.
	clk := testenv.NewClock()
	cc := newCLI(t, startRunning(t, nil, broker.Options{Clock: clk.Now}).URL)
	for _, hold := range []struct{ name, flag, payload string }{
		{"delayed", "--delayed-processing", `{"d":1}`},
		{"window", "--window-buffer", `{"w":1}`},
	} {
		q := uniq(t, hold.name)
		cc.ok("queues", "configure", q, hold.flag, "600")
		cc.ok("push", q, hold.payload)
		cc.fails(ctl.ExitNoop, "pop", q)
		clk.Advance(500 * time.Second)
		cc.fails(ctl.ExitNoop, "pop", q)
		clk.Advance(101 * time.Second)
		cc.ok("pop", q, "--auto-ack")
	}

	// subscriptions: a group starting at "new" skips history; "all" (the default) replays it
	q6 := uniq(t, "subs")
	c.ok("push", q6, `{"old":1}`)
	c.fails(ctl.ExitNoop, "pop", q6, "--cg", "fresh", "--from-mode", "new", "--auto-ack")
	c.ok("push", q6, `{"new":1}`)
	got := ndjson(t, c.ok("pop", q6, "--cg", "fresh", "--auto-ack", "-n", "10"))
	require.Len(t, got, 1)
	require.Contains(t, fmt.Sprint(got[0]["data"]), "new")
	require.Len(t, ndjson(t, c.ok("pop", q6, "--cg", "history", "--auto-ack", "-n", "10")), 2)
	c.fails(ctl.ExitNoop, "pop", q6, "--cg", "later", "--since", "now", "--auto-ack")
	require.Equal(t, ctl.ExitUsage, c.run("pop", q6, "--cg", "x", "--since", "yesterday-ish").code)
}

func TestConsume(t *testing.T) {
	t.Parallel()
	rb := startRunning(t, nil, broker.Options{})
	c := newCLI(t, rb.URL)
	q := uniq(t, "consume")
	c.fails(ctl.ExitNotFound, "queues", "get", q)
	var b strings.Builder
	for i := range 250 {
		fmt.Fprintf(&b, "{\"i\":%d}\n", i)
	}
	c.okIn(b.String(), "push", q)

	// Without -f it drains (as group queenctl-tail) and stops; everything is acknowledged.
	got := ndjson(t, c.ok("consume", q))
	require.Len(t, got, 250)
	require.Equal(t, "queenctl-tail", got[0]["consumerGroup"])
	c.fails(ctl.ExitNoop, "consume", q)
	// Another group still sees everything; queue mode was not touched.
	require.Len(t, ndjson(t, c.ok("tail", q, "--cg", "other", "--max-messages", "10")), 10)
	require.Len(t, ndjson(t, c.ok("consume", q, "--cg", "", "-n", "50")), 250)

	// -f waits for new messages until --max-messages.
	var wg sync.WaitGroup
	var res result
	wg.Add(1)
	fq := uniq(t, "follow")
	c.ok("queues", "configure", fq)
	go func() { defer wg.Done(); res = c.run("consume", fq, "-f", "--max-messages", "3", "-o", "table") }()
	waitParked(t, rb) // the push arrives while the consumer waits
	c.ok("push", fq, `{"f":1}`, `{"f":2}`, `{"f":3}`)
	wg.Wait()
	require.Equal(t, 0, res.code, res.err)
	require.Equal(t, 1, strings.Count(res.out, "TX"), "one header")
	require.Equal(t, 3, strings.Count(res.out, `{"f":`))
}

func TestTransaction(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q1, q2 := uniq(t, "tx-in"), uniq(t, "tx-out")
	c.ok("push", q1, `{"step":1}`)
	m := ndjson(t, c.ok("pop", q1))[0]
	bundle := fmt.Sprintf(`{"operations":[
  {"type":"ack","transactionId":%q,"partitionId":%q,"status":"completed"},
  {"type":"push","items":[{"queue":%q,"payload":{"step":2},"transactionId":"next-1"}]}
],"requiredLeases":[%q]}`, m["transactionId"], m["partitionId"], q2, m["leaseId"])
	path := filepath.Join(t.TempDir(), "tx.json")
	require.NoError(t, os.WriteFile(path, []byte(bundle), 0o644))
	var dry map[string]any
	c.js(&dry, "tx", "-f", path, "--dry-run")
	require.Len(t, dry["operations"], 2)
	var res map[string]any
	c.js(&res, "tx", "-f", path)
	require.Equal(t, true, res["success"])
	c.fails(ctl.ExitNoop, "pop", q1)
	require.Contains(t, c.ok("pop", q2, "--auto-ack"), `"step":2`)

	// the same push again rolls back with QDUP: exit 2, the answer is printed
	dup := fmt.Sprintf(`{"operations":[{"type":"push","items":[{"queue":%q,"payload":{},"transactionId":"next-1"}]}]}`, q2)
	r := c.runIn(dup, "tx", "-f", "-", "-o", "json")
	require.Equal(t, ctl.ExitServer, r.code, r.err)
	require.Contains(t, r.out, "QDUP")
	require.Contains(t, r.err, "rolled back")
	require.Equal(t, ctl.ExitUsage, c.runIn(`{"operations":[]}`, "tx", "-f", "-").code)
	require.Equal(t, ctl.ExitUsage, c.runIn(`{not json`, "tx", "-f", "-").code)
	c.fails(ctl.ExitUsage, "tx")
	require.Equal(t, ctl.ExitUsage, c.runIn(`{"operations":[{"type":"teleport"}]}`, "tx", "-f", "-").code)
}
