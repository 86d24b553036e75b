package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestPushLarge pushes rows whose payloads add up to several MiB (MessageCopy streams them a row at a
// time): per partition the rows are numbered in slice order, and a transactionId repeated further on
// is a duplicate of the first row. Both the store's own transaction and an explicit one are covered.
func TestPushLarge(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	payload := []byte(`"` + strings.Repeat("x", 3<<19) + `"`) // 1.5 MiB, more than the driver's copy buffer

	for _, mode := range []string{"store", "tx"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			queue := uniq("seg-" + mode)
			ids, err := st.EnsurePartitions(ctx, []store.PartitionKey{{Queue: queue, Partition: "a"}, {Queue: queue, Partition: "b"}})
			require.NoError(t, err)
			pa, pb := ids[store.PartitionKey{Queue: queue, Partition: "a"}], ids[store.PartitionKey{Queue: queue, Partition: "b"}]
			row := func(p uuid.UUID, tx string) store.PushRow {
				return store.PushRow{PartitionID: p, TransactionID: tx, ID: uuid.Must(uuid.NewV7()), Payload: payload}
			}
			rows := []store.PushRow{row(pa, "a1"), row(pb, "b1"), row(pa, "a2"), row(pb, "b2"), row(pa, "a1"),
				row(pa, "a3"), row(pb, "b1"), row(pb, "b3")}
			push := func() ([]store.PushOutcome, error) {
				if mode == "store" {
					return st.Push(ctx, rows)
				}
				tx, err := st.Begin(ctx)
				require.NoError(t, err)
				out, err := tx.Push(ctx, rows)
				if err != nil {
					_ = tx.Rollback(context.WithoutCancel(ctx))
					return nil, err
				}
				return out, tx.Commit(ctx)
			}
			out, err := push()
			require.NoError(t, err)
			for i, o := range out {
				dup := i == 4 || i == 6
				require.Equal(t, !dup, o.Inserted, "row %d", i)
			}
			require.Equal(t, rows[0].ID, out[4].ExistingID)
			require.Equal(t, rows[1].ID, out[6].ExistingID)

			conn, err := store.PoolOf(st).Acquire(ctx)
			require.NoError(t, err)
			defer conn.Release()
			for p, want := range map[uuid.UUID]string{pa: "a1 a2 a3", pb: "b1 b2 b3"} {
				r, err := conn.Query(ctx, `SELECT transaction_id, seq FROM messages WHERE partition_id = $1 ORDER BY seq`, p)
				require.NoError(t, err)
				var got []string
				for n := 1; r.Next(); n++ {
					var tx string
					var seq int64
					require.NoError(t, r.Scan(&tx, &seq))
					require.Equal(t, int64(n), seq, "seq of %s", tx)
					got = append(got, tx)
				}
				require.NoError(t, r.Err())
				require.Equal(t, want, strings.Join(got, " "), fmt.Sprint("partition ", p))
			}
		})
	}
}
