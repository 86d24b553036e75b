package ctl_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// proxy admin commands against a real queen-proxy (in front of a real broker).
func TestProxyAdmin(t *testing.T) {
	t.Parallel()
	const secret = "ctl-proxy-secret-0123456789abcdef"
	const admin = "ctl-admin-token"
	brokerURL := startBroker(t, map[string]string{"JWT_ENABLED": "true", "JWT_ALGORITHM": "HS256", "JWT_SECRET": secret})
	st, err := proxystore.Open(t.Context(), testenv.NewDatabase(t), "")
	require.NoError(t, err)
	t.Cleanup(st.Close)
	srv, err := proxy.NewServer(proxy.Options{Store: st, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		JWTSecret: []byte(secret), AdminToken: admin, NowFunc: time.Now})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	c := newCLI(t, ts.URL)
	r := c.fails(ctl.ExitUsage, "proxy", "plans", "create", "starter")
	require.Contains(t, r.err, "no proxy configured")
	c.env["QUEEN_PROXY_URL"] = ts.URL
	r = c.fails(ctl.ExitUsage, "proxy", "plans", "create", "starter")
	require.Contains(t, r.err, "no admin token")
	r = c.fails(ctl.ExitAuth, "proxy", "plans", "create", "starter", "--admin-token", "wrong")
	require.Contains(t, r.err, "code unauthorized")
	c.env["QUEEN_PROXY_ADMIN_TOKEN"] = admin

	var plan map[string]any
	c.js(&plan, "proxy", "plans", "create", "starter", "--max-payload-bytes", "1048576", "--max-batch-items", "1000",
		"--request-rate", "1000", "--message-rate", "100000", "--feature-traces")
	require.Equal(t, "starter", plan["name"])
	require.Equal(t, ctl.ExitUsage, c.run("proxy", "plans", "create", "starter", "-o", "json").code, "duplicate plan is a conflict")
	c.fails(ctl.ExitUsage, "proxy", "plans", "create", "neg", "--request-rate", "-1")

	// The tenant is selected by Host: the test's requests arrive with Host 127.0.0.1.
	var ten map[string]any
	c.js(&ten, "proxy", "tenants", "create", "acme", "--host", "127.0.0.1", "--upstream", brokerURL, "--plan", "starter")
	require.Equal(t, "acme", ten["name"])
	c.fails(ctl.ExitUsage, "proxy", "tenants", "create", "bad")
	c.fails(ctl.ExitNotFound, "proxy", "tenants", "create", "ghost", "--host", "ghost.test", "--upstream", brokerURL, "--plan", "nope")

	var key map[string]any
	c.js(&key, "proxy", "keys", "create", "acme", "--name", "ci", "--roles", "read-write")
	secretKey := key["key"].(string)
	require.True(t, strings.HasPrefix(secretKey, "qk_"), secretKey)
	c.fails(ctl.ExitUsage, "proxy", "keys", "create", "acme", "--roles", "superuser")

	// The key works through the proxy for broker commands.
	q := uniq(t, "via-proxy")
	c.env["QUEEN_TOKEN"] = secretKey
	c.ok("push", q, `{"p":1}`)
	require.Contains(t, c.ok("pop", q, "--auto-ack"), `"p":1`)
	r = c.fails(ctl.ExitAuth, "queues", "delete", q, "--yes")
	require.Contains(t, r.err, "Insufficient permissions")
	r = c.fails(ctl.ExitNotFound, "maintenance", "on", "--yes")
	require.Contains(t, r.err, "code route_blocked", "the plan has no featureOperator")

	var upd map[string]any
	c.js(&upd, "proxy", "tenants", "update", "acme", "--billing-hold")
	require.Equal(t, true, upd["updated"])
	r = c.fails(ctl.ExitAuth, "push", q, `{"p":2}`)
	require.Contains(t, r.err, "code push_blocked")
	c.ok("proxy", "tenants", "update", "acme", "--billing-hold=false")
	c.ok("push", q, `{"p":2}`)
	c.fails(ctl.ExitUsage, "proxy", "tenants", "update", "acme")
	var usage map[string]any
	c.js(&usage, "proxy", "tenants", "set-usage", "acme", "2026-12", "--messages", "5")
	require.EqualValues(t, 5, usage["messages"])
	c.fails(ctl.ExitUsage, "proxy", "tenants", "set-usage", "acme", "December", "--messages", "5")

	var sess map[string]any
	c.js(&sess, "proxy", "sessions", "create", "acme", "--subject", "alice", "--roles", "read-only", "--ttl", "600")
	require.True(t, strings.HasPrefix(sess["token"].(string), "qs_"))
	c.env["QUEEN_TOKEN"] = sess["token"].(string)
	c.ok("queues", "list")
	c.fails(ctl.ExitUsage, "proxy", "sessions", "revoke", fmt.Sprint(sess["id"]))
	c.ok("proxy", "sessions", "revoke", fmt.Sprint(sess["id"]), "--yes")
	c.fails(ctl.ExitAuth, "queues", "list")

	c.env["QUEEN_TOKEN"] = secretKey
	var rev map[string]any
	c.js(&rev, "proxy", "keys", "revoke", fmt.Sprint(key["id"]), "--yes")
	require.Equal(t, true, rev["revoked"])
	r = c.fails(ctl.ExitAuth, "queues", "list")
	require.Contains(t, r.err, "code unauthorized")

	// The proxy's address and admin token can live in a context.
	delete(c.env, "QUEEN_PROXY_URL")
	delete(c.env, "QUEEN_PROXY_ADMIN_TOKEN")
	tok := filepath.Join(t.TempDir(), "admin")
	require.NoError(t, os.WriteFile(tok, []byte(admin), 0o600))
	c.ok("config", "set-context", "ops", "--server", brokerURL, "--proxy-server", ts.URL, "--proxy-token-ref", "file://"+tok)
	c.ok("proxy", "plans", "create", "pro")
	_ = json.Valid
}
