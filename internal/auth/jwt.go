package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Authenticator validates the bearer JWT of a request and checks its roles against the access
// level of the route (docs/reference.md lists the levels and the roles that pass each). It is safe for
// concurrent use.
type Authenticator struct {
	alg       string // configured: HS256, RS256, EdDSA or auto
	secret    []byte
	staticKey any // *rsa.PublicKey or ed25519.PublicKey from JWT_PUBLIC_KEY; nil = none
	jwks      *jwksCache
	parseOpts []jwt.ParserOption

	roles           roleSet
	skip            skipList
	rolesClaim      string
	rolesArrayClaim string
	log             *slog.Logger

	now      func() time.Time
	leeway   time.Duration
	verified verifiedCache
}

var (
	errAuthRequired = &Error{Status: http.StatusUnauthorized, Message: "Authentication required"}
	errForbidden    = &Error{Status: http.StatusForbidden, Message: "Insufficient permissions"}
	errBadSignature = &Error{Status: http.StatusUnauthorized, Message: "Invalid token signature"}
)

// New builds the authenticator for an enabled JWT configuration. It refuses a configuration with no
// key usable for the chosen algorithm and a malformed JWT_PUBLIC_KEY, naming the variable. With a
// JWT_JWKS_URL it fetches the key set once (a failure is logged and tolerated: the next token
// that needs a key fetches again).
func New(ctx context.Context, cfg Options, log *slog.Logger) (*Authenticator, error) {
	return newAuthenticator(ctx, cfg, log, time.Now)
}

func newAuthenticator(ctx context.Context, cfg Options, log *slog.Logger, now func() time.Time) (*Authenticator, error) {
	a := &Authenticator{
		alg: cfg.Algorithm, secret: []byte(cfg.Secret),
		roles: newRoleSet(cfg), skip: skipList(cfg.SkipPaths),
		rolesClaim: cfg.RolesClaim, rolesArrayClaim: cfg.RolesArrayClaim, log: log,
		now: now, leeway: cfg.ClockSkew,
	}
	if cfg.PublicKey != "" {
		key, err := parsePublicKey(cfg.PublicKey)
		if err != nil {
			return nil, err
		}
		a.staticKey = key
	}
	if cfg.JWKSURL != "" {
		u, err := url.Parse(cfg.JWKSURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("auth: JWT_JWKS_URL: not an http(s) URL: %q", cfg.JWKSURL)
		}
		timeout := cmpOr(cfg.JWKSTimeout, 5*time.Second)
		a.jwks = &jwksCache{
			url: cfg.JWKSURL, client: &http.Client{Timeout: timeout}, timeout: timeout,
			interval: cmpOr(cfg.JWKSRefreshInterval, time.Hour), log: log, now: now,
		}
	}
	hasAsym := a.staticKey != nil || a.jwks != nil
	switch a.alg {
	case "HS256":
		if len(a.secret) == 0 {
			return nil, errors.New("auth: JWT_ALGORITHM=HS256 needs JWT_SECRET")
		}
	case "RS256", "EdDSA":
		if !hasAsym {
			return nil, fmt.Errorf("auth: JWT_ALGORITHM=%s needs JWT_PUBLIC_KEY or JWT_JWKS_URL", a.alg)
		}
		if a.jwks == nil && !keyFits(a.staticKey, a.alg) {
			return nil, fmt.Errorf("auth: JWT_PUBLIC_KEY: a %s key cannot verify %s tokens", keyKind(a.staticKey), a.alg)
		}
	case "auto":
		if len(a.secret) == 0 && !hasAsym {
			return nil, errors.New("auth: JWT_ALGORITHM=auto needs at least one of JWT_SECRET, JWT_PUBLIC_KEY, JWT_JWKS_URL")
		}
	default:
		return nil, fmt.Errorf("auth: JWT_ALGORITHM: want HS256, RS256, EdDSA or auto, got %q", a.alg)
	}
	if a.roles[Admin] == nil {
		return nil, errors.New("auth: JWT_ROLE_ADMIN is empty")
	}
	a.parseOpts = []jwt.ParserOption{jwt.WithLeeway(cfg.ClockSkew), jwt.WithIssuedAt(), jwt.WithTimeFunc(now)}
	if cfg.RequireExp {
		a.parseOpts = append(a.parseOpts, jwt.WithExpirationRequired())
	}
	if cfg.Issuer != "" {
		a.parseOpts = append(a.parseOpts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		a.parseOpts = append(a.parseOpts, jwt.WithAudience(cfg.Audience))
	}
	if a.jwks != nil && a.alg != "HS256" {
		_ = a.jwks.refresh(ctx, 0)
	}
	return a, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func keyKind(key any) string {
	switch key.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", key)
}

// parsePublicKey reads an RSA or Ed25519 public key from PEM: PKIX "PUBLIC KEY", PKCS#1 "RSA PUBLIC
// KEY" or a certificate.
func parsePublicKey(s string) (any, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil {
		return nil, errors.New("auth: JWT_PUBLIC_KEY: no PEM block found")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: JWT_PUBLIC_KEY: %w", err)
	}
	switch key.(type) {
	case *rsa.PublicKey, ed25519.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("auth: JWT_PUBLIC_KEY: unsupported key type %T (want RSA or Ed25519)", key)
}

// Authorize authenticates r and checks its roles against level. Public routes and JWT_SKIP_PATHS
// pass without a token and with an empty Principal. Failures are *Error values.
func (a *Authenticator) Authorize(r *http.Request, level Access) (Principal, error) {
	if level == Public || a.skip.match(r.URL.Path) {
		return Principal{}, nil
	}
	token := bearer(r.Header.Get("Authorization"))
	if token == "" {
		return Principal{}, errAuthRequired
	}
	now := a.now()
	p, ok := a.verified.get(token, now)
	if !ok {
		claims, err := a.verify(r.Context(), token)
		if err != nil {
			return Principal{}, err
		}
		p = Principal{Roles: rolesFrom(claims, a.rolesClaim, a.rolesArrayClaim)}
		p.Subject, _ = claims["sub"].(string)
		until := now.Add(verifiedTTL)
		if exp, err := claims.GetExpirationTime(); err == nil && exp != nil && exp.Add(a.leeway).Before(until) {
			until = exp.Add(a.leeway)
		}
		a.verified.put(token, p, until)
	}
	if !a.roles.allows(level, p.Roles) {
		return p, errForbidden
	}
	return p, nil
}

// bearer strips a case-insensitive "Bearer " prefix; a header without it is the raw token.
func bearer(h string) string {
	h = strings.TrimSpace(h)
	const prefix = "bearer"
	if len(h) >= len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		if len(h) == len(prefix) {
			return ""
		}
		if c := h[len(prefix)]; c == ' ' || c == '\t' {
			return strings.TrimSpace(h[len(prefix)+1:])
		}
	}
	return h
}

// header is the part of a JOSE header that selects the key.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// parseHeader decodes the header segment of a compact JWT without verifying anything.
func parseHeader(token string) (header, error) {
	seg, _, ok := strings.Cut(token, ".")
	if !ok {
		return header{}, errors.New("token is not a compact JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return header{}, fmt.Errorf("header is not base64url: %w", err)
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return header{}, fmt.Errorf("header is not a JSON object: %w", err)
	}
	if h.Alg == "" {
		return header{}, errors.New("header has no alg")
	}
	return h, nil
}

// verify checks the token's algorithm, signature and registered claims and returns its claims.
func (a *Authenticator) verify(ctx context.Context, token string) (jwt.MapClaims, error) {
	h, err := parseHeader(token)
	if err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Message: "Token decode error: " + err.Error()}
	}
	key, err := a.keyFor(ctx, h)
	if err != nil {
		return nil, err
	}
	claims := jwt.MapClaims{}
	_, err = jwt.NewParser(append(slices.Clip(a.parseOpts), jwt.WithValidMethods([]string{h.Alg}))...).
		ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
			if t.Method.Alg() != h.Alg { // the library read the same header: cannot differ
				return nil, errBadSignature
			}
			return key, nil
		})
	if err != nil {
		return nil, mapJWTError(err)
	}
	return claims, nil
}

// keyFor applies the algorithm gate and picks the verification key for the token's header.
func (a *Authenticator) keyFor(ctx context.Context, h header) (any, error) {
	switch h.Alg {
	case "HS256", "RS256", "EdDSA":
	default:
		if a.alg == "auto" {
			return nil, &Error{Status: http.StatusUnauthorized, Message: "Unsupported algorithm: " + h.Alg}
		}
	}
	if a.alg != "auto" && h.Alg != a.alg {
		return nil, &Error{Status: http.StatusUnauthorized, Message: fmt.Sprintf("Token uses %s, expected %s", h.Alg, a.alg)}
	}
	if h.Alg == "HS256" {
		if len(a.secret) == 0 {
			// auto with only asymmetric keys: the token's algorithm is not one this broker verifies.
			return nil, &Error{Status: http.StatusUnauthorized, Message: "Unsupported algorithm: " + h.Alg}
		}
		return a.secret, nil
	}
	static := a.staticKey
	if static != nil && !keyFits(static, h.Alg) {
		static = nil
	}
	if a.jwks != nil && (h.Kid != "" || static == nil) {
		return a.jwks.lookup(ctx, h.Kid, h.Alg)
	}
	if static == nil {
		return nil, &Error{Status: http.StatusUnauthorized, Message: "Unsupported algorithm: " + h.Alg}
	}
	return static, nil
}

// jwtErrorTexts are the contract's 401 texts for golang-jwt's failures, checked in this order.
var jwtErrorTexts = []struct {
	err error
	msg string
}{
	{jwt.ErrTokenSignatureInvalid, "Invalid token signature"},
	{jwt.ErrTokenExpired, "Token has expired"},
	{jwt.ErrTokenNotValidYet, "Token is not valid yet"},
	{jwt.ErrTokenUsedBeforeIssued, "Token used before issued"},
	{jwt.ErrTokenInvalidIssuer, "Invalid token issuer"},
	{jwt.ErrTokenInvalidAudience, "Invalid token audience"},
}

// missingClaims word a required claim a token lacks, in the terms of the check that needs it; golang-jwt
// names the claim only in its error's text ("iss claim is required").
var missingClaims = []struct{ claim, msg string }{
	// Worded so that clients keying on the contract's "Token has expired" fetch a new token.
	{"exp", "Token has expired: exp claim is required"},
	{"iss", "Invalid token issuer: iss claim is required (JWT_ISSUER is set)"},
	{"aud", "Invalid token audience: aud claim is required (JWT_AUDIENCE is set)"},
}

func missingClaimText(err error) string {
	for _, m := range missingClaims {
		if strings.Contains(err.Error(), m.claim+" claim is required") {
			return m.msg
		}
	}
	return "Token verification failed: a required claim is missing"
}

// mapJWTError turns a golang-jwt failure into the contract's 401 texts.
func mapJWTError(err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, jwt.ErrTokenMalformed) {
		return &Error{Status: http.StatusUnauthorized, Message: "Token decode error: " + err.Error()}
	}
	if errors.Is(err, jwt.ErrTokenRequiredClaimMissing) {
		return &Error{Status: http.StatusUnauthorized, Message: missingClaimText(err)}
	}
	for _, t := range jwtErrorTexts {
		if errors.Is(err, t.err) {
			return &Error{Status: http.StatusUnauthorized, Message: t.msg}
		}
	}
	return &Error{Status: http.StatusUnauthorized, Message: "Token verification failed: " + err.Error()}
}
