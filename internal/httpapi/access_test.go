package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/httpapi"
)

// TestAccessLevels: /api/v1/access reports, for each role, exactly the levels of decisions.md's
// access table, and everything when authentication is off.
func TestAccessLevels(t *testing.T) {
	t.Parallel()
	b := setupJWT(t, nil)
	want := map[string]httpapi.Access{
		"admin":      {AuthEnabled: true, Produce: true, Consume: true, Read: true, Admin: true},
		"read-write": {AuthEnabled: true, Produce: true, Consume: true, Read: true},
		"read-only":  {AuthEnabled: true, Read: true},
	}
	for role, w := range want {
		status, body := b.do(t, http.MethodGet, "/api/v1/access", b.hs256(t, jwtSecret, jwt.MapClaims{"sub": role, "role": role}), "")
		require.Equal(t, http.StatusOK, status, "%s: %s", role, body)
		var got httpapi.Access
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, w, got, role)
	}
	status, _ := b.do(t, http.MethodGet, "/api/v1/access", "", "")
	require.Equal(t, http.StatusUnauthorized, status, "without a token the route asks for one")

	open := setup(t, nil)
	status, body := open.do(t, http.MethodGet, "/api/v1/access", "", "")
	require.Equal(t, http.StatusOK, status)
	var got httpapi.Access
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, httpapi.Access{Produce: true, Consume: true, Read: true, Admin: true}, got)
}
