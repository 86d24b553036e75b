package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queen-go/queen/internal/auth"
)

func secondsVar(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a number of seconds: %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative: %d", n)
		}
		*dst(c) = time.Duration(n) * time.Second
		return nil
	}
}

func authStr(dst func(*auth.Options) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(&c.Auth) = strings.TrimSpace(v); return nil }
}

var authVars = []Var{
	{"JWT_ENABLED", "false", "require a JWT on every non-public route (exactly `true`)", false, func(c *Config, v string) error {
		c.Auth.Enabled = v == "true"
		return nil
	}},
	{"JWT_ALGORITHM", "HS256", "HS256, RS256, EdDSA, or auto (follow the token's alg header)", false, authStr(func(a *auth.Options) *string { return &a.Algorithm })},
	{"JWT_SECRET", "", "HS256 shared secret", true, func(c *Config, v string) error { c.Auth.Secret = v; return nil }},
	{"JWT_PUBLIC_KEY", "", "PEM public key (RSA or Ed25519) for RS256/EdDSA; literal \\n sequences are read as newlines", false, func(c *Config, v string) error {
		c.Auth.PublicKey = v
		return nil
	}},
	{"JWT_JWKS_URL", "", "URL of a JWKS for RS256/EdDSA keys, cached by kid", false, authStr(func(a *auth.Options) *string { return &a.JWKSURL })},
	{"JWT_ISSUER", "", "required iss claim (unchecked when empty)", false, authStr(func(a *auth.Options) *string { return &a.Issuer })},
	{"JWT_AUDIENCE", "", "required aud claim (unchecked when empty)", false, authStr(func(a *auth.Options) *string { return &a.Audience })},
	{"JWT_REQUIRE_EXP", "true", "refuse tokens without an exp claim (401 Token has expired: exp claim is required); `false` accepts them", false, func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Auth.RequireExp = b
		return nil
	}},
	{"METRICS_REQUIRE_AUTH", "true", "with JWT on, /metrics and /metrics/prometheus need a token with read access (they are dropped from JWT_SKIP_PATHS); `false` leaves them to JWT_SKIP_PATHS", false, func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Auth.MetricsRequireAuth = b
		return nil
	}},
	{"JWT_CLOCK_SKEW", "30", "seconds of leeway on exp, nbf and iat", false, secondsVar(func(c *Config) *time.Duration { return &c.Auth.ClockSkew })},
	{"JWT_SKIP_PATHS", "/health,/metrics/prometheus,/metrics,/", "comma-separated paths that bypass auth: exact match, or prefix match for entries longer than one character ending in /", false, func(c *Config, v string) error {
		c.Auth.SkipPaths = nil
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				c.Auth.SkipPaths = append(c.Auth.SkipPaths, p)
			}
		}
		return nil
	}},
	{"JWT_JWKS_REFRESH_INTERVAL", "3600", "seconds after which the cached JWKS is fetched again", false, secondsVar(func(c *Config) *time.Duration { return &c.Auth.JWKSRefreshInterval })},
	{"JWT_JWKS_TIMEOUT_MS", "5000", "ms timeout of one JWKS fetch", false, msVar(func(c *Config) *time.Duration { return &c.Auth.JWKSTimeout })},
	{"JWT_ROLES_CLAIM", "role", "claim holding one role as a string", false, authStr(func(a *auth.Options) *string { return &a.RolesClaim })},
	{"JWT_ROLES_ARRAY_CLAIM", "roles", "claim holding an array of roles", false, authStr(func(a *auth.Options) *string { return &a.RolesArrayClaim })},
	{"JWT_ROLE_ADMIN", "admin", "role name that passes every level", false, authStr(func(a *auth.Options) *string { return &a.RoleAdmin })},
	{"JWT_ROLE_READ_WRITE", "read-write", "role name that passes produce, consume and read", false, authStr(func(a *auth.Options) *string { return &a.RoleReadWrite })},
	{"JWT_ROLE_READ_ONLY", "read-only", "role name that passes read", false, authStr(func(a *auth.Options) *string { return &a.RoleReadOnly })},
	{"JWT_ROLE_WRITE_ONLY", "write-only", "role name that passes produce (push) only", false, authStr(func(a *auth.Options) *string { return &a.RoleWriteOnly })},
}

// validateAuth refuses a configuration that enables JWT without a key usable for the chosen algorithm.
// Parsing the PEM itself is internal/auth's job (auth.New), which the broker calls before serving.
func (c *Config) validateAuth() error {
	a := &c.Auth
	if !a.Enabled {
		return nil
	}
	if a.PublicKey != "" && !strings.Contains(a.PublicKey, "\n") {
		a.PublicKey = strings.ReplaceAll(a.PublicKey, `\n`, "\n")
	}
	if a.MetricsRequireAuth {
		a.SkipPaths = slices.DeleteFunc(slices.Clone(a.SkipPaths), func(p string) bool {
			return p == "/metrics" || p == "/metrics/" || p == "/metrics/prometheus"
		})
	}
	hasAsym := a.PublicKey != "" || a.JWKSURL != ""
	switch a.Algorithm {
	case "HS256":
		if a.Secret == "" {
			return fmt.Errorf("config: JWT_ALGORITHM=HS256 needs JWT_SECRET")
		}
	case "RS256", "EdDSA":
		if !hasAsym {
			return fmt.Errorf("config: JWT_ALGORITHM=%s needs JWT_PUBLIC_KEY or JWT_JWKS_URL", a.Algorithm)
		}
	case "auto":
		if a.Secret == "" && !hasAsym {
			return fmt.Errorf("config: JWT_ALGORITHM=auto needs at least one of JWT_SECRET, JWT_PUBLIC_KEY, JWT_JWKS_URL")
		}
	default:
		return fmt.Errorf("config: JWT_ALGORITHM: want HS256, RS256, EdDSA or auto, got %q", a.Algorithm)
	}
	if a.RolesClaim == "" && a.RolesArrayClaim == "" {
		return fmt.Errorf("config: JWT_ROLES_CLAIM and JWT_ROLES_ARRAY_CLAIM are both empty: no role could ever be read")
	}
	if a.JWKSURL != "" && a.JWKSTimeout <= 0 {
		return fmt.Errorf("config: JWT_JWKS_TIMEOUT_MS: must be positive")
	}
	if a.JWKSURL != "" && a.JWKSRefreshInterval <= 0 {
		return fmt.Errorf("config: JWT_JWKS_REFRESH_INTERVAL: must be positive")
	}
	return nil
}
