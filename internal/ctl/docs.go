package ctl

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

//go:generate go run ./docgen -o ../../docs/cli.md

// Markdown renders the reference of every command from the command tree itself (docs/cli.md), so
// the documentation cannot drift from the binary: TestDocsAreCurrent compares them.
func Markdown() []byte {
	a := &app{env: Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}}
	root := a.root()
	var b bytes.Buffer
	b.WriteString("# queenctl reference\n\n")
	b.WriteString("<!-- Generated from the command tree by `make gen` (go generate ./internal/ctl). DO NOT EDIT. -->\n\n")
	b.WriteString(docsIntro)
	var leaves []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Runnable() {
			leaves = append(leaves, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	fmt.Fprintf(&b, "## Commands\n\n%d runnable commands.\n\n| Command | Aliases | What it does |\n|---|---|---|\n", len(leaves))
	for _, c := range leaves {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", c.CommandPath(), anchor(c.CommandPath()), strings.Join(c.Aliases, ", "), c.Short)
	}
	b.WriteString("\n## Global flags\n\n```\n")
	b.WriteString(root.PersistentFlags().FlagUsagesWrapped(100))
	b.WriteString("```\n")
	for _, c := range leaves {
		if c == root {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n```\n%s\n```\n", c.CommandPath(), longOf(c), c.UseLine())
		if c.Example != "" {
			fmt.Fprintf(&b, "\nExamples:\n\n```sh\n%s\n```\n", c.Example)
		}
		local := pflag.NewFlagSet("", pflag.ContinueOnError)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if root.PersistentFlags().Lookup(f.Name) == nil || c.Flags().Lookup(f.Name) != root.PersistentFlags().Lookup(f.Name) {
				local.AddFlag(f)
			}
		})
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if root.PersistentFlags().Lookup(f.Name) == nil {
				local.AddFlag(f)
			}
		})
		if local.HasFlags() {
			fmt.Fprintf(&b, "\nFlags:\n\n```\n%s```\n", local.FlagUsagesWrapped(100))
		}
	}
	return b.Bytes()
}

func longOf(c *cobra.Command) string {
	if c.Long != "" {
		return c.Long
	}
	return c.Short + "."
}

func anchor(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

const docsIntro = `queenctl operates a Queen broker from the command line. It is built by ` + "`make build`" + ` into
` + "`bin/queenctl`" + `. Every command has ` + "`--help`" + ` with examples; ` + "`queenctl completion bash|zsh|fish|powershell`" + `
prints a shell completion script.

## Server, token and contexts

The broker URL and token are resolved in this order, later winning: the config file's
` + "`current-context`" + `, ` + "`$QUEEN_CONTEXT`" + `, ` + "`--context`" + ` (these select a context), ` + "`$QUEEN_SERVER`" + ` (or its alias ` + "`$QUEEN_URL`" + `), ` + "`--server`" + `,
` + "`$QUEEN_TOKEN`" + `, ` + "`--token`" + `. The token is sent as ` + "`Authorization: Bearer`" + ` (a broker JWT or a
queen-proxy API key). The config file is ` + "`--config`" + `, else ` + "`$QUEENCTL_CONFIG`" + `, else
` + "`$XDG_CONFIG_HOME/queenctl/config.yaml`" + ` (` + "`~/.config/queenctl/config.yaml`" + `); it is written atomically with mode
0600:

` + "```yaml" + `
current-context: prod
contexts:
  - name: prod
    server: https://queen.example.com
    token-ref: file:///run/secrets/queen   # or: env | literal:<token> | <token>
    insecure: false
    proxy-server: https://proxy.example.com
    proxy-token-ref: env                    # env = $QUEEN_TOKEN
` + "```" + `

There is no OS-keychain storage and no ` + "`login`" + ` command (queen-proxy has no password login route):
tokens are referenced from a file, the environment, or stored literally in the 0600 file.

## Output

` + "`-o table`" + ` (default on a terminal; fits the terminal width), ` + "`wide`" + ` (more columns), ` + "`json`" + ` (default when
stdout is not a terminal: the API's answer, pretty), ` + "`yaml`" + `, ` + "`name`" + ` (one resource name per line),
` + "`ndjson`" + ` (one row per line; the default of ` + "`pop`" + ` and ` + "`consume`" + `) and ` + "`jsonpath=EXPR`" + ` (RFC 9535; kubectl's
` + "`{.items[*].name}`" + ` form is accepted). Listings take ` + "`--watch`" + ` (` + "`-w`" + `) to refresh every ` + "`--interval`" + `.

## Exit codes

| Code | Meaning |
|---|---|
| 0 | success |
| 1 | usage: bad flag, argument or input; a destructive command without ` + "`--yes`" + ` off a terminal; a 400/409/413 the server refused |
| 2 | server: 5xx, an exhausted 429 budget, unreachable server, a malformed answer, a rejected ack or rolled-back transaction, an unhealthy broker |
| 3 | auth: 401 or 403 |
| 4 | nothing done: pop got no message, a bulk filter matched nothing, push read no line, apply found no document, no current context |
| 5 | not found: 404 (queue, message, dead letter, consumer group, route) |
| 130 | interrupted (Ctrl-C) before the command finished; ` + "`consume -f`" + ` and ` + "`--watch`" + ` end with 0 when stopped |

Errors print ` + "`queenctl: <status> <text>: <envelope error> (code <envelope code>)`" + ` on stderr.

Differences from the original queenctl: a 401/403 exits 3 and a 404 exits 5 (the original exits 2 for
every HTTP error); ` + "`apply`" + ` accepts the API's camelCase queue options and refuses unknown ones (the original
silently ignored camelCase keys); ` + "`queues configure`" + ` can set ` + "`--retention-enabled`" + ` and ` + "`--max-wait-time`" + `;
` + "`dlq retry`" + ` exists (the broker has the route) and ` + "`dlq delete --all`" + ` replaces ` + "`dlq drain`" + ` (kept as an alias);
` + "`tail`" + ` is ` + "`consume`" + ` (alias kept) and ` + "`cg`" + ` is ` + "`groups`" + ` (alias kept).

## Names of the original queenctl's commands

| Original | Here |
|---|---|
| ` + "`ping`" + ` | ` + "`health`" + ` (alias ` + "`ping`" + `) |
| ` + "`queue list/describe/configure/delete`" + ` | ` + "`queues list/describe/configure/delete`" + ` (aliases ` + "`queue`" + `, ` + "`q`" + `), plus ` + "`queues get`" + ` |
| ` + "`queue stats`" + `, ` + "`status [queue]`" + ` | ` + "`status [queue]`" + ` |
| ` + "`partition list`" + ` / ` + "`partition seek`" + ` | ` + "`partitions list`" + ` / ` + "`groups seek CG QUEUE --partition P --to end`" + ` |
| ` + "`partition describe`" + ` | ` + "`messages list --queue Q --partition P`" + ` |
| ` + "`tail`" + ` | ` + "`consume`" + ` (alias ` + "`tail`" + `) |
| ` + "`cg list/describe/seek/delete/lag`" + ` | ` + "`groups …`" + ` (alias ` + "`cg`" + `); ` + "`lag`" + ` and ` + "`replay`" + ` stay top-level |
| ` + "`dlq list/describe/drain`" + ` | ` + "`dlq list/get/delete --all`" + ` (aliases ` + "`describe`" + `, ` + "`drain`" + `), plus ` + "`dlq retry`" + ` |
| ` + "`namespace list`" + ` / ` + "`task list`" + ` | ` + "`namespaces`" + ` / ` + "`tasks`" + ` |
| ` + "`analytics overview/queue-lag/queue-ops/retention`" + ` | the same, plus ` + "`throughput`" + `, ` + "`buffers`" + `, ` + "`resources`" + `; the routes the broker lacks (` + "`queue-parked`" + `, ` + "`system`" + `, ` + "`worker`" + `, ` + "`postgres`" + `) are not offered |
| ` + "`cg refresh-stats`" + `, ` + "`bench`" + `, ` + "`docs`" + `, ` + "`login`" + `, ` + "`logout`" + ` | not offered (no broker route; ` + "`make bench`" + ` is the load test; this page; no login route) |

## Performance of push -f

` + "`push -f`" + ` reads JSON lines with one reader and keeps ` + "`--concurrency`" + ` (default 8) push requests of
` + "`--batch`" + ` (default 500) items in flight; a progress bar (go-pretty) runs on a terminal, plain
` + "`pushed N messages (P% of input, R msg/s)`" + ` lines once a second with ` + "`--progress always`" + ` elsewhere.

Measured on the 2-core development machine, shared with other work, back to back on one broker and
PostgreSQL started by the load test (28-byte payloads; the CLI with its defaults, one partition):

| Run | broker ` + "`push-b100`" + ` (16 producers, batch 100, 10 partitions) | ` + "`queenctl push -f`" + ` of 1 000 000 lines | ratio |
|---|---|---|---|
| 1 (load average 11 to 14) | 19 932 msg/s | 20 871 msg/s | 105 % |
| 2 (load average about 30) | 6 313 msg/s | 9 486 msg/s | 150 % |

The absolute rates follow the machine's load; the ratio is what the target (at least 80 %) is about.
With ` + "`--ordered`" + ` (one request in flight) the rate is lower: the requests no longer overlap.

Reproduce with ` + "`bash scripts/bench-queenctl.sh 1000000`" + ` (it runs ` + "`bench -scenarios push-b100 -keep`" + `, then
the CLI against the kept broker, and prints the ratio).

`

// CommandPaths lists every runnable command as its words after "queenctl" (for the help test).
func CommandPaths() [][]string {
	a := &app{env: Env{Getenv: func(string) string { return "" }}}
	var out [][]string
	var walk func(*cobra.Command, []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Runnable() && len(path) > 0 {
			out = append(out, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(a.root(), nil)
	return out
}
