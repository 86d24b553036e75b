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

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/ctl"
	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

func TestStatusAnalyticsHealth(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "stat")
	ns := uniq(t, "ns")
	c.ok("queues", "configure", q, "--namespace", ns, "--task", "reports")
	c.ok("push", q, `{"s":1}`, `{"s":2}`)

	var st []map[string]any
	eventually(t, func() bool {
		c.js(&st, "status", "--namespace", ns)
		return len(st) == 1 && fmt.Sprint(st[0]["messages"].(map[string]any)["pending"]) == "2"
	}, "status counts")
	tbl := c.ok("status", "-o", "table")
	for _, h := range []string{"QUEUE", "NAMESPACE", "PENDING", "PROCESSING", "COMPLETED", "DLQ"} {
		require.Contains(t, tbl, h)
	}
	var one map[string]any
	c.js(&one, "status", q)
	require.NotEmpty(t, one["partitions"])
	require.Contains(t, c.ok("status", q, "-o", "table"), "Default")
	c.fails(ctl.ExitNotFound, "status", "no-such-queue")
	w := c.ok("status", "--namespace", ns, "-o", "name", "-w", "--interval", "50ms", "--watch-count", "2")
	require.Equal(t, 2, strings.Count(w, "queue/"+q))

	for _, sub := range []string{"overview", "throughput", "queue-lag", "queue-ops", "retention", "buffers", "resources"} {
		var v any
		c.js(&v, "analytics", sub, "--from", "1h ago", "--to", "now")
		require.NotNil(t, v, sub)
		require.NotEmpty(t, c.ok("analytics", sub, "-o", "table"), sub)
	}
	c.fails(ctl.ExitUsage, "analytics", "overview", "--from", "last tuesday")

	var nss struct{ Namespaces []map[string]any }
	eventually(t, func() bool {
		c.js(&nss, "namespaces")
		return strings.Contains(c.ok("namespaces", "-o", "name"), "namespace/"+ns)
	}, "namespace listed")
	require.Contains(t, c.ok("tasks", "-o", "name"), "task/reports")
	require.Contains(t, c.ok("tasks", "-o", "table"), "QUEUES")

	var h map[string]any
	c.js(&h, "health")
	require.Equal(t, "healthy", h["status"])
	require.Equal(t, "connected", h["database"])
	require.Contains(t, c.ok("ping", "-o", "table"), "healthy")
	var m map[string]any
	c.js(&m, "metrics")
	require.NotEmpty(t, m)
	require.Contains(t, c.ok("metrics", "--prometheus"), "# TYPE")
	var v map[string]any
	c.js(&v, "version")
	require.NotEmpty(t, v["client"])
	require.Contains(t, v, "server")
}

func TestMaintenance(t *testing.T) {
	t.Parallel()
	c := newCLI(t, startBroker(t, nil))
	q := uniq(t, "maint")
	var s map[string]any
	c.js(&s, "maintenance", "get")
	require.Equal(t, false, s["maintenanceMode"])
	require.Equal(t, false, s["popMaintenanceMode"])
	r := c.fails(ctl.ExitUsage, "maintenance", "on")
	require.Contains(t, r.err, "--yes")

	// push maintenance: pushes are buffered to the disk spool, then drained into the queue
	c.js(&s, "maintenance", "on", "--yes")
	require.Equal(t, true, s["maintenanceMode"])
	require.Contains(t, c.ok("maint", "get", "-o", "table"), "PUSH-MAINTENANCE")
	var p pushOut
	c.js(&p, "push", q, `{"m":1}`)
	require.Equal(t, 1, p.Buffered)
	c.js(&s, "maintenance", "off")
	require.Equal(t, false, s["maintenanceMode"])
	eventually(t, func() bool { return c.run("pop", q, "--auto-ack").code == 0 }, "spooled message to drain")

	// pop maintenance is independent and blocks pops
	c.ok("push", q, `{"m":2}`)
	c.fails(ctl.ExitUsage, "maintenance", "on", "--pop")
	c.js(&s, "maintenance", "on", "--pop", "--yes")
	require.Equal(t, true, s["popMaintenanceMode"])
	c.js(&s, "maintenance", "get", "--pop")
	require.Equal(t, true, s["popMaintenanceMode"])
	c.js(&s, "maintenance", "get")
	require.Equal(t, false, s["maintenanceMode"])
	require.Equal(t, true, s["popMaintenanceMode"], "get shows both flags")
	c.fails(ctl.ExitNoop, "pop", q)
	c.js(&s, "maintenance", "off", "--pop")
	require.Equal(t, false, s["popMaintenanceMode"])
	c.ok("pop", q, "--auto-ack")
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
