package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClientErrorsSpeakTheAPI: a 400 names the field and the rule in the API's terms, never a Go type,
// and every name field has the same limit (255 bytes), stream query names included.
func TestClientErrorsSpeakTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	long := strings.Repeat("n", 5000)
	for _, tc := range []struct {
		name, path string
		body       any
		want       string
	}{
		{"configure option of the wrong type", "/api/v1/configure", `{"queue":"q","options":{"leaseTime":"60"}}`,
			"bad body: options.leaseTime must be an integer from -2147483648 to 2147483647, got a string"},
		{"configure option out of range", "/api/v1/configure", `{"queue":"q","options":{"retryLimit":99999999999}}`,
			"bad body: options.retryLimit must be an integer from -2147483648 to 2147483647, got 99999999999"},
		{"configure option not a boolean", "/api/v1/configure", `{"queue":"q","options":{"encryptionEnabled":"yes"}}`,
			"bad body: options.encryptionEnabled must be true or false, got a string"},
		{"stream query name too long", "/streams/v1/queries", map[string]any{"name": long, "source_queue": "s", "config_hash": "h"},
			"bad body: name longer than 255 bytes"},
		{"stream source queue too long", "/streams/v1/queries", map[string]any{"name": "n", "source_queue": long, "config_hash": "h"},
			"bad body: source_queue longer than 255 bytes"},
		{"queue name too long", "/api/v1/push", map[string]any{"items": []map[string]any{{"queue": long, "payload": 1}}},
			"bad body: items[0].queue: longer than 255 bytes"},
	} {
		r := b.call(t, t.Context(), http.MethodPost, tc.path, tc.body)
		msg := requireError(t, r, http.StatusBadRequest)
		require.Equal(t, tc.want, msg, tc.name)
		require.NotContains(t, msg, "Go ", tc.name)
	}
}
