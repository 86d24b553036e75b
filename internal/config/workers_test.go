package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPushWorkers: two push transactions at a time by default (docs/decisions.md "Two push
// workers"); PUSH_WORKERS sets another count, and one below 1 is refused.
func TestPushWorkers(t *testing.T) {
	t.Parallel()
	c, err := loadAuthEnv(nil)
	require.NoError(t, err)
	require.Equal(t, 2, c.PushWorkers)

	c, err = loadAuthEnv(map[string]string{"PUSH_WORKERS": "6"})
	require.NoError(t, err)
	require.Equal(t, 6, c.PushWorkers)

	for _, v := range []string{"0", "-1", "two"} {
		_, err := loadAuthEnv(map[string]string{"PUSH_WORKERS": v})
		require.ErrorContains(t, err, "PUSH_WORKERS")
	}
}
