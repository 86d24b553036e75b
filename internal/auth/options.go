package auth

import "time"

// Options are the JWT authentication settings. They only say what is configured: New parses the keys
// and refuses what it cannot use. internal/config reads the JWT_* variables straight into this type,
// so this package does not depend on the configuration table.
type Options struct {
	Enabled   bool   // JWT_ENABLED
	Algorithm string // HS256, RS256, EdDSA or auto
	Secret    string // HS256 shared secret
	PublicKey string // PEM (RSA or Ed25519) for RS256/EdDSA
	JWKSURL   string

	Issuer    string // checked only when set
	Audience  string // checked only when set
	ClockSkew time.Duration
	// RequireExp refuses tokens without an exp claim: a token that never expires cannot be revoked by
	// waiting.
	RequireExp bool
	// MetricsRequireAuth puts /metrics and /metrics/prometheus behind read access whatever SkipPaths
	// says about them.
	MetricsRequireAuth bool

	SkipPaths []string

	JWKSRefreshInterval time.Duration
	JWKSTimeout         time.Duration

	RolesClaim      string // string claim holding one role
	RolesArrayClaim string // array claim holding roles

	RoleAdmin     string
	RoleReadWrite string
	RoleReadOnly  string
	RoleWriteOnly string
}
