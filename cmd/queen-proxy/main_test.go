package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/version"
)

// TestMain lets a test run this binary's main: the test binary re-executes itself with
// QUEEN_PROXY_TEST_MAIN=1 and the command line under test.
func TestMain(m *testing.M) {
	if os.Getenv("QUEEN_PROXY_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestVersion: both spellings print the shared version line and need no configuration at all.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], arg)
		cmd.Env = []string{"QUEEN_PROXY_TEST_MAIN=1"} // no QUEEN_PROXY_DATABASE_URL: version must not need it
		out, err := cmd.Output()
		require.NoError(t, err, arg)
		require.Equal(t, version.String("queen-proxy")+"\n", string(out), arg)
	}
}
