package version

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	t.Parallel()
	s := String("queen-proxy")
	require.True(t, strings.HasPrefix(s, "queen-proxy "+Release+" (commit "), s)
	require.True(t, strings.HasSuffix(s, ", "+runtime.Version()+")"), s)
	in := Get()
	require.NotEmpty(t, in.Commit)
	require.Equal(t, runtime.Version(), in.Go)
}
