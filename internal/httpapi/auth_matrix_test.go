package httpapi_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/httpapi"
)

// accessTable is decisions.md's access table: the roles each level lets through.
var accessTable = map[auth.Access][]string{
	auth.Produce: {"admin", "read-write", "write-only"},
	auth.Consume: {"admin", "read-write"},
	auth.Read:    {"admin", "read-write", "read-only"},
	auth.Admin:   {"admin"},
}

// TestAuthMatrix walks every route of httpapi.Routes with no token, three kinds of bad token and a
// valid token of each role, and checks 401/403/allowed against the access table.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	b := setupJWT(t, nil)
	now := time.Now().Unix()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	type credential struct {
		name  string
		token string
		role  string // valid token of this role; "" = a fault
		fault string // the 401 text of a fault
	}
	creds := []credential{
		{name: "no token", fault: "Authentication required"},
		{name: "expired", token: b.hs256(t, jwtSecret, jwt.MapClaims{"sub": "x", "role": "admin", "exp": now - 3600}), fault: "Token has expired"},
		{name: "bad signature", token: b.hs256(t, "not-the-secret", jwt.MapClaims{"sub": "x", "role": "admin"}), fault: "Invalid token signature"},
		{name: "unknown kid", token: b.rs256(t, other, "ghost", jwt.MapClaims{"sub": "x", "role": "admin"}), fault: "Unknown key ID: ghost"},
		// Valid tokens mix both algorithms, kid and no kid, and both role claims.
		{name: "admin", role: "admin", token: b.rs256(t, b.rsaKey, "k1", jwt.MapClaims{"sub": "adm", "role": "admin", "exp": now + 600})},
		{name: "read-write", role: "read-write", token: b.hs256(t, jwtSecret, jwt.MapClaims{"sub": "rw", "roles": []string{"read-write"}, "exp": now + 600})},
		{name: "read-only", role: "read-only", token: b.rs256(t, b.rsaKey, "", jwt.MapClaims{"sub": "ro", "role": "read-only"})},
		{name: "write-only", role: "write-only", token: b.hs256(t, jwtSecret, jwt.MapClaims{"sub": "wo", "roles": []string{"write-only", "unrelated"}})},
	}

	require.NotEmpty(t, httpapi.Routes)
	for _, rt := range httpapi.Routes {
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			t.Parallel()
			path, body := routePath(rt.Pattern), ""
			if rt.Method == http.MethodGet || rt.Method == http.MethodHead {
				path += "?wait=false&timeout=1&batch=1" // never long-poll
			} else {
				body = "{}"
			}
			for _, c := range creds {
				status, out := b.do(t, rt.Method, path, c.token, body)
				var env struct {
					Error string `json:"error"`
					Code  string `json:"code"`
				}
				_ = json.Unmarshal(out, &env)
				var allowed bool
				want := ""
				access := rt.Access
				if rt.Pattern == "/metrics" || rt.Pattern == "/metrics/prometheus" {
					access = auth.Read // METRICS_REQUIRE_AUTH (default) with JWT on
				}
				switch {
				case access == auth.Public:
					allowed = true
				case c.role == "":
					want = c.fault
				default:
					passes, known := accessTable[access]
					require.True(t, known, "route has an access level outside the table: %q", rt.Access)
					allowed = slices.Contains(passes, c.role)
					want = "Insufficient permissions"
				}
				if allowed {
					require.NotContains(t, []int{401, 403}, status, "%s: %s", c.name, out)
					require.NotEqual(t, "no_such_route", env.Code, "%s: the substituted path missed the route: %s", c.name, path)
					continue
				}
				wantStatus := http.StatusUnauthorized
				if c.role != "" {
					wantStatus = http.StatusForbidden
				}
				require.Equal(t, wantStatus, status, "%s: %s", c.name, out)
				require.Equal(t, want, env.Error, c.name)
			}
		})
	}
}

// TestAuthWriteOnlyAndProducerSub: a write-only credential pushes but cannot pop, and the pusher's
// sub is stamped as producerSub whatever the client sent.
func TestAuthWriteOnlyAndProducerSub(t *testing.T) {
	t.Parallel()
	b := setupJWT(t, nil)
	writer := b.hs256(t, jwtSecret, jwt.MapClaims{"sub": "producer-7", "role": "write-only"})
	reader := b.rs256(t, b.rsaKey, "k1", jwt.MapClaims{"sub": "consumer-1", "roles": []string{"read-write"}})

	items, err := json.Marshal(map[string]any{"items": []map[string]any{
		{"queue": "owned", "payload": map[string]any{"n": 1}, "producerSub": "spoofed-admin"},
	}})
	require.NoError(t, err)
	status, out := b.do(t, "POST", "/api/v1/push", writer, string(items))
	require.Equal(t, http.StatusCreated, status, string(out))

	status, out = b.do(t, "GET", "/api/v1/pop/queue/owned?wait=false", writer, "")
	require.Equal(t, http.StatusForbidden, status, string(out))
	require.JSONEq(t, `{"error":"Insufficient permissions"}`, string(out))

	status, out = b.do(t, "GET", "/api/v1/pop/queue/owned?wait=false", reader, "")
	require.Equal(t, http.StatusOK, status, string(out))
	var res struct {
		Messages []struct {
			ProducerSub *string `json:"producerSub"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, res.Messages, 1)
	require.NotNil(t, res.Messages[0].ProducerSub)
	require.Equal(t, "producer-7", *res.Messages[0].ProducerSub)
}

// TestAuthSkipPaths: JWT_SKIP_PATHS entries bypass the check (exact, and prefix for entries ending
// in /); everything else still needs a token.
func TestAuthSkipPaths(t *testing.T) {
	t.Parallel()
	b := setupJWT(t, map[string]string{"JWT_SKIP_PATHS": "/api/v1/pop/,/api/v1/configure,/"})
	status, out := b.do(t, "POST", "/api/v1/configure", "", `{"queue":"skipped"}`)
	require.NotContains(t, []int{401, 403}, status, string(out))
	status, out = b.do(t, "GET", "/api/v1/pop/queue/skipped?wait=false", "", "")
	require.Equal(t, http.StatusNoContent, status, string(out))
	status, out = b.do(t, "POST", "/api/v1/push", "", `{"items":[{"queue":"skipped","payload":1}]}`)
	require.Equal(t, http.StatusUnauthorized, status, string(out))
	require.JSONEq(t, `{"error":"Authentication required"}`, string(out))
	status, out = b.do(t, "POST", "/api/v1/ack", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, status, "the root entry matches only /: %s", out)
	// Public routes need no token whatever the skip list says.
	status, _ = b.do(t, "GET", "/health", "", "")
	require.Equal(t, http.StatusOK, status)
	// A raw token (no Bearer prefix) is accepted; a valid token on a skipped path is harmless.
	tok := b.hs256(t, jwtSecret, jwt.MapClaims{"sub": "p", "role": "write-only"})
	req, err := http.NewRequestWithContext(t.Context(), "POST", b.rb.URL+"/api/v1/push", bytes.NewReader([]byte(`{"items":[{"queue":"skipped","payload":1}]}`)))
	require.NoError(t, err)
	req.Header.Set("Authorization", tok)
	require.Equal(t, http.StatusCreated, b.send(t, req).status)
}
