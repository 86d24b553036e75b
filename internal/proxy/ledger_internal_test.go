package proxy

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestLedgerPushesWaitForTheBlockInFlight: pushes that find the allowance short while a block is being
// reserved take theirs from that block, so a burst costs the usage row one reservation, not one each.
func TestLedgerPushesWaitForTheBlockInFlight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := proxystore.Open(ctx, testenv.NewDatabase(t), "")
	require.NoError(t, err)
	t.Cleanup(st.Close)
	_, err = CreatePlan(ctx, st, proxystore.Plan{Name: "metered", MaxPayloadBytes: 1 << 20, MaxBatchItems: 100, MonthlyMessageQuota: 1_000_000})
	require.NoError(t, err)
	_, err = CreateCluster(ctx, st, proxystore.CreateClusterParams{Name: "acme", Hosts: []string{"acme.test"}, UpstreamURL: "http://127.0.0.1:1", Plan: "metered"})
	require.NoError(t, err)
	c, err := st.ClusterByHost(ctx, "acme.test")
	require.NoError(t, err)
	month := proxystore.Month(time.Now())

	const block, pushes, per = 1000, 16, 10
	l := newLedger(st, slog.New(slog.DiscardHandler), block, time.Hour)
	// The first reservation learns how much is left; from then on each one takes a block ahead.
	ok, _, err := l.reserve(ctx, c, month, per, 1_000_000)
	require.NoError(t, err)
	require.True(t, ok)
	l.books[bookKey{c.ID, month}].allowance = 0
	before, err := st.MonthlyMessages(ctx, c.ID, month)
	require.NoError(t, err)

	var wg sync.WaitGroup
	start := make(chan struct{})
	for range pushes {
		wg.Go(func() {
			<-start
			ok, _, err := l.reserve(ctx, c, month, per, 1_000_000)
			require.NoError(t, err)
			require.True(t, ok)
		})
	}
	close(start)
	wg.Wait()
	after, err := st.MonthlyMessages(ctx, c.ID, month)
	require.NoError(t, err)
	require.Equal(t, int64(per+block), after-before, "one reservation: the first push's own and a block, from which the others took theirs")
	require.Equal(t, int64(block-(pushes-1)*per), l.books[bookKey{c.ID, month}].allowance)
}
