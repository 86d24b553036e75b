package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkers: four push transactions and one ack transaction at a time by default (docs/decisions.md
// "Push workers", "One ack worker"); PUSH_WORKERS and ACK_WORKERS set other counts, and one below
// 1 is refused.
func TestWorkers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		def  int
		get  func(Config) int
	}{
		{"PUSH_WORKERS", 4, func(c Config) int { return c.PushWorkers }},
		{"ACK_WORKERS", 1, func(c Config) int { return c.AckWorkers }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadAuthEnv(nil)
			require.NoError(t, err)
			require.Equal(t, tc.def, tc.get(c))

			c, err = loadAuthEnv(map[string]string{tc.name: "6"})
			require.NoError(t, err)
			require.Equal(t, 6, tc.get(c))

			for _, v := range []string{"0", "-1", "two"} {
				_, err := loadAuthEnv(map[string]string{tc.name: v})
				require.ErrorContains(t, err, tc.name)
			}
		})
	}
}
