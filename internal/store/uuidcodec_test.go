package store_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestUUIDParams: uuid.UUID parameters (plain, pointer, nil pointer, slice) reach PostgreSQL as the
// same uuids through the store's connections, in the binary form rather than through their text.
func TestUUIDParams(t *testing.T) {
	t.Parallel()
	_, conn := privateConn(t)

	a, b := uuid.New(), uuid.New()
	var nilID *uuid.UUID
	var text, list string
	var isNull bool
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT $1::uuid::text, $2::uuid[]::text, $3::uuid IS NULL`,
		a, []uuid.UUID{a, b}, nilID).Scan(&text, &list, &isNull))
	require.Equal(t, a.String(), text)
	require.Equal(t, "{"+a.String()+","+b.String()+"}", list)
	require.True(t, isNull)
	var ptext string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT $1::uuid::text`, &b).Scan(&ptext))
	require.Equal(t, b.String(), ptext)

	plan := conn.TypeMap().PlanEncode(2950 /* uuid */, 1 /* binary */, a)
	require.NotNil(t, plan)
	require.NotContains(t, fmt.Sprintf("%T", plan), "DriverValuer", "uuid.UUID must not go through its text form")
}
