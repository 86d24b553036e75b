package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestLease covers queries/lease.sql: extending the leases of a pop.
func TestLease(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	expiry := func(t *testing.T, p uuid.UUID) *time.Time {
		return scalar[*time.Time](t, st, `SELECT lease_expires_at FROM partition_consumers WHERE partition_id = $1`, p)
	}

	t.Run("LeaseExtend+LeaseExtensionApply", func(t *testing.T) {
		q := uniq("lease")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		_, lease := pop(t, st, q, store.QueueMode, "", 10)
		before := expiry(t, p)
		out, err := st.ExtendLease(ctx, lease, time.Hour)
		require.NoError(t, err)
		require.Len(t, out, 1)
		require.Equal(t, p, out[0].PartitionID)
		require.True(t, out[0].Live)
		require.True(t, out[0].ExpiresAt.After(before.Add(50*time.Minute)))
		after := expiry(t, p)
		require.True(t, after.Equal(*out[0].ExpiresAt), "the stored expiry is the one reported")
		// Never shortened.
		out, err = st.ExtendLease(ctx, lease, time.Second)
		require.NoError(t, err)
		require.True(t, out[0].ExpiresAt.Equal(*after))
		require.True(t, expiry(t, p).Equal(*after))
	})

	t.Run("LeaseExtend/unknown", func(t *testing.T) {
		out, err := st.ExtendLease(ctx, uuid.Must(uuid.NewV7()), time.Hour)
		require.NoError(t, err)
		require.Empty(t, out)
	})

	t.Run("LeaseExtend/expired is not revived", func(t *testing.T) {
		q := uniq("lease-expired")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		_, lease := pop(t, st, q, store.QueueMode, "", 10)
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1`, p)
		out, err := st.ExtendLease(ctx, lease, time.Hour)
		require.NoError(t, err)
		require.Equal(t, []store.LeaseExtension{{PartitionID: p}}, out)
		require.True(t, expiry(t, p).Before(time.Now()))
	})
}
