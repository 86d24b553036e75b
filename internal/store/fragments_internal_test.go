package store

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpandFragments: a placeholder line becomes its fragment, indented as the placeholder, and the
// fragment's section leaves the file; anything that would not expand exactly is refused.
func TestExpandFragments(t *testing.T) {
	t.Parallel()
	lines := func(ls ...string) string { return strings.Join(ls, "\n") }

	got, err := expandFragments(lines(
		"-- name: A :exec",
		"UPDATE t SET x = 1",
		"    {{where_key}}",
		"",
		"-- fragment: where_key",
		"-- why the key is probed so",
		"WHERE a = $1",
		"  AND b = $2",
		"",
		"-- name: B :exec",
		"DELETE FROM t",
		"{{where_key}}",
	))
	require.NoError(t, err)
	require.Equal(t, lines(
		"-- name: A :exec",
		"UPDATE t SET x = 1",
		"    -- why the key is probed so",
		"    WHERE a = $1",
		"      AND b = $2",
		"",
		"-- name: B :exec",
		"DELETE FROM t",
		"-- why the key is probed so",
		"WHERE a = $1",
		"  AND b = $2",
	), got)

	for text, want := range map[string]string{
		lines("-- name: A :exec", "SELECT 1", "{{nowhere}}"):                                                   "unknown fragment {{nowhere}}",
		lines("-- name: A :exec", "SELECT 1", "-- fragment: f", "WHERE true"):                                  "fragment f is never used",
		lines("-- name: A :exec", "{{f}}", "-- fragment: f", "SELECT 1", "-- fragment: f", "SELECT 2"):         "fragment f defined twice",
		lines("-- name: A :exec", "{{f}}", "-- fragment: f", ""):                                               "fragment f is empty",
		lines("-- name: A :exec", "SELECT 1 {{f}}", "{{f}}", "-- fragment: f", "WHERE true"):                   "placeholder not alone on its line",
		lines("-- name: A :exec", "{{f}}", "{{g}}", "-- fragment: f", "{{g}}", "-- fragment: g", "WHERE true"): "placeholder not alone on its line, or inside a fragment",
	} {
		_, err := expandFragments(text)
		require.ErrorContains(t, err, want, "%s", text)
	}
}

// TestQueryFilesFragments: the loaded queries hold no fragment syntax, and the files do use fragments
// (a loader that skipped them would leave the placeholders in the SQL).
func TestQueryFilesFragments(t *testing.T) {
	t.Parallel()
	for name, sql := range queries {
		require.NotContains(t, sql, "{{", "query %s", name)
	}
	b, err := queryFiles.ReadFile("queries/ack.sql")
	require.NoError(t, err)
	require.Contains(t, string(b), fragmentHeader)
	require.Contains(t, q("AckCompletions"), "DELETE FROM pending_partitions pp")
}
