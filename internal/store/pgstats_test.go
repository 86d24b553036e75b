package store_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPgStats covers queries/pgstats.sql: the database health sections of the dashboard, each scoped
// to the store's database and schema.
func TestPgStats(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	got, err := st.Analytics().PostgresStats(ctx)
	require.NoError(t, err)
	section := func(t *testing.T, key string, into any) {
		t.Helper()
		require.NoError(t, json.Unmarshal(got[key], into), "%s: %s", key, got[key])
	}
	dbName := scalar[string](t, st, `SELECT current_database()`)

	t.Run("PgDatabase", func(t *testing.T) {
		var d struct {
			Name      string `json:"name"`
			SizeBytes int64  `json:"sizeBytes"`
			Version   string `json:"version"`
		}
		section(t, "database", &d)
		require.Equal(t, dbName, d.Name)
		require.Positive(t, d.SizeBytes)
		require.NotEmpty(t, d.Version)
	})

	tables := func(t *testing.T, key, field string) []string {
		var rows []map[string]any
		section(t, key, &rows)
		var out []string
		for _, r := range rows {
			out = append(out, r[field].(string))
		}
		return out
	}
	t.Run("PgTableCache", func(t *testing.T) {
		require.Contains(t, tables(t, "tableCache", "table"), "messages")
	})
	t.Run("PgIndexCache", func(t *testing.T) {
		idx := tables(t, "indexCache", "index")
		require.Contains(t, idx, "messages_pkey")
	})
	t.Run("PgTables", func(t *testing.T) {
		ts := tables(t, "tables", "table")
		require.Contains(t, ts, "partitions")
		require.NotContains(t, ts, "state", "the streams schema is not the broker's")
	})
	t.Run("PgActivity", func(t *testing.T) {
		var rows []map[string]any
		section(t, "activeQueries", &rows) // other sessions only: a JSON array, empty or not
		for _, r := range rows {
			require.Contains(t, r, "query")
		}
	})
	t.Run("PgSettings", func(t *testing.T) {
		var s map[string]string
		section(t, "bufferConfig", &s)
		require.Contains(t, s, "shared_buffers")
		require.Contains(t, s, "max_connections")
		require.Len(t, s, 8)
	})
}
