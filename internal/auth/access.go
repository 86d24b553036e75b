// Package auth authenticates requests (JWT: HS256, RS256, EdDSA, static keys or JWKS) and authorises
// them by role set against the access level each route declares.
package auth

import "context"

// Access is the role set a route requires when authentication is on (docs/decisions.md).
type Access string

// Access levels.
const (
	Public  Access = "public"
	Produce Access = "produce"
	Consume Access = "consume"
	Read    Access = "read"
	Admin   Access = "admin"
)

// Principal is the authenticated caller.
type Principal struct {
	Subject string
	Roles   []string
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller authenticated for this request, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Error is an authentication or authorisation failure with the status and text of the contract
// (401 "Authentication required", 403 "Insufficient permissions", ...).
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }
