package proxy_test

import (
	"bytes"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/testenv"
)

// TestCommand runs the management sub-commands against a real database and uses what they create.
func TestCommand(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	dbURL := testenv.NewDatabase(t)
	cfg, err := proxy.LoadConfig(func(k string) string {
		return map[string]string{"QUEEN_PROXY_DATABASE_URL": dbURL}[k]
	})
	require.NoError(t, err)
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, proxy.Command(t.Context(), cfg, args, &out))
		return out.String()
	}
	run("plan", "create", "--name", "small", "--max-batch-items", "2", "--request-rate", "100")
	run("cluster", "create", "--name", "acme", "--host", "acme.queen.test,ACME.example:443", "--upstream", broker.URL, "--plan", "small")
	out := run("key", "create", "--cluster", "acme", "--roles", "read-write", "--name", "ci")
	m := regexp.MustCompile(`key_id=(\S+)\nkey=(qk_\S+)\n`).FindStringSubmatch(out)
	require.Len(t, m, 3, out)
	id, key := m[1], m[2]

	b := newBundle(t, bundleOpts{storeURL: dbURL})
	require.Equal(t, http.StatusCreated, b.do(t, "acme.example", key, "POST", "/api/v1/push", items("q", 2, 10)).status)
	msg := requireCode(t, b.do(t, "acme.queen.test:8443", key, "POST", "/api/v1/push", items("q", 3, 10)), 413, "payload_too_large")
	require.Equal(t, "batch of 3 items exceeds max_batch_items (2)", msg)

	run("key", "revoke", "--id", id)
	requireCode(t, b.do(t, "acme.queen.test", key, "GET", "/health", nil), 401, "unauthorized")

	require.ErrorIs(t, proxy.Command(t.Context(), cfg, []string{"key", "explode"}, &bytes.Buffer{}), proxy.ErrUsage)
	err = proxy.Command(t.Context(), cfg, []string{"key", "create", "--cluster", "acme", "--roles", "superuser"}, &bytes.Buffer{})
	require.ErrorContains(t, err, `unknown role "superuser"`)
}
