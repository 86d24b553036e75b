package config

import (
	"fmt"
	"slices"
	"strings"
)

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
