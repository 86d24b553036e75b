package streams

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWireGoldenStateRows keeps stateRow in step with the broker: the rows of the golden answer of
// /streams/v1/state/get (internal/httpapi TestWireGolden writes it) decode strictly into it, and
// every field it declares is sent.
func TestWireGoldenStateRows(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wire", "streams-state.json"))
	require.NoError(t, err)
	var res struct {
		Success bool              `json:"success"`
		Rows    []json.RawMessage `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&res))
	require.True(t, res.Success)
	require.NotEmpty(t, res.Rows)
	for _, r := range res.Rows {
		var row stateRow
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&row), "the broker sends a field stateRow does not declare: %s", r)
		var sent map[string]any
		require.NoError(t, json.Unmarshal(r, &sent))
		for _, k := range []string{"key", "value", "updated_at"} {
			require.Contains(t, sent, k, "stateRow reads %q, which the broker does not send", k)
		}
	}
}
