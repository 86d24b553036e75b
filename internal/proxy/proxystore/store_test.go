package proxystore

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestQueries prepares every named query against the migrated schema and fails on one that no Go code
// uses (style rule 3).
func TestQueries(t *testing.T) {
	t.Parallel()
	st, err := Open(t.Context(), testenv.NewDatabase(t), "")
	require.NoError(t, err)
	defer st.Close()

	var src strings.Builder
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`q\("(\w+)"\)`).FindAllStringSubmatch(src.String(), -1) {
		used[m[1]] = true
	}
	conn, err := st.pool.Acquire(t.Context())
	require.NoError(t, err)
	defer conn.Release()
	for name, sql := range queries {
		require.True(t, used[name], "query %s is not used", name)
		_, err := conn.Conn().Prepare(t.Context(), "", sql)
		require.NoError(t, err, "query %s", name)
	}
	for name := range used {
		_, ok := queries[name]
		require.True(t, ok, "Go code uses unknown query %s", name)
	}
}

func TestNormalizeHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Acme.Queen.Test:8443": "acme.queen.test",
		"acme.queen.test.":     "acme.queen.test",
		"[::1]:6634":           "[::1]",
		"127.0.0.1":            "127.0.0.1",
	} {
		require.Equal(t, want, NormalizeHost(in))
	}
}
