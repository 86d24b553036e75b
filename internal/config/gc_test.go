package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCollectorSettings: by default the collector runs at 200 % under a 40 MiB soft limit
// (docs/decisions.md "Collector settings"); a limit of 0 means none, and a percent of 0 (collect
// all the time) or a negative limit are refused.
func TestCollectorSettings(t *testing.T) {
	t.Parallel()
	c, err := loadAuthEnv(nil)
	require.NoError(t, err)
	require.Equal(t, 200, c.GCPercent)
	require.Equal(t, int64(40<<20), c.MemoryLimit)

	c, err = loadAuthEnv(map[string]string{"QUEEN_GC_PERCENT": "100", "QUEEN_MEMORY_LIMIT_BYTES": "0"})
	require.NoError(t, err)
	require.Equal(t, 100, c.GCPercent)
	require.Zero(t, c.MemoryLimit)

	for k, v := range map[string]string{"QUEEN_GC_PERCENT": "0", "QUEEN_MEMORY_LIMIT_BYTES": "-1"} {
		_, err := loadAuthEnv(map[string]string{k: v})
		require.ErrorContains(t, err, k)
	}
}
