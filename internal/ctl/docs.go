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
` + "`current-context`" + `, ` + "`$QUEEN_CONTEXT`" + `, ` + "`--context`" + ` (these select a context), ` + "`$QUEEN_SERVER`" + `, ` + "`--server`" + `,
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

Errors print ` + "`queenctl: <status> <text>: <envelope error> (code <envelope code>)`" + ` on stderr.

Differences from the original queenctl: a 401/403 exits 3 and a 404 exits 5 (the original exits 2 for
every HTTP error); ` + "`apply`" + ` accepts the API's camelCase queue options and refuses unknown ones (the original
silently ignored camelCase keys); ` + "`queues configure`" + ` can set ` + "`--retention-enabled`" + ` and ` + "`--max-wait-time`" + `;
` + "`dlq retry`" + ` exists (the broker has the route) and ` + "`dlq delete --all`" + ` replaces ` + "`dlq drain`" + ` (kept as an alias);
` + "`tail`" + ` is ` + "`consume`" + ` (alias kept) and ` + "`cg`" + ` is ` + "`groups`" + ` (alias kept).

## Performance of push -f

` + "`push -f`" + ` reads JSON lines with one reader and keeps ` + "`--concurrency`" + ` (default 8) push requests of
` + "`--batch`" + ` (default 500) items in flight; a progress bar (go-pretty) runs on a terminal, plain
` + "`pushed N messages (P% of input, R msg/s)`" + ` lines once a second with ` + "`--progress always`" + ` elsewhere.

Measured on the 2-core development machine (shared with other work, load average 11 to 14 during
the run), back to back on one broker and PostgreSQL started by the load test:

| What | Rate |
|---|---|
| broker, ` + "`make bench`" + ` scenario ` + "`push-b100`" + ` (16 producers, batch 100, 10 partitions, 28-byte payloads) | 19 932 msg/s |
| ` + "`queenctl push -f`" + ` of 1 000 000 JSON lines (28-byte payloads, one partition, defaults) | 20 871 msg/s (105 %) |

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
