package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

func getWithToken(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestMetricsBehindAuth: with JWT on the metrics routes need a token with read access by default, and
// METRICS_REQUIRE_AUTH=false makes them public again.
func TestMetricsBehindAuth(t *testing.T) {
	t.Parallel()
	const secret = "metrics-secret"
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "scraper", "role": "read-only",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
	require.NoError(t, err)
	b := setup(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret}).rb
	for _, path := range []string{"/metrics", "/metrics/prometheus"} {
		st, body := getWithToken(t, b.URL+path, "")
		require.Equal(t, http.StatusUnauthorized, st, "%s: %s", path, body)
		st, body = getWithToken(t, b.URL+path, tok)
		require.Equal(t, http.StatusOK, st, "%s: %s", path, body)
	}
	st, _ := getWithToken(t, b.URL+"/health", "")
	require.Equal(t, http.StatusOK, st, "health stays public")

	open := setup(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret, "METRICS_REQUIRE_AUTH": "false"}).rb
	st, body := getWithToken(t, open.URL+"/metrics/prometheus", "")
	require.Equal(t, http.StatusOK, st, body)
}

// TestQueueSeriesAreCapped: past METRICS_MAX_QUEUES distinct queues, pushes count under the
// __overflow__ queue label instead of growing the exposition.
func TestQueueSeriesAreCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"METRICS_MAX_QUEUES": "3"}).rb
	a := newAPI(t, b.URL)
	for i := range 8 {
		a.push(pushItem{Queue: fmt.Sprintf("card-%d", i), Payload: i})
	}
	_, body := getWithToken(t, b.URL+"/metrics/prometheus", "")
	series := regexp.MustCompile(`(?m)^queen_queue_pushed_messages_total\{queue="([^"]+)"\} (\d+)`).FindAllStringSubmatch(body, -1)
	labels := map[string]string{}
	for _, s := range series {
		labels[s[1]] = s[2]
	}
	require.Len(t, labels, 4, "3 queues and the overflow: %v", labels)
	require.Equal(t, "5", labels["__overflow__"])
}
