package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCodeTable checks every tenant code against the seed's proxy table ("Behind the proxy").
func TestCodeTable(t *testing.T) {
	t.Parallel()
	seed := map[Code]int{
		"unauthorized": 401, "cluster_suspended": 403, "storage_quota_exceeded": 403, "quota_exceeded": 403,
		"push_blocked": 403, "feature_gated": 403, "route_blocked": 404, "payload_too_large": 413,
		"cluster_unknown": 421, "rate_limited": 429, "bad_gateway": 502, "upstream_timeout": 504,
	}
	for code, status := range seed {
		e := &Error{Code: code, RetryAfter: 7}
		require.Equal(t, status, e.Status(), code)
		w := httptest.NewRecorder()
		writeError(w, e)
		require.Equal(t, status, w.Code)
		var body map[string]string
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, string(code), body["code"])
		require.NotEmpty(t, body["error"])
		require.Len(t, body, 2)
		if code == CodeRateLimited {
			require.Equal(t, "7", w.Header().Get("Retry-After"))
		} else {
			require.Empty(t, w.Header().Get("Retry-After"))
		}
	}
	require.Equal(t, "request body exceeds cap", (&Error{Code: CodePayloadTooLarge}).Text())
	require.Equal(t, "request rate limit exceeded", (&Error{Code: CodeRateLimited}).Text())
	require.Equal(t, CodeInternalError, asError(errTest("boom")).Code)

	// connection_limit (beyond the seed's table) is a 503 that gives its connection back.
	w := httptest.NewRecorder()
	writeError(w, &Error{Code: CodeConnectionLimit})
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	require.Equal(t, "close", w.Header().Get("Connection"))
	require.Empty(t, w.Header().Get("Retry-After"))
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestCleanPathAndBlocks(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"/api/v1/../../internal/x": "/internal/x",
		"//internal/x":             "/internal/x",
		"/api/v1/push/":            "/api/v1/push/",
		"/api/./v1/push":           "/api/v1/push",
	} {
		require.Equal(t, want, cleanPath(p))
	}
}
