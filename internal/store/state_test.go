package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestState covers queries/state.sql: the shared flags of system_state.
func TestState(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("StateSet+StateGet", func(t *testing.T) {
		a, b, never := uniq("flag"), uniq("flag"), uniq("flag")
		require.NoError(t, st.SetState(ctx, a, true))
		require.NoError(t, st.SetState(ctx, b, true))
		require.NoError(t, st.SetState(ctx, b, false)) // an upsert
		got, err := st.States(ctx, a, b, never)
		require.NoError(t, err)
		require.Equal(t, map[string]bool{a: true, b: false}, got, "a flag never set is absent (false)")
		got, err = st.States(ctx)
		require.NoError(t, err)
		require.Empty(t, got)
	})
}
