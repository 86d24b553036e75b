package engine

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestLeaseMemoBound: the memo holds at most max transaction ids; a lease that would pass them starts it
// over, one larger than the whole memo is not kept, and take forgets what it returns.
func TestLeaseMemoBound(t *testing.T) {
	t.Parallel()
	m := newLeaseMemo(5)
	lease := func(n int) memoLease { return memoLease{txids: make([]string, n)} }
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	m.put(a, lease(2))
	m.put(b, lease(3))
	require.Equal(t, 5, m.items)

	m.put(c, lease(1)) // would pass 5: everything before it is forgotten
	_, ok := m.take(a)
	require.False(t, ok)
	l, ok := m.take(c)
	require.True(t, ok)
	require.Len(t, l.txids, 1)
	_, ok = m.take(c)
	require.False(t, ok, "taken once")
	require.Zero(t, m.items)

	m.put(a, lease(6))
	m.put(b, lease(0))
	require.Empty(t, m.m, "a lease larger than the memo, and an empty one, are not kept")
}
