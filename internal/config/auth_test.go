package config

import (
	"testing"
	"time"

	"github.com/queen-go/queen/internal/auth"
	"github.com/stretchr/testify/require"
)

func loadAuthEnv(env map[string]string) (Config, error) {
	vars := map[string]string{"DATABASE_URL": "postgres://u@localhost/db"}
	for k, v := range env {
		vars[k] = v
	}
	return Load(func(k string) string { return vars[k] })
}

func TestAuthDefaults(t *testing.T) {
	t.Parallel()
	c, err := loadAuthEnv(nil)
	require.NoError(t, err)
	require.Equal(t, auth.Options{
		Algorithm: "HS256", ClockSkew: 30 * time.Second, RequireExp: true, MetricsRequireAuth: true,
		SkipPaths:           []string{"/health", "/metrics/prometheus", "/metrics", "/"},
		JWKSRefreshInterval: time.Hour, JWKSTimeout: 5 * time.Second,
		RolesClaim: "role", RolesArrayClaim: "roles",
		RoleAdmin: "admin", RoleReadWrite: "read-write", RoleReadOnly: "read-only", RoleWriteOnly: "write-only",
	}, c.Auth)
	for _, v := range []string{"1", "TRUE", "yes", "On"} {
		c, err = loadAuthEnv(map[string]string{"JWT_ENABLED": v, "JWT_SECRET": "s"})
		require.NoError(t, err, v)
		require.True(t, c.Auth.Enabled, "%s enables JWT", v)
		_, err = loadAuthEnv(map[string]string{"JWT_ENABLED": v})
		require.ErrorContains(t, err, "needs JWT_SECRET", "%s enables JWT, which then needs its key", v)
	}
}

func TestAuthOverrides(t *testing.T) {
	t.Parallel()
	c, err := loadAuthEnv(map[string]string{
		"JWT_ENABLED": "true", "JWT_ALGORITHM": "RS256", "JWT_PUBLIC_KEY": `-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----`,
		"JWT_SKIP_PATHS": " /health , /api/v1/pop/,, ", "JWT_CLOCK_SKEW": "5", "JWT_JWKS_TIMEOUT_MS": "250",
		"JWT_ROLE_WRITE_ONLY": "producer",
	})
	require.NoError(t, err)
	require.True(t, c.Auth.Enabled)
	require.Equal(t, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", c.Auth.PublicKey, "escaped newlines are read as newlines")
	require.Equal(t, []string{"/health", "/api/v1/pop/"}, c.Auth.SkipPaths)
	require.Equal(t, 5*time.Second, c.Auth.ClockSkew)
	require.Equal(t, 250*time.Millisecond, c.Auth.JWKSTimeout)
	require.Equal(t, "producer", c.Auth.RoleWriteOnly)
}

func TestAuthRefusesUnusableConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "JWT_ALGORITHM=HS256 needs JWT_SECRET"},
		{map[string]string{"JWT_JWKS_URL": "http://idp/jwks"}, "JWT_ALGORITHM=HS256 needs JWT_SECRET"},
		{map[string]string{"JWT_ALGORITHM": "RS256", "JWT_SECRET": "x"}, "JWT_ALGORITHM=RS256 needs JWT_PUBLIC_KEY or JWT_JWKS_URL"},
		{map[string]string{"JWT_ALGORITHM": "EdDSA"}, "JWT_ALGORITHM=EdDSA needs JWT_PUBLIC_KEY or JWT_JWKS_URL"},
		{map[string]string{"JWT_ALGORITHM": "auto"}, "at least one of JWT_SECRET, JWT_PUBLIC_KEY, JWT_JWKS_URL"},
		{map[string]string{"JWT_ALGORITHM": "hs256", "JWT_SECRET": "x"}, "JWT_ALGORITHM: want HS256, RS256, EdDSA or auto"},
		{map[string]string{"JWT_SECRET": "x", "JWT_CLOCK_SKEW": "soon"}, "JWT_CLOCK_SKEW"},
		{map[string]string{"JWT_SECRET": "x", "JWT_JWKS_REFRESH_INTERVAL": "-1"}, "JWT_JWKS_REFRESH_INTERVAL"},
		{map[string]string{"JWT_SECRET": "x", "JWT_ROLES_CLAIM": " ", "JWT_ROLES_ARRAY_CLAIM": " "}, "JWT_ROLES_CLAIM"},
	} {
		env := map[string]string{"JWT_ENABLED": "true"}
		for k, v := range tc.env {
			env[k] = v
		}
		_, err := loadAuthEnv(env)
		require.ErrorContains(t, err, tc.want, "%v", tc.env)
	}
	for _, env := range []map[string]string{
		{"JWT_ALGORITHM": "auto", "JWT_JWKS_URL": "http://idp/jwks"},
		{"JWT_ALGORITHM": "RS256", "JWT_JWKS_URL": "http://idp/jwks"},
		{"JWT_SECRET": "x"},
		{"JWT_ALGORITHM": "RS256"}, // JWT off: nothing is required
	} {
		if env["JWT_ALGORITHM"] != "RS256" || env["JWT_JWKS_URL"] != "" {
			env["JWT_ENABLED"] = "true"
		}
		_, err := loadAuthEnv(env)
		require.NoError(t, err, "%v", env)
	}
}
