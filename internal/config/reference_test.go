package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigurationReferenceIsCurrent fails when docs/configuration.md no longer matches the variable
// table: run `make gen`.
func TestConfigurationReferenceIsCurrent(t *testing.T) {
	have, err := os.ReadFile("../../" + ReferencePath)
	require.NoError(t, err, "docs/configuration.md is missing: run make gen")
	require.Equal(t, string(Reference()), string(have), "docs/configuration.md is stale: run make gen")
	for _, v := range Vars {
		require.Contains(t, string(have), "| `"+v.Name+"` |")
		require.NotEmpty(t, v.Doc, v.Name)
	}
	require.True(t, strings.Contains(Usage(), ReferencePath))
}
