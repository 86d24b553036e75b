package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOptStringMatchesTheDecoder: the shortcut for strings without escapes gives what json.Unmarshal
// gives, and leaves every other literal to it.
func TestOptStringMatchesTheDecoder(t *testing.T) {
	for _, lit := range []string{`""`, `"orders"`, `"a b/c-d_e.f"`, `"héllo wörld ✓"`, `"a\"b"`, `"a\\b"`,
		`"\u00e9"`, `"tab\there"`, "\"raw\ttab\"", "\"bad\xffutf8\"", `"x"`, `"0198f1e2-7c3a-7b1e-9a41-2f0c1d2e3f40"`} {
		got, ok := optString(json.RawMessage(lit))
		var want string
		err := json.Unmarshal([]byte(lit), &want)
		require.Equal(t, err == nil, ok, lit)
		if ok {
			require.Equal(t, want, got, lit)
		}
	}
	for _, lit := range []string{`1`, `{}`, `[]`, `true`} {
		_, ok := optString(json.RawMessage(lit))
		require.False(t, ok, lit)
	}
	s, ok := optString(json.RawMessage(`null`))
	require.True(t, ok)
	require.Empty(t, s)
}
