package ctl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/queen-go/queen/internal/ctl"
)

func TestDocsAreCurrent(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err, "docs/cli.md is missing: run `make gen`")
	require.Equal(t, string(ctl.Markdown()), string(got), "docs/cli.md is stale: run `make gen`")
}

// Every command answers --help with its usage and examples, without a server.
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "")
	paths := ctl.CommandPaths()
	require.Greater(t, len(paths), 60)
	for _, p := range paths {
		out := c.ok(append(p, "--help")...)
		require.Contains(t, out, "Usage:", p)
		require.Contains(t, out, "Examples:", "queenctl %s --help has no examples", strings.Join(p, " "))
	}
	root := c.ok("--help")
	for _, g := range []string{"queues", "push", "pop", "dlq", "groups", "status", "maintenance", "proxy", "streams"} {
		require.Contains(t, root, "  "+g)
	}
}

func TestUsageErrorsAndNoServer(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "")
	delete(c.env, "QUEEN_SERVER")
	r := c.fails(ctl.ExitUsage, "queues", "list")
	require.Contains(t, r.err, "no server configured")
	require.Contains(t, c.fails(ctl.ExitUsage, "no-such-command").err, "unknown command")
	require.Contains(t, c.fails(ctl.ExitUsage, "queues", "list", "--bogus").err, "unknown flag")
	require.Contains(t, c.fails(ctl.ExitUsage, "queues", "get").err, "accepts 1 arg")
	// QUEEN_URL, the original clients' name, stands for QUEEN_SERVER when that is unset.
	c.env["QUEEN_URL"] = "http://127.0.0.1:1"
	c.fails(ctl.ExitServer, "health", "--request-timeout", "2s")
	// An unreachable server is a server error.
	c.env["QUEEN_SERVER"] = "http://127.0.0.1:1"
	c.fails(ctl.ExitServer, "health", "--request-timeout", "2s")
	c.fails(ctl.ExitUsage, "--server", "not a url", "health")
}

func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "")
	require.NotEmpty(t, strings.TrimSpace(c.ok("version", "--short")))
	require.Contains(t, c.ok("--version"), "queenctl ")
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		require.Contains(t, c.ok("completion", sh), "queenctl", sh)
	}
}

func TestConfigContexts(t *testing.T) {
	t.Parallel()
	url := startBroker(t, nil)
	c := newCLI(t, url)
	delete(c.env, "QUEEN_SERVER")
	c.fails(ctl.ExitNoop, "config", "current-context")
	c.ok("config", "set-context", "local", "--server", url, "--token", "secret-token")
	c.ok("config", "set-context", "other", "--server", "http://127.0.0.1:1", "--token-ref", "env")
	require.Equal(t, "local\n", c.ok("config", "current-context"))

	// The file is YAML with mode 0600 and the documented keys.
	path := c.env["QUEENCTL_CONFIG"]
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	var file struct {
		Current  string `yaml:"current-context"`
		Contexts []struct {
			Name, Server string
			TokenRef     string `yaml:"token-ref"`
		} `yaml:"contexts"`
	}
	b, _ := os.ReadFile(path)
	require.NoError(t, yaml.Unmarshal(b, &file))
	require.Equal(t, "local", file.Current)
	require.Equal(t, "literal:secret-token", file.Contexts[0].TokenRef)

	var ctxs []map[string]any
	c.js(&ctxs, "config", "get-contexts")
	require.Len(t, ctxs, 2)
	require.Equal(t, "*", ctxs[0]["current"])
	require.Equal(t, "literal", ctxs[0]["auth"])
	require.Equal(t, "local\nother\n", c.ok("config", "get-contexts", "-o", "name"))
	tbl := c.ok("config", "get-contexts", "-o", "table")
	require.Contains(t, tbl, "CURRENT")
	require.Contains(t, tbl, "SERVER")
	view := c.ok("config", "view")
	require.NotContains(t, view, "secret-token")
	require.Contains(t, view, "literal:****")

	// The current context's server is used; --context and $QUEEN_CONTEXT switch; flags win.
	c.ok("health")
	c.fails(ctl.ExitServer, "health", "--context", "other", "--request-timeout", "1s")
	c.env["QUEEN_CONTEXT"] = "other"
	c.fails(ctl.ExitServer, "health", "--request-timeout", "1s")
	c.ok("health", "--server", url)
	c.ok("health", "--context", "local")
	delete(c.env, "QUEEN_CONTEXT")
	c.fails(ctl.ExitUsage, "health", "--context", "nope")

	c.ok("config", "use-context", "other")
	require.Equal(t, "other\n", c.ok("config", "current-context"))
	c.fails(ctl.ExitNotFound, "config", "use-context", "nope")
	c.ok("config", "delete-context", "other")
	c.fails(ctl.ExitNoop, "config", "current-context")
	c.fails(ctl.ExitNotFound, "config", "delete-context", "other")
	c.fails(ctl.ExitUsage, "config", "set-context", "x", "--token", "a", "--token-ref", "env")
}

func TestOutputFormats(t *testing.T) {
	t.Parallel()
	url := startBroker(t, nil)
	c := newCLI(t, url)
	q := uniq(t, "fmt")
	c.ok("queues", "configure", q, "--namespace", "ns1", "--task", "t1")
	c.ok("push", q, `{"a":1}`, `{"a":2}`)

	var list []map[string]any
	c.js(&list, "queues", "list")
	var found map[string]any
	for _, x := range list {
		if x["name"] == q {
			found = x
		}
	}
	require.NotNil(t, found, "queue %s in %v", q, list)
	require.Equal(t, "ns1", found["namespace"])

	var yl []map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(c.ok("queues", "list", "-o", "yaml")), &yl))
	require.NotEmpty(t, yl)
	require.Contains(t, c.ok("queues", "list", "-o", "name"), "queue/"+q+"\n")
	require.Equal(t, q+"\n", c.ok("queues", "list", "--namespace", "ns1", "-o", "jsonpath={[*].name}"))
	require.Equal(t, q+"\n", c.ok("queues", "list", "--namespace", "ns1", "-o", "jsonpath=$[0].name"))
	tbl := c.ok("queues", "list", "-o", "table")
	require.Contains(t, tbl, "NAME")
	require.Contains(t, tbl, "NAMESPACE")
	require.NotContains(t, tbl, "CREATED")
	require.Contains(t, c.ok("queues", "list", "-o", "wide"), "CREATED")
	require.NotContains(t, c.ok("queues", "list", "-o", "table", "--no-headers"), "NAMESPACE")
	nd := ndjson(t, c.ok("queues", "list", "-o", "ndjson", "--namespace", "ns1"))
	require.Len(t, nd, 1)

	require.Contains(t, c.fails(ctl.ExitUsage, "queues", "list", "-o", "bogus").err, "unknown output format")
	require.Contains(t, c.fails(ctl.ExitUsage, "queues", "list", "-o", "jsonpath=$[").err, "jsonpath")

	// --watch prints the listing again every interval.
	r := c.ok("queues", "list", "--namespace", "ns1", "-o", "name", "--watch", "--interval", "100ms", "--watch-count", "3")
	require.Equal(t, 3, strings.Count(r, "queue/"+q))
}

// A 401 and a 403 exit 3 and print the envelope; a valid token passes.
func TestAuthExitCodes(t *testing.T) {
	t.Parallel()
	const secret = "ctl-test-secret-0123456789abcdef"
	url := startBroker(t, map[string]string{"JWT_ENABLED": "true", "JWT_ALGORITHM": "HS256", "JWT_SECRET": secret})
	sign := func(role string) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "ops", "role": role,
			"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
		require.NoError(t, err)
		return s
	}
	c := newCLI(t, url)
	r := c.fails(ctl.ExitAuth, "queues", "list")
	require.Contains(t, r.err, "401")
	c.fails(ctl.ExitAuth, "queues", "list", "--token", "garbage")
	c.ok("queues", "list", "--token", sign("admin"))
	c.env["QUEEN_TOKEN"] = sign("read-only")
	c.ok("queues", "list")
	r = c.fails(ctl.ExitAuth, "maintenance", "on", "--yes")
	require.Contains(t, r.err, "403")
	require.Contains(t, r.err, "Insufficient permissions")
	// the token can come from a context referencing a file
	delete(c.env, "QUEEN_TOKEN")
	tokFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokFile, []byte(sign("admin")+"\n"), 0o600))
	c.ok("config", "set-context", "secured", "--server", url, "--token-ref", "file://"+tokFile)
	delete(c.env, "QUEEN_SERVER")
	c.ok("maintenance", "get")
	c.env["QUEEN_TOKEN"] = sign("read-only")
	c.ok("config", "set-context", "secured", "--token-ref", "env")
	c.fails(ctl.ExitAuth, "maintenance", "get")
}
