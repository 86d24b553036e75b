// Package ctl is queenctl, the operator command line: its command tree, flags, contexts file, output
// formats and exit codes, over the project's Go SDK (package client). cmd/queenctl only wires it.
package ctl

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

// Exit codes (docs/cli.md). They differ from the original CLI's on purpose: an HTTP 401/403 is the
// auth code rather than a generic server error, and a 404 has its own code.
const (
	ExitOK       = 0 // success
	ExitUsage    = 1 // bad flag, argument or input file; a missing --yes; a 400/409/413 the server rejected
	ExitServer   = 2 // 5xx, an exhausted 429 budget, unreachable server, malformed answer
	ExitAuth     = 3 // 401 or 403: missing, invalid or insufficient credentials
	ExitNoop     = 4 // success that did nothing: pop got no message, a filter matched nothing
	ExitNotFound = 5 // 404: the queue, message, dead letter or route does not exist
	// ExitInterrupted is the shell's code for SIGINT: a command stopped by Ctrl-C before it finished.
	// (consume -f and --watch end cleanly with 0 instead: being stopped is how they finish.)
	ExitInterrupted = 130
)

// Build information, set by the linker (-X github.com/queen-go/queen/internal/ctl.Version=…).
var (
	Version = "dev"
	Commit  = ""
)

// Env is everything the CLI reads from or writes to its process, so tests and docs generation can
// run it in-process with their own streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdoutTTY and StdinTTY say whether the streams are terminals (table output and prompts).
	StdoutTTY, StdinTTY, StderrTTY bool
	// Width is the terminal width (0 when unknown: tables are not truncated).
	Width int
}

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// errNoop ends a command with ExitNoop and no message.
var errNoop = &exitError{code: ExitNoop, err: errors.New("nothing to do")}

// Main runs queenctl with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	a := &app{env: env}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := classify(err)
	if code != ExitNoop && msg != "" {
		fmt.Fprintf(env.Stderr, "queenctl: %s\n", msg)
	}
	return code
}

// classify maps an error to its exit code and the line printed on stderr. API errors print the
// envelope's error text and code.
func classify(err error) (int, string) {
	var ee *exitError
	if errors.As(err, &ee) {
		if inner := ee.err; inner != nil {
			if code, msg, ok := apiClass(inner); ok && ee.code != ExitUsage {
				return code, msg
			}
		}
		return ee.code, ee.Error()
	}
	if code, msg, ok := apiClass(err); ok {
		return code, msg
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted, "interrupted"
	}
	var me *client.TransactionError
	if errors.As(err, &me) {
		return ExitServer, err.Error()
	}
	if errors.Is(err, client.ErrMalformedResponse) || client.IsTransport(err) {
		return ExitServer, err.Error()
	}
	// Everything else cobra or our flag parsing produced: unknown command, bad flag value, args.
	return ExitUsage, err.Error()
}

func apiClass(err error) (int, string, bool) {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return 0, "", false
	}
	msg := fmt.Sprintf("%d %s: %s", ae.Status, http.StatusText(ae.Status), ae.Message)
	if ae.Code != "" {
		msg += " (code " + ae.Code + ")"
	}
	switch {
	case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
		return ExitAuth, msg, true
	case ae.Status == http.StatusNotFound:
		return ExitNotFound, msg, true
	case ae.Status >= 500 || ae.Status == http.StatusTooManyRequests:
		return ExitServer, msg, true
	default:
		return ExitUsage, msg, true
	}
}

type globalFlags struct {
	server, token, context, config string
	output                         string
	noHeaders, insecure, quiet     bool
	timeout                        time.Duration
}

type app struct {
	env Env
	g   globalFlags
	cfg *configFile // loaded by conn()
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "queenctl",
		Short: "Operate a Queen message broker from the command line",
		Long: `queenctl operates a Queen broker (and the queen-proxy admin API): queues, messages, consumer
groups, dead letters, traces, status, maintenance and streams.

The server and token come from, later winning: the config file's current context, $QUEEN_CONTEXT,
--context, $QUEEN_SERVER, --server, $QUEEN_TOKEN, --token.`,
		Example: `  queenctl config set-context local --server http://localhost:6632
  queenctl queues list
  queenctl push orders '{"id":1}'
  queenctl pop orders -n 10 --auto-ack`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           versionString(),
		DisableAutoGenTag: true,
	}
	root.SetVersionTemplate("queenctl {{.Version}}\n")
	p := root.PersistentFlags()
	p.StringVar(&a.g.server, "server", "", "broker URL (env QUEEN_SERVER, or its alias QUEEN_URL)")
	p.StringVar(&a.g.token, "token", "", "bearer token: a JWT or a proxy API key (env QUEEN_TOKEN)")
	p.StringVar(&a.g.context, "context", "", "context of the config file to use (env QUEEN_CONTEXT)")
	p.StringVar(&a.g.config, "config", "", "config file (env QUEENCTL_CONFIG; default $XDG_CONFIG_HOME/queenctl/config.yaml)")
	p.StringVarP(&a.g.output, "output", "o", "", "output format: table|wide|json|yaml|name|ndjson|jsonpath=EXPR (default table on a terminal, json otherwise)")
	p.BoolVar(&a.g.noHeaders, "no-headers", false, "omit table headers")
	p.BoolVar(&a.g.insecure, "insecure", false, "skip TLS certificate verification")
	p.BoolVarP(&a.g.quiet, "quiet", "q", false, "print nothing on success except requested data")
	p.DurationVar(&a.g.timeout, "request-timeout", 30*time.Second, "timeout of one HTTP request")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{"table", "wide", "json", "yaml", "name", "ndjson", "jsonpath="}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("context", a.completeContexts)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })

	root.AddGroup(
		&cobra.Group{ID: "msg", Title: "Messaging:"},
		&cobra.Group{ID: "res", Title: "Resources:"},
		&cobra.Group{ID: "ops", Title: "Operations:"},
		&cobra.Group{ID: "cfg", Title: "Configuration:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("msg", a.pushCmd(), a.popCmd(), a.peekCmd(), a.ackCmd(), a.consumeCmd(), a.txCmd(), a.leaseCmd())
	add("res", a.queuesCmd(), a.applyCmd(), a.partitionsCmd(), a.messagesCmd(), a.dlqCmd(), a.groupsCmd(),
		a.replayCmd(), a.lagCmd(), a.tracesCmd(), a.namespacesCmd(), a.tasksCmd(), a.streamsCmd())
	add("ops", a.statusCmd(), a.analyticsCmd(), a.maintenanceCmd(), a.healthCmd(), a.metricsCmd(), a.proxyCmd(), a.versionCmd())
	add("cfg", a.configCmd())
	root.SetHelpCommandGroupID("cfg")
	root.SetCompletionCommandGroupID("cfg")
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(queenctl completion bash)\n  queenctl completion zsh > \"${fpath[1]}/_queenctl\""
		for _, s := range c.Commands() {
			s.Example = "  queenctl completion " + s.Name() + " > queenctl-completion." + s.Name()
		}
	}
	return root
}

func versionString() string {
	if Commit != "" {
		return Version + " (" + Commit + ")"
	}
	return Version
}

// conn resolves the server and token and builds an SDK client.
func (a *app) conn() (*client.Client, error) {
	t, err := a.target()
	if err != nil {
		return nil, err
	}
	if t.server == "" {
		return nil, usageErr("no server configured: set --server, QUEEN_SERVER, or run 'queenctl config set-context'")
	}
	return a.newClient(t.server, t.token, t.insecure)
}

func (a *app) newClient(server, token string, insecure bool) (*client.Client, error) {
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 64, IdleConnTimeout: 9 * time.Second}
	if insecure || a.g.insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator asked for it with --insecure
	}
	c, err := client.New(client.Config{URLs: []string{server}, Token: token, Timeout: a.g.timeout,
		HTTPClient: &http.Client{Transport: tr}, RetryDelay: 500 * time.Millisecond})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return c, nil
}

// confirm asks before a destructive action: --yes passes, a terminal gets a y/N prompt, anything
// else is refused (exit 1) so scripts must say --yes.
func (a *app) confirm(yes bool, what string) error {
	if yes {
		return nil
	}
	if !a.env.StdinTTY {
		return usageErr("refusing to %s without --yes", what)
	}
	fmt.Fprintf(a.env.Stderr, "%s? [y/N] ", capitalize(what))
	var answer string
	_, _ = fmt.Fscanln(a.env.Stdin, &answer)
	if a := strings.ToLower(strings.TrimSpace(answer)); a == "y" || a == "yes" {
		return nil
	}
	return usageErr("aborted: %s not confirmed", what)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// info prints a progress or confirmation line on stderr unless --quiet.
func (a *app) info(format string, args ...any) {
	if !a.g.quiet {
		fmt.Fprintf(a.env.Stderr, format+"\n", args...)
	}
}
