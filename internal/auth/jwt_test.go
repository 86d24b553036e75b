package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

const testSecret = "s3cret-for-tests"

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// baseConfig is the configuration the variable table gives by default, with JWT on.
func baseConfig(t testing.TB, env map[string]string) Options {
	t.Helper()
	vars := map[string]string{"JWT_ENABLED": "true", "DATABASE_URL": "postgres://x@localhost/x"}
	for k, v := range env {
		vars[k] = v
	}
	o, err := LoadOptions(vars)
	require.NoError(t, err)
	return o
}

// LoadOptions reads the JWT settings from variables through the broker's configuration table. It is
// set by config_test.go, an external test package: internal/config imports this package, so these
// internal tests cannot import it.
var LoadOptions func(vars map[string]string) (Options, error)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var (
	keysOnce sync.Once
	rsaKeys  [3]*rsa.PrivateKey
)

// testRSA returns one of three RSA keys generated once per test binary.
func testRSA(t testing.TB, i int) *rsa.PrivateKey {
	t.Helper()
	keysOnce.Do(func() {
		for j := range rsaKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys[j] = k
		}
	})
	return rsaKeys[i]
}

// sign makes a token; it gets an hour of life unless claims name an exp (JWT_REQUIRE_EXP is on by
// default). signNoExp makes one without.
func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	if _, ok := claims["exp"]; !ok {
		claims["exp"] = time.Now().Add(time.Hour).Unix()
	}
	return signNoExp(t, method, key, kid, claims)
}

func signNoExp(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

func request(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/resources/queues", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func requireAuthError(t *testing.T, err error, status int, msg string) {
	t.Helper()
	require.Error(t, err)
	var ae *Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, status, ae.Status, ae.Message)
	require.Equal(t, msg, ae.Message)
}

func pemOf(t testing.TB, pub any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func TestNewRefusesUnusableConfig(t *testing.T) {
	t.Parallel()
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		cfg  func(*Options)
		want string
	}{
		{"hs256 without secret", func(c *Options) { c.Secret = "" }, "JWT_SECRET"},
		{"rs256 without key", func(c *Options) { c.Algorithm = "RS256" }, "JWT_PUBLIC_KEY or JWT_JWKS_URL"},
		{"eddsa without key", func(c *Options) { c.Algorithm = "EdDSA"; c.Secret = "x" }, "JWT_PUBLIC_KEY or JWT_JWKS_URL"},
		{"auto without anything", func(c *Options) { c.Algorithm = "auto"; c.Secret = "" }, "at least one of JWT_SECRET, JWT_PUBLIC_KEY, JWT_JWKS_URL"},
		{"unknown algorithm", func(c *Options) { c.Algorithm = "HS512" }, "JWT_ALGORITHM"},
		{"not pem", func(c *Options) { c.Algorithm = "RS256"; c.PublicKey = "hello" }, "JWT_PUBLIC_KEY: no PEM block"},
		{"broken pem body", func(c *Options) {
			c.Algorithm = "RS256"
			c.PublicKey = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
		}, "JWT_PUBLIC_KEY"},
		{"ed25519 key for rs256", func(c *Options) { c.Algorithm = "RS256"; c.PublicKey = pemOf(t, edPub) }, "cannot verify RS256"},
		{"jwks url not http", func(c *Options) { c.Algorithm = "RS256"; c.JWKSURL = "file:///etc/keys" }, "JWT_JWKS_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig(t, map[string]string{"JWT_SECRET": testSecret})
			tc.cfg(&cfg)
			_, err := New(t.Context(), cfg, discard)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewAcceptsStaticKeys(t *testing.T) {
	t.Parallel()
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rk := testRSA(t, 0)
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rk.PublicKey)}))
	for _, tc := range []struct {
		name, alg, pem string
		method         jwt.SigningMethod
		key            any
	}{
		{"rs256 pkix", "RS256", pemOf(t, &rk.PublicKey), jwt.SigningMethodRS256, rk},
		{"rs256 pkcs1 with escaped newlines", "RS256", strings.ReplaceAll(pkcs1, "\n", `\n`), jwt.SigningMethodRS256, rk},
		{"eddsa", "EdDSA", pemOf(t, edPub), jwt.SigningMethodEdDSA, edPriv},
		{"auto eddsa", "auto", pemOf(t, edPub), jwt.SigningMethodEdDSA, edPriv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig(t, map[string]string{"JWT_ALGORITHM": tc.alg, "JWT_PUBLIC_KEY": tc.pem})
			a, err := New(t.Context(), cfg, discard)
			require.NoError(t, err)
			p, err := a.Authorize(request(sign(t, tc.method, tc.key, "any-kid", jwt.MapClaims{"sub": "u1", "role": "read-only"})), Read)
			require.NoError(t, err)
			require.Equal(t, "u1", p.Subject)
			_, err = a.Authorize(request(sign(t, jwt.SigningMethodHS256, []byte("k"), "", jwt.MapClaims{"role": "admin"})), Read)
			if tc.alg == "auto" {
				requireAuthError(t, err, 401, "Unsupported algorithm: HS256")
			} else {
				requireAuthError(t, err, 401, "Token uses HS256, expected "+tc.alg)
			}
		})
	}
}

func TestAuthorizeTokenFaults(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	cfg := baseConfig(t, map[string]string{"JWT_SECRET": testSecret, "JWT_ISSUER": "queen-idp", "JWT_AUDIENCE": "queen"})
	a, err := newAuthenticator(t.Context(), cfg, discard, clk.now)
	require.NoError(t, err)
	now := clk.now().Unix()
	good := func(extra jwt.MapClaims) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "role": "admin", "iss": "queen-idp", "aud": "queen", "exp": now + 60, "iat": now}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", c) }
	for _, tc := range []struct {
		name   string
		header string
		status int
		msg    string
	}{
		{"no header", "", 401, "Authentication required"},
		{"bearer only", "Bearer", 401, "Authentication required"},
		{"blank bearer", "bearer   ", 401, "Authentication required"},
		{"valid", "Bearer " + hs(good(nil)), 0, ""},
		{"lowercase bearer", "bearer " + hs(good(nil)), 0, ""},
		{"raw token", hs(good(nil)), 0, ""},
		{"no exp", "Bearer " + signNoExp(t, jwt.SigningMethodHS256, []byte(testSecret), "", good(jwt.MapClaims{"exp": nil})), 401, "Token has expired: exp claim is required"},
		{"expired within skew", "Bearer " + hs(good(jwt.MapClaims{"exp": now - 20})), 0, ""},
		{"expired", "Bearer " + hs(good(jwt.MapClaims{"exp": now - 31})), 401, "Token has expired"},
		{"not yet valid", "Bearer " + hs(good(jwt.MapClaims{"nbf": now + 120})), 401, "Token is not valid yet"},
		{"issued in the future", "Bearer " + hs(good(jwt.MapClaims{"iat": now + 120})), 401, "Token used before issued"},
		{"bad signature", "Bearer " + sign(t, jwt.SigningMethodHS256, []byte("other"), "", good(nil)), 401, "Invalid token signature"},
		{"wrong issuer", "Bearer " + hs(good(jwt.MapClaims{"iss": "evil"})), 401, "Invalid token issuer"},
		{"no issuer", "Bearer " + hs(good(jwt.MapClaims{"iss": nil})), 401, "Invalid token issuer: iss claim is required (JWT_ISSUER is set)"},
		{"no audience", "Bearer " + hs(good(jwt.MapClaims{"aud": nil})), 401, "Invalid token audience: aud claim is required (JWT_AUDIENCE is set)"},
		{"wrong audience", "Bearer " + hs(good(jwt.MapClaims{"aud": []string{"x", "y"}})), 401, "Invalid token audience"},
		{"audience in list", "Bearer " + hs(good(jwt.MapClaims{"aud": []string{"x", "queen"}})), 0, ""},
		{"alg mismatch", "Bearer " + sign(t, jwt.SigningMethodRS256, testRSA(t, 0), "", good(nil)), 401, "Token uses RS256, expected HS256"},
		{"garbage", "Bearer not-a-jwt", 401, "Token decode error: token is not a compact JWT"},
		{"three garbage segments", "Bearer aaaa.b.c", 401, "Token decode error: header is not a JSON object: invalid character 'i' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/api/v1/push", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			p, err := a.Authorize(r, Produce)
			if tc.status == 0 {
				require.NoError(t, err)
				require.Equal(t, Principal{Subject: "alice", Roles: []string{"admin"}}, p)
				return
			}
			requireAuthError(t, err, tc.status, tc.msg)
		})
	}
}

func TestAutoAlgorithmGate(t *testing.T) {
	t.Parallel()
	rk := testRSA(t, 0)
	cfg := baseConfig(t, map[string]string{"JWT_ALGORITHM": "auto", "JWT_SECRET": testSecret, "JWT_PUBLIC_KEY": pemOf(t, &rk.PublicKey)})
	a, err := New(t.Context(), cfg, discard)
	require.NoError(t, err)
	claims := jwt.MapClaims{"sub": "s", "roles": []string{"read-only"}}
	_, err = a.Authorize(request(sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", claims)), Read)
	require.NoError(t, err)
	_, err = a.Authorize(request(sign(t, jwt.SigningMethodRS256, rk, "", claims)), Read)
	require.NoError(t, err)
	_, err = a.Authorize(request(sign(t, jwt.SigningMethodHS512, []byte(testSecret), "", claims)), Read)
	requireAuthError(t, err, 401, "Unsupported algorithm: HS512")
	_, err = a.Authorize(request(sign(t, jwt.SigningMethodRS384, rk, "", claims)), Read)
	requireAuthError(t, err, 401, "Unsupported algorithm: RS384")
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	_, err = a.Authorize(request(none), Read)
	requireAuthError(t, err, 401, "Unsupported algorithm: none")
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_ = edPub
	_, err = a.Authorize(request(sign(t, jwt.SigningMethodEdDSA, edPriv, "", claims)), Read)
	requireAuthError(t, err, 401, "Unsupported algorithm: EdDSA")
}

func TestRoleSets(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, map[string]string{"JWT_SECRET": testSecret})
	rs := newRoleSet(cfg)
	want := map[string][]Access{
		"admin":      {Public, Produce, Consume, Read, Admin},
		"read-write": {Public, Produce, Consume, Read},
		"read-only":  {Public, Read},
		"write-only": {Public, Produce},
		"":           {Public},
		"superuser":  {Public},
	}
	for role, levels := range want {
		for _, level := range []Access{Public, Produce, Consume, Read, Admin, "bogus"} {
			var roles []string
			if role != "" {
				roles = []string{role}
			}
			require.Equal(t, contains(levels, level), rs.allows(level, roles), "%q on %s", role, level)
		}
	}
	// Renamed roles, from both claims.
	cfg = baseConfig(t, map[string]string{"JWT_SECRET": testSecret, "JWT_ROLE_WRITE_ONLY": "pusher", "JWT_ROLES_CLAIM": "scope", "JWT_ROLES_ARRAY_CLAIM": "groups"})
	a, err := New(t.Context(), cfg, discard)
	require.NoError(t, err)
	tok := sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", jwt.MapClaims{"scope": "pusher", "groups": []string{"read-only", "x"}, "role": "admin"})
	p, err := a.Authorize(request(tok), Produce)
	require.NoError(t, err)
	require.Equal(t, []string{"pusher", "read-only", "x"}, p.Roles)
	_, err = a.Authorize(request(tok), Read)
	require.NoError(t, err)
	_, err = a.Authorize(request(tok), Consume)
	requireAuthError(t, err, 403, "Insufficient permissions")
}

func contains(levels []Access, l Access) bool {
	for _, x := range levels {
		if x == l {
			return true
		}
	}
	return false
}

func TestSkipPaths(t *testing.T) {
	t.Parallel()
	l := skipList(baseConfig(t, map[string]string{"JWT_SECRET": "x"}).SkipPaths)
	require.True(t, l.match("/health"))
	require.False(t, l.match("/metrics"), "METRICS_REQUIRE_AUTH (default) drops the metrics routes")
	require.False(t, l.match("/metrics/prometheus"))
	require.True(t, l.match("/"))
	l = skipList(baseConfig(t, map[string]string{"JWT_SECRET": "x", "METRICS_REQUIRE_AUTH": "false"}).SkipPaths)
	require.True(t, l.match("/metrics"))
	require.True(t, l.match("/metrics/prometheus"))
	require.False(t, l.match("/api/v1/push"), "the root entry matches only the root")
	require.False(t, l.match("/health/x"))
	l = skipList{"/api/v1/pop/", "/exact", "/"}
	require.True(t, l.match("/api/v1/pop/queue/q"))
	require.False(t, l.match("/api/v1/pop"))
	require.True(t, l.match("/exact"))
	require.False(t, l.match("/exact/more"))

	a, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_SECRET": "x", "JWT_SKIP_PATHS": "/api/v1/system/"}), discard)
	require.NoError(t, err)
	_, err = a.Authorize(httptest.NewRequest(http.MethodPost, "/api/v1/system/maintenance", nil), Admin)
	require.NoError(t, err, "a skipped path bypasses even admin routes")
	_, err = a.Authorize(httptest.NewRequest(http.MethodGet, "/health", nil), Admin)
	requireAuthError(t, err, 401, "Authentication required")
	_, err = a.Authorize(httptest.NewRequest(http.MethodGet, "/livez", nil), Public)
	require.NoError(t, err, "public routes never need a token")
}

// jwksServer serves a key set that the test can replace and fail.
type jwksServer struct {
	*httptest.Server
	doc     atomic.Pointer[[]byte]
	fail    atomic.Bool
	fetches atomic.Int64
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		if s.fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*s.doc.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

// JWK is a test key for JWKSDoc: an *rsa.PublicKey or ed25519.PublicKey under a kid.
type JWK struct {
	Kid string
	Key any
}

func (s *jwksServer) set(t *testing.T, keys ...JWK) {
	t.Helper()
	doc := JWKSDoc(keys...)
	s.doc.Store(&doc)
}

// JWKSDoc renders a JWKS document.
func JWKSDoc(keys ...JWK) []byte {
	var out []map[string]string
	b64 := base64.RawURLEncoding.EncodeToString
	for _, k := range keys {
		switch key := k.Key.(type) {
		case *rsa.PublicKey:
			out = append(out, map[string]string{"kty": "RSA", "kid": k.Kid, "use": "sig", "alg": "RS256",
				"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())})
		case ed25519.PublicKey:
			out = append(out, map[string]string{"kty": "OKP", "crv": "Ed25519", "kid": k.Kid, "x": b64(key)})
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": out})
	return b
}

func TestJWKSRotation(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t)
	k1, k2, k3 := testRSA(t, 0), testRSA(t, 1), testRSA(t, 2)
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	srv.set(t, JWK{"k1", &k1.PublicKey}, JWK{"ed", edPub})
	clk := &clock{t: time.Now()}
	cfg := baseConfig(t, map[string]string{"JWT_ALGORITHM": "auto", "JWT_JWKS_URL": srv.URL, "JWT_JWKS_REFRESH_INTERVAL": "600"})
	a, err := newAuthenticator(t.Context(), cfg, discard, clk.now)
	require.NoError(t, err)
	require.EqualValues(t, 1, srv.fetches.Load(), "fetched at startup")
	claims := jwt.MapClaims{"sub": "svc", "role": "read-write"}
	authz := func(tok string) error { _, err := a.Authorize(request(tok), Read); return err }

	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k1, "k1", claims)))
	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k1, "", claims)), "no kid: first key that fits")
	require.NoError(t, authz(sign(t, jwt.SigningMethodEdDSA, edPriv, "ed", claims)))
	require.NoError(t, authz(sign(t, jwt.SigningMethodEdDSA, edPriv, "", claims)))
	requireAuthError(t, authz(sign(t, jwt.SigningMethodRS256, k2, "k1", claims)), 401, "Invalid token signature")
	requireAuthError(t, authz(sign(t, jwt.SigningMethodEdDSA, edPriv, "k1", claims)), 401, "Invalid token signature")
	require.EqualValues(t, 1, srv.fetches.Load(), "known kids are served from the cache")

	// Rotate: k1 leaves, k2 arrives. A token of the new kid passes without a restart.
	srv.set(t, JWK{"k2", &k2.PublicKey})
	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k2, "k2", claims)))
	require.EqualValues(t, 2, srv.fetches.Load(), "one refresh for the unknown kid")
	requireAuthError(t, authz(sign(t, jwt.SigningMethodRS256, k3, "k3", claims)), 401, "Unknown key ID: k3")
	require.EqualValues(t, 3, srv.fetches.Load())

	// The periodic refresh drops k1 once the interval has passed.
	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k2, "k2", claims)))
	clk.add(601 * time.Second)
	requireAuthError(t, authz(sign(t, jwt.SigningMethodRS256, k1, "k1", claims)), 401, "Unknown key ID: k1")
	require.EqualValues(t, 4, srv.fetches.Load(), "the periodic refresh counts as the kid's one refresh")

	// A refresh that fails while resolving a kid is a 500; cached keys keep working.
	srv.fail.Store(true)
	requireAuthError(t, authz(sign(t, jwt.SigningMethodRS256, k3, "k3", claims)), 500, "Failed to fetch JWKS")
	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k2, "k2", claims)))
	clk.add(601 * time.Second)
	require.NoError(t, authz(sign(t, jwt.SigningMethodRS256, k2, "k2", claims)), "a failed periodic refresh keeps the cache")
}

func TestJWKSConcurrentUnknownKidsCoalesce(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t)
	k1 := testRSA(t, 0)
	srv.set(t, JWK{"k1", &k1.PublicKey})
	a, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_ALGORITHM": "RS256", "JWT_JWKS_URL": srv.URL}), discard)
	require.NoError(t, err)
	tok := sign(t, jwt.SigningMethodRS256, k1, "missing", jwt.MapClaims{"role": "admin"})
	errs := make([]error, 16)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = a.Authorize(request(tok), Read) })
	}
	wg.Wait()
	for _, err := range errs {
		requireAuthError(t, err, 401, "Unknown key ID: missing")
	}
	require.LessOrEqual(t, srv.fetches.Load(), int64(1+16))
}

func TestJWKSUnreachableAtStartup(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t)
	srv.fail.Store(true)
	k1 := testRSA(t, 0)
	a, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_ALGORITHM": "RS256", "JWT_JWKS_URL": srv.URL}), discard)
	require.NoError(t, err, "a JWKS failure at startup is tolerated")
	tok := sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"role": "admin"})
	_, err = a.Authorize(request(tok), Read)
	requireAuthError(t, err, 500, "Failed to fetch JWKS")
	srv.set(t, JWK{"k1", &k1.PublicKey})
	srv.fail.Store(false)
	_, err = a.Authorize(request(tok), Read)
	require.NoError(t, err)
}

func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	t.Parallel()
	keys, err := parseJWKS([]byte(`{"keys":[
		{"kty":"EC","kid":"ec","crv":"P-256","x":"AA","y":"AA"},
		{"kty":"RSA","kid":"enc","use":"enc","n":"AQAB","e":"AQAB"},
		{"kty":"RSA","kid":"bad","n":"!!","e":"AQAB"},
		{"kty":"OKP","kid":"x25519","crv":"X25519","x":"AA"},
		{"kty":"RSA","kid":"ok","n":"AQAB","e":"AQAB"}]}`))
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, "ok", keys[0].kid)
	_, err = parseJWKS([]byte(`{"nokeys":1}`))
	require.Error(t, err)
	_, err = parseJWKS([]byte(`[`))
	require.Error(t, err)
}

func FuzzParseHeader(f *testing.F) {
	f.Add("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.sig")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.")
	f.Add("a.b.c")
	f.Add("")
	f.Add("....")
	f.Add("eyJhbGciOm51bGx9.x")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeader(s)
		if err == nil && h.Alg == "" {
			t.Fatalf("accepted a header without alg: %q", s)
		}
		_ = bearer(s)
	})
}

// TestExpRequiredByDefault: without exp a token is refused unless JWT_REQUIRE_EXP=false; in auto mode
// with only a public key an HS256 token is a 401, not a 500; every verification failure is a 401.
func TestExpRequiredByDefault(t *testing.T) {
	t.Parallel()
	claims := func() jwt.MapClaims { return jwt.MapClaims{"sub": "s", "role": "admin"} }
	on, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_SECRET": testSecret}), discard)
	require.NoError(t, err)
	_, err = on.Authorize(request(signNoExp(t, jwt.SigningMethodHS256, []byte(testSecret), "", claims())), Read)
	requireAuthError(t, err, 401, "Token has expired: exp claim is required")
	_, err = on.Authorize(request(sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", claims())), Read)
	require.NoError(t, err)

	off, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_SECRET": testSecret, "JWT_REQUIRE_EXP": "false"}), discard)
	require.NoError(t, err)
	_, err = off.Authorize(request(signNoExp(t, jwt.SigningMethodHS256, []byte(testSecret), "", claims())), Read)
	require.NoError(t, err)

	rk := testRSA(t, 1)
	pubOnly, err := New(t.Context(), baseConfig(t, map[string]string{"JWT_ALGORITHM": "auto", "JWT_PUBLIC_KEY": pemOf(t, &rk.PublicKey)}), discard)
	require.NoError(t, err)
	_, err = pubOnly.Authorize(request(sign(t, jwt.SigningMethodHS256, []byte("guess"), "", claims())), Read)
	requireAuthError(t, err, 401, "Unsupported algorithm: HS256")
	_, err = pubOnly.Authorize(request(sign(t, jwt.SigningMethodRS256, rk, "", claims())), Read)
	require.NoError(t, err)
}

// TestVerifiedTokenCache: a token verified once is not verified again, but its exp (with the clock
// skew allowed) still ends it, and no entry outlives verifiedTTL.
func TestVerifiedTokenCache(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	a, err := newAuthenticator(t.Context(), baseConfig(t, map[string]string{"JWT_SECRET": testSecret, "JWT_CLOCK_SKEW": "5"}), discard, clk.now)
	require.NoError(t, err)
	now := clk.now().Unix()
	tok := sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", jwt.MapClaims{"sub": "s", "role": "read-only", "exp": now + 10})
	p, err := a.Authorize(request(tok), Read)
	require.NoError(t, err)
	require.Equal(t, "s", p.Subject)
	_, ok := a.verified.get(tok, clk.now())
	require.True(t, ok, "verified once, remembered")
	_, err = a.Authorize(request(tok), Admin)
	requireAuthError(t, err, 403, "Insufficient permissions")

	clk.add(14 * time.Second)
	_, err = a.Authorize(request(tok), Read)
	require.NoError(t, err, "within exp + skew")
	clk.add(2 * time.Second)
	_, err = a.Authorize(request(tok), Read)
	requireAuthError(t, err, 401, "Token has expired")

	long := sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", jwt.MapClaims{"sub": "s", "role": "read-only", "exp": now + 3600})
	_, err = a.Authorize(request(long), Read)
	require.NoError(t, err)
	clk.add(verifiedTTL)
	_, ok = a.verified.get(long, clk.now())
	require.False(t, ok, "an entry lives at most verifiedTTL")
}
