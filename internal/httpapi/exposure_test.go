package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// TestMetricsBehindAuth: with JWT on the metrics routes need a token with read access by default, and
// METRICS_REQUIRE_AUTH=false makes them public again.
func TestMetricsBehindAuth(t *testing.T) {
	t.Parallel()
	const secret = "metrics-secret"
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "scraper", "role": "read-only",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
	require.NoError(t, err)
	b := setup(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret})
	for _, path := range []string{"/metrics", "/metrics/prometheus"} {
		st, body := b.do(t, "GET", path, "", "")
		require.Equal(t, http.StatusUnauthorized, st, "%s: %s", path, body)
		st, body = b.do(t, "GET", path, tok, "")
		require.Equal(t, http.StatusOK, st, "%s: %s", path, body)
	}
	st, _ := b.do(t, "GET", "/health", "", "")
	require.Equal(t, http.StatusOK, st, "health stays public")

	open := setup(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret, "METRICS_REQUIRE_AUTH": "false"})
	st, body := open.do(t, "GET", "/metrics/prometheus", "", "")
	require.Equal(t, http.StatusOK, st, string(body))
}

// TestQueueSeriesAreCapped: past METRICS_MAX_QUEUES distinct queues, pushes count under the
// __overflow__ queue label instead of growing the exposition.
func TestQueueSeriesAreCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"METRICS_MAX_QUEUES": "3"})
	a := b.raw
	for i := range 8 {
		a.push(pushItem{Queue: fmt.Sprintf("card-%d", i), Payload: i})
	}
	_, out := b.do(t, "GET", "/metrics/prometheus", "", "")
	body := string(out)
	series := regexp.MustCompile(`(?m)^queen_queue_pushed_messages_total\{queue="([^"]+)"\} (\d+)`).FindAllStringSubmatch(body, -1)
	labels := map[string]string{}
	for _, s := range series {
		labels[s[1]] = s[2]
	}
	require.Len(t, labels, 4, "3 queues and the overflow: %v", labels)
	require.Equal(t, "5", labels["__overflow__"])
}
