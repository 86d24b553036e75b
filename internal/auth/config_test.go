package auth_test

import (
	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/config"
)

// The internal tests take their settings from the real variable table (defaults, JWT_SKIP_PATHS
// without /metrics when METRICS_REQUIRE_AUTH is on...), not from a copy of it.
func init() {
	auth.LoadOptions = func(vars map[string]string) (auth.Options, error) {
		cfg, err := config.Load(func(k string) string { return vars[k] })
		return cfg.Auth, err
	}
}
