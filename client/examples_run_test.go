package client_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExamplesRun runs every program under examples/ against a fresh broker, so the examples stay
// runnable as the SDK evolves.
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go") // go test runs with its own toolchain on PATH
	require.NoError(t, err)
	for _, name := range []string{"produce-consume", "fanout", "pipeline", "streams-windowed", "streams-ratelimit"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupBroker(t)
			cmd := exec.CommandContext(t.Context(), gobin, "run", "./"+filepath.Join("examples", name))
			cmd.Dir = ".."
			cmd.Env = append(cmd.Environ(), "QUEEN_URL="+b)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			t.Logf("%s", out)
		})
	}
}
