package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzAuthorizeToken feeds arbitrary Authorization headers to authenticators in each algorithm mode:
// every answer is a pass or an *Error with 401 or 403, never a panic or a 5xx.
func FuzzAuthorizeToken(f *testing.F) {
	rk := testRSA(f, 0)
	now := time.Now()
	claims := jwt.MapClaims{"sub": "s", "role": "admin", "exp": now.Add(time.Hour).Unix()}
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testSecret))
	rs, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(rk)
	for _, s := range []string{"Bearer " + hs, "Bearer " + rs, hs + "x", "Bearer a.b.c", "bearer", "",
		"Bearer eyJhbGciOiJub25lIn0.e30.", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJleHAiOiJ4In0.x"} {
		f.Add(s)
	}
	var auths []*Authenticator
	for _, env := range []map[string]string{
		{"JWT_SECRET": testSecret},
		{"JWT_ALGORITHM": "auto", "JWT_PUBLIC_KEY": pemOf(f, &rk.PublicKey)},
		{"JWT_ALGORITHM": "auto", "JWT_SECRET": testSecret, "JWT_PUBLIC_KEY": pemOf(f, &rk.PublicKey), "JWT_REQUIRE_EXP": "false"},
		{"JWT_ALGORITHM": "RS256", "JWT_PUBLIC_KEY": pemOf(f, &rk.PublicKey), "JWT_ISSUER": "i", "JWT_AUDIENCE": "a"},
	} {
		a, err := New(f.Context(), baseConfig(f, env), discard)
		if err != nil {
			f.Fatal(err)
		}
		auths = append(auths, a)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for _, a := range auths {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/resources/queues", nil)
			r.Header["Authorization"] = []string{header}
			_, err := a.Authorize(r, Read)
			if err == nil {
				continue
			}
			var ae *Error
			if !errors.As(err, &ae) || (ae.Status != 401 && ae.Status != 403) {
				t.Fatalf("header %q: %v", header, err)
			}
		}
	})
}
