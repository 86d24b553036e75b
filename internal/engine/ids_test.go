package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// Message ids are RFC 9562 version 7, carry the clock's millisecond, and increase strictly within a
// batch and across batches of any size.
func TestNewMessageIDsAreIncreasingV7(t *testing.T) {
	before := time.Now().UnixMilli()
	var all []uuid.UUID
	for _, n := range []int{1, 3, 64, 65, 200, 1} {
		ids := make([]uuid.UUID, n)
		newMessageIDs(ids)
		all = append(all, ids...)
	}
	seen := map[uuid.UUID]bool{}
	for i, id := range all {
		require.Equal(t, uuid.Version(7), id.Version(), id.String())
		require.Equal(t, uuid.RFC4122, id.Variant(), id.String())
		sec, nsec := id.Time().UnixTime()
		ms := sec*1000 + nsec/1e6
		require.GreaterOrEqual(t, ms, before, "ids carry the clock's millisecond (or run ahead of it, 4096 per ms)")
		if i > 0 {
			require.Equal(t, 1, bytes.Compare(id[:], all[i-1][:]), "%s after %s", id, all[i-1])
		}
		require.False(t, seen[id])
		seen[id] = true
	}
	// The random bits differ from id to id.
	require.NotEqual(t, all[0][9:], all[1][9:])
}

// rowIDTexts writes every id as uuid.UUID.String does.
func TestRowIDTexts(t *testing.T) {
	rows := make([]store.PushRow, 70)
	ids := make([]uuid.UUID, len(rows))
	newMessageIDs(ids)
	for i := range rows {
		rows[i].ID = ids[i]
	}
	rows[3].ID = uuid.Nil
	rows[4].ID = uuid.Max
	all := rowIDTexts(rows)
	for i := range rows {
		require.Equal(t, rows[i].ID.String(), idText(all, i))
	}
	require.Empty(t, rowIDTexts(nil))
}
