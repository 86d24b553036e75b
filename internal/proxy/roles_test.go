package proxy_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestWriteOnlyKey: a write-only key pushes through the proxy and is refused a pop by the broker, which
// verifies the proxy's JWT and enforces role sets. A revoked key is refused at once.
func TestWriteOnlyKey(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})
	b.plan(t, "p", nil)
	h, key, id := b.cluster(t, "acme", "p", broker.URL, "write-only")

	r := b.do(t, h, key, "POST", "/api/v1/push", items("wo", 2, 10))
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)

	// The broker runs with JWT on (brokerEnv): a pop without the proxy's token is refused, so the 403
	// below is the broker enforcing the write-only role, not an open broker answering anyone.
	req, err := http.NewRequestWithContext(t.Context(), "GET", broker.URL+"/api/v1/pop/queue/wo", nil)
	require.NoError(t, err)
	res, err := httpClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "the broker must enforce JWT in this test")

	r = b.do(t, h, key, "GET", "/api/v1/pop/queue/wo", nil)
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "Insufficient permissions")

	// A read-write key of the same cluster pops what the write-only key pushed.
	_, rw, err := proxyCreateKey(t, b, "acme", "read-write")
	require.NoError(t, err)
	r = b.do(t, h, rw, "GET", "/api/v1/pop/queue/wo?batch=10", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	require.NoError(t, b.store.RevokeKey(t.Context(), id))
	requireCode(t, b.do(t, h, key, "POST", "/api/v1/push", items("wo", 1, 10)), 401, "unauthorized")
}

// TestMigrationsConcurrent opens the store from several goroutines on one empty database.
func TestMigrationsConcurrent(t *testing.T) {
	t.Parallel()
	url := testenv.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			st, err := proxystore.Open(t.Context(), url, "tenant_proxy")
			if err == nil {
				st.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st, err := proxystore.Open(t.Context(), url, "tenant_proxy")
	require.NoError(t, err)
	defer st.Close()
	_, err = st.CreatePlan(t.Context(), proxystore.Plan{Name: "x"})
	require.NoError(t, err)
	_, err = st.CreatePlan(t.Context(), proxystore.Plan{Name: "x"})
	require.ErrorIs(t, err, proxystore.ErrConflict)
}
