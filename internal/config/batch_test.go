package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMaxBatchItems(t *testing.T) {
	t.Parallel()
	load := func(v string) (Config, error) {
		return Load(func(k string) string {
			return map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "QUEEN_MAX_BATCH_ITEMS": v}[k]
		})
	}
	c, err := load("")
	require.NoError(t, err)
	require.Equal(t, MaxBatchItemsCeiling, c.MaxBatchItems, "the default is the ceiling")
	c, err = load("500")
	require.NoError(t, err)
	require.Equal(t, 500, c.MaxBatchItems)
	for _, bad := range []string{"0", "10001", "many"} {
		_, err = load(bad)
		require.ErrorContains(t, err, "QUEEN_MAX_BATCH_ITEMS", bad)
	}
}
