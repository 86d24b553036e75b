package ctl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
)

type pushOut struct {
	Queue                                       string
	Pushed, Queued, Duplicate, Buffered, Failed int
	Results                                     []map[string]any
}

func TestPush(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "push")

	var p pushOut
	c.js(&p, "push", q, `{"a":1}`, `"text"`, `null`, `{}`, `[]`, `{"big":"`+strings.Repeat("x", 100_000)+`"}`)
	require.Equal(t, 6, p.Pushed)
	require.Equal(t, 6, p.Queued)

	// transaction id: a second push of the same id is a duplicate, in another request or the same.
	c.js(&p, "push", q, "--data", `{"o":1}`, "--transaction-id", "order-1")
	require.Equal(t, 1, p.Queued)
	c.js(&p, "push", q, "--data", `{"o":1}`, "--transaction-id", "order-1", "--results")
	require.Equal(t, 1, p.Duplicate)
	require.Equal(t, "order-1", p.Results[0]["transaction_id"])
	c.fails(ctl.ExitUsage, "push", q, `{"a":1}`, `{"a":2}`, "--transaction-id", "x")
	wrapped := `{"data":{"w":1},"transactionId":"w-1","partition":"pw"}
{"data":{"w":1},"transactionId":"w-1","partition":"pw"}
{"data":{"w":2},"transactionId":"w-2"}
`
	require.Equal(t, ctl.ExitNoop, c.run("push", q, "--wrapped", "-f", "-").code, "stdin was empty")
	out := c.okIn(wrapped, "push", q, "--wrapped", "-o", "json")
	require.Contains(t, out, `"duplicate": 1`)
	require.Contains(t, out, `"queued": 2`)

	// stdin JSON lines (read when nothing else is given), blank lines skipped.
	out = c.okIn("{\"s\":1}\n\n{\"s\":2}\n{\"s\":3}", "push", q, "-o", "jsonpath={.queued}")
	require.Equal(t, "3\n", out)

	// partition key from the payload
	c.okIn(`{"c":{"id":"eu"}}`+"\n"+`{"c":{"id":"us"}}`+"\n"+`{"c":{"id":"eu"}}`, "push", q, "--partition-key", "c.id")
	var parts []map[string]any
	c.js(&parts, "partitions", "list", q)
	names := map[string]bool{}
	for _, p := range parts {
		names[p["name"].(string)] = true
	}
	require.True(t, names["eu"] && names["us"] && names["pw"], "%v", names)

	// A file with progress lines (a bar on a terminal; plain lines otherwise with --progress always).
	path := filepath.Join(t.TempDir(), "in.jsonl")
	var b strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&b, "{\"i\":%d}\n", i)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	r := c.run("push", q, "-f", path, "--batch", "100", "--concurrency", "4", "--progress", "always", "-o", "json")
	require.Equal(t, 0, r.code, r.err)
	require.Contains(t, r.err, "pushed 2500 messages (100.0% of input")
	require.Contains(t, r.out, `"queued": 2500`)
	c.js(&p, "push", q, "-f", path, "--dry-run")
	require.Equal(t, 2500, p.Pushed)

	// --ordered keeps the file's order in the partition; peek shows the oldest pending first.
	oq := uniq(t, "ordered")
	c.ok("push", oq, "-f", path, "--batch", "100", "--ordered")
	require.Equal(t, "0\n1\n", c.ok("peek", oq, "-n", "2", "-o", "jsonpath={[*].data.i}"))
	got := ndjson(t, c.ok("consume", oq, "--cg", "", "-n", "500"))
	require.Len(t, got, 2500)
	for i, m := range got {
		require.EqualValues(t, i, m["data"].(map[string]any)["i"], "message %d out of order", i)
	}

	// Bad input: nothing is pushed past the bad line's batch and the line is named.
	r = c.runIn("{\"ok\":1}\n{not json}\n", "push", q)
	require.Equal(t, ctl.ExitUsage, r.code)
	require.Contains(t, r.err, "line 2: not valid JSON")
	c.fails(ctl.ExitUsage, "push", q, "not-json")
	c.fails(ctl.ExitUsage, "push", q, "-f", "/no/such/file")
	c.fails(ctl.ExitUsage, "push", q, `{}`, "--batch", "0")
	c.fails(ctl.ExitUsage, "push", q, `{}`, "--partition", "a", "--partition-key", "b")
	c.fails(ctl.ExitUsage, "push", q, `{"x":1}`, "--partition-key", "missing")
	c.fails(ctl.ExitUsage, "push", q, `{}`, "--trace-id", "not-a-uuid")
	require.Equal(t, ctl.ExitNoop, c.runIn("\n\n", "push", q).code)
}
