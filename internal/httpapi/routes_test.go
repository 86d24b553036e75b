package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSystemAndUnknownRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)

	t.Run("health", func(t *testing.T) {
		t.Parallel()
		var body map[string]any
		requireJSON(t, b.call(t, t.Context(), "GET", "/health", nil), http.StatusOK, &body)
		require.Equal(t, "healthy", body["status"])
		require.Equal(t, "connected", body["database"])
	})

	t.Run("livez", func(t *testing.T) {
		t.Parallel()
		var body map[string]any
		requireJSON(t, b.call(t, t.Context(), "GET", "/livez", nil), http.StatusOK, &body)
		require.NotEmpty(t, body)
	})

	t.Run("unknown routes are a JSON 404", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/nope"},
			{"POST", "/anything"},
			{"DELETE", "/api/v1/push"},
			{"GET", "/api"},
			{"GET", "/api/v1/ack"},          // exists for POST only
			{"PUT", "/api/v1/configure"},    // exists for POST only
			{"POST", "/api/v1/pop/queue/x"}, // exists for GET only
			{"DELETE", "/some/page"},
			{"PATCH", "/health"},
		} {
			r := b.call(t, t.Context(), c.method, c.path, nil)
			require.Equal(t, "Not Found", requireError(t, r, http.StatusNotFound), "%s %s", c.method, c.path)
			require.JSONEq(t, `{"error":"Not Found","code":"no_such_route"}`, string(r.body), "%s %s", c.method, c.path)
		}
	})

	t.Run("other GETs serve the dashboard", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/some/page", "/", "/queues/orders"} {
			r := b.call(t, t.Context(), "GET", p, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/html"), "%s", r)
			require.Contains(t, strings.ToLower(string(r.body)), "<html")
			requireCORS(t, r.header)
		}
	})

	t.Run("OPTIONS is a CORS 204 on any path", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/api/v1/push", "/api/v1/nope", "/health", "/some/page"} {
			r := b.call(t, t.Context(), "OPTIONS", p, nil)
			require204(t, r)
			requireRaw204(t, b.addr(), "OPTIONS", p)
		}
	})

	t.Run("CORS on JSON answers of every kind", func(t *testing.T) {
		t.Parallel()
		q := uniqueName("cors")
		requireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/push", map[string]any{"items": []any{newItem(q, "", "", 1)}}), http.StatusCreated, nil)
		requireJSON(t, b.call(t, t.Context(), "GET", popPath(q, ""), nil), http.StatusOK, nil)
		requireError(t, b.call(t, t.Context(), "POST", "/api/v1/push", "{"), http.StatusBadRequest)
		requireError(t, b.call(t, t.Context(), "GET", "/api/v1/nope", nil), http.StatusNotFound)
		requireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", `{"acknowledgments":[]}`), http.StatusOK, nil)
	})
}
