package store_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestLease covers queries/lease.sql: extending and releasing the leases of a pop.
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

	t.Run("LeaseExtend/multi-partition", func(t *testing.T) {
		// One pop claims three partitions under one lease, found again from the id alone: the head (the
		// lowest partition id) lists the others.
		parts, lease := multiLease(t, st, uniq("lease-multi"))
		require.Equal(t, parts[0][:8], lease[:8], "named after the head")
		require.Equal(t, parts, scalar[[]uuid.UUID](t, st, `SELECT lease_partitions FROM partition_consumers WHERE partition_id = $1`, parts[0]))
		out, err := st.ExtendLease(ctx, lease, time.Hour)
		require.NoError(t, err)
		require.Len(t, out, 3)
		for i, e := range out {
			require.Equal(t, parts[i], e.PartitionID)
			require.True(t, e.Live)
			require.True(t, expiry(t, parts[i]).Equal(*e.ExpiresAt))
			require.True(t, e.ExpiresAt.After(time.Now().Add(50*time.Minute)))
		}
		// A partition that has since been claimed under another lease is no longer this one's.
		exec(t, st, `UPDATE partition_consumers SET lease_id = gen_random_uuid() WHERE partition_id = $1`, parts[2])
		out, err = st.ExtendLease(ctx, lease, time.Hour)
		require.NoError(t, err)
		require.Len(t, out, 2)
	})

	t.Run("LeaseExtend/unknown", func(t *testing.T) {
		out, err := st.ExtendLease(ctx, uuid.Must(uuid.NewV7()), time.Hour)
		require.NoError(t, err)
		require.Empty(t, out)
	})

	t.Run("LeaseExtend+LeaseReleaseApply", func(t *testing.T) {
		// A multi-partition lease ends on every partition still held under it; the cursor stays, and a
		// pop claims the same messages again at once.
		q := uniq("lease-release")
		parts, lease := multiLease(t, st, q)
		// One partition has since been claimed under another lease: it is not this lease's to end.
		other := uuid.Must(uuid.NewV7())
		exec(t, st, `UPDATE partition_consumers SET lease_id = $2 WHERE partition_id = $1`, parts[2], other)
		released, err := st.ReleaseLease(ctx, lease)
		require.NoError(t, err)
		require.ElementsMatch(t, parts[:2], released)
		for _, p := range parts[:2] {
			require.Nil(t, expiry(t, p))
			require.Zero(t, scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1`, p))
		}
		require.NotNil(t, expiry(t, parts[2]))
		again, err := st.Pop(ctx, store.PopParams{Queue: q, Group: store.QueueMode, MaxPartitions: 3, Batch: 10, LeaseID: uuid.Must(uuid.NewV7())})
		require.NoError(t, err)
		require.Len(t, again, 2, "the released partitions are claimable at once")
		// Released twice, or unknown: nothing to end.
		released, err = st.ReleaseLease(ctx, lease)
		require.NoError(t, err)
		require.Empty(t, released)
		released, err = st.ReleaseLease(ctx, uuid.Must(uuid.NewV7()))
		require.NoError(t, err)
		require.Empty(t, released)
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

// multiLease has one pop claim three partitions of a new queue q (one message each) under one lease;
// parts are in id order.
func multiLease(t *testing.T, st *store.Store, q string) (parts []uuid.UUID, lease uuid.UUID) {
	t.Helper()
	for i := range 3 {
		p := partition(t, st, q, fmt.Sprint("p", i))
		push(t, st, p, "a")
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	got, err := st.Pop(t.Context(), store.PopParams{Queue: q, Group: store.QueueMode, MaxPartitions: 3, Batch: 10, LeaseID: uuid.Must(uuid.NewV7())})
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, m := range got {
		require.Equal(t, got[0].LeaseID, m.LeaseID, "one lease for the pop")
	}
	return parts, got[0].LeaseID
}

// TestLeaseExtendPlan: without an index on lease_id, LeaseExtend finds a lease through the primary key of
// partition_consumers by its head partition's id prefix, and LeaseExtensionApply and LeaseReleaseApply update the rows it found
// through the same key, in a custom plan and in the generic one; never by a walk of a whole table or index (scans are switched off so that the plan shows the index it would use at
// any size).
func TestLeaseExtendPlan(t *testing.T) {
	t.Parallel()
	st, c := privateConn(t)
	q := uniq("lease-plan")
	p := partition(t, st, q, "Default")
	push(t, st, p, "a")
	_, lease := pop(t, st, q, store.QueueMode, "", 10)
	_, err := c.Exec(t.Context(), `ANALYZE`)
	require.NoError(t, err)
	leading := leadingColumns(t, c)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		tx, err := c.Begin(t.Context())
		require.NoError(t, err)
		_, err = tx.Exec(t.Context(), `SELECT set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', $1, true)`, mode)
		require.NoError(t, err)
		_, err = tx.Prepare(t.Context(), "LeaseExtend", store.Queries["LeaseExtend"])
		require.NoError(t, err)
		plan := explainText(t, tx, `EXPLAIN (COSTS OFF) EXECUTE "LeaseExtend"('`+lease.String()+`', 60, NULL)`, "LeaseExtend")
		require.Contains(t, plan, "partition_consumers_pkey", "%s:\n%s", mode, plan)
		require.NotContains(t, plan, "Seq Scan", "%s:\n%s", mode, plan)
		require.Empty(t, laterColumnScans(plan, leading), "%s:\n%s", mode, plan)
		_, err = tx.Prepare(t.Context(), "LeaseExtensionApply", store.Queries["LeaseExtensionApply"])
		require.NoError(t, err)
		plan = explainText(t, tx, `EXPLAIN (COSTS OFF) EXECUTE "LeaseExtensionApply"('`+lease.String()+`', 60, NULL, ARRAY['`+p.String()+`'::uuid])`, "LeaseExtensionApply")
		require.Contains(t, plan, "partition_consumers_pkey", "%s:\n%s", mode, plan)
		require.Empty(t, laterColumnScans(plan, leading), "%s:\n%s", mode, plan)
		_, err = tx.Prepare(t.Context(), "LeaseReleaseApply", store.Queries["LeaseReleaseApply"])
		require.NoError(t, err)
		plan = explainText(t, tx, `EXPLAIN (COSTS OFF) EXECUTE "LeaseReleaseApply"('`+lease.String()+`', NULL, ARRAY['`+p.String()+`'::uuid])`, "LeaseReleaseApply")
		require.Contains(t, plan, "partition_consumers_pkey", "%s:\n%s", mode, plan)
		require.Empty(t, laterColumnScans(plan, leading), "%s:\n%s", mode, plan)
		require.NoError(t, tx.Rollback(t.Context()))
		require.NoError(t, c.Deallocate(t.Context(), "LeaseExtend"))
		require.NoError(t, c.Deallocate(t.Context(), "LeaseExtensionApply"))
		require.NoError(t, c.Deallocate(t.Context(), "LeaseReleaseApply"))
	}
}
