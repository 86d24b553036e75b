package httpapi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/httpapi"
)

func TestReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference.md"))
	require.NoError(t, err, "docs/reference.md is missing: run `make gen`")
	require.Equal(t, string(httpapi.Reference()), string(got), "docs/reference.md is stale: run `make gen`")
}
