package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// orphans counts messages whose partition no longer exists (messages have no foreign key to
// partitions since 0010; the deleting statements must take them along).
func orphans(t *testing.T, st *store.Store) int64 {
	var n int64
	require.NoError(t, store.PoolOf(st).QueryRow(t.Context(),
		`SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM partitions p WHERE p.id = m.partition_id)`).Scan(&n))
	return n
}

// racePushes pushes batches to the partitions from several goroutines until stop is closed, and closes
// started after the first batch was stored. Pushes into a deleted partition store nothing.
func racePushes(t *testing.T, st *store.Store, parts []uuid.UUID, started chan<- struct{}, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	var once sync.Once
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				rows := make([]store.PushRow, 20)
				for i := range rows {
					rows[i] = store.PushRow{PartitionID: parts[(w+i)%len(parts)], TransactionID: fmt.Sprintf("w%d-%d-%d", w, n, i),
						ID: uuid.Must(uuid.NewV7()), Payload: []byte(`{"n":1}`), Minted: i%2 == 0}
				}
				_, err := st.Push(context.WithoutCancel(t.Context()), rows)
				once.Do(func() { close(started) })
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	return &wg
}

// TestQueueDeleteRacingPushesLeavesNoOrphans deletes queues while pushes into their partitions are in
// flight: a push either commits before the delete takes its partitions (and the delete removes its
// messages) or finds the partitions gone and stores nothing. No message may outlive its partition.
func TestQueueDeleteRacingPushesLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	raceRounds(t, "race", []string{"a", "b", "c"}, func(ctx context.Context, st *store.Store, queue string, started <-chan struct{}) {
		<-started
		deleted, err := st.Queues().DeleteQueue(ctx, queue)
		require.NoError(t, err)
		require.True(t, deleted)
	})
}

// TestPartitionCleanupRacingPushesLeavesNoOrphans runs the retention's partition cleanup (every
// partition without messages is old enough) while pushes store into the partitions: a partition that
// received messages meanwhile stays, one that is deleted takes nothing with it that a push stored.
// The pushes start with a third, empty partition the cleanup may take at any moment.
func TestPartitionCleanupRacingPushesLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	raceRounds(t, "cleanup", []string{"a", "b", "empty"}, func(ctx context.Context, st *store.Store, _ string, started <-chan struct{}) {
		cleanup := func() {
			_, err := st.Jobs().RunRetention(ctx, store.RetentionParams{Now: time.Now().Add(48 * time.Hour), BatchSize: 1000, MaxRounds: 5,
				PartitionCleanupDays: 1, MetricsRetentionDays: 30})
			require.NoError(t, err)
		}
		cleanup()
		<-started
		cleanup()
	})
}

// TestRetentionRacingPushesDoesNotDeadlock deletes expired messages from partitions that pushes of
// several partitions each keep locking (in id order): the retention statements must take the partitions
// in the same order, or one of the two deadlocks and fails.
func TestRetentionRacingPushesDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	raceRounds(t, "expire", []string{"a", "b", "c", "d", "e", "f", "g", "h"}, func(ctx context.Context, st *store.Store, queue string, started <-chan struct{}) {
		_, _, err := st.Queues().ConfigureQueue(ctx, queue, store.QueueOptions{RetentionEnabled: true, RetentionSeconds: 1})
		require.NoError(t, err)
		<-started
		for range 10 {
			_, err := st.Jobs().RunRetention(ctx, store.RetentionParams{Now: time.Now().Add(time.Hour), BatchSize: 1000, MaxRounds: 1,
				PartitionCleanupDays: 30, MetricsRetentionDays: 30})
			require.NoError(t, err)
		}
	})
}

// raceRounds runs 15 rounds of pushes into fresh partitions of a fresh queue while act runs (started
// closes once the pushes have begun), then checks that no message outlived its partition.
func raceRounds(t *testing.T, prefix string, partitions []string, act func(ctx context.Context, st *store.Store, queue string, started <-chan struct{})) {
	st, err := store.Open(t.Context(), store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	for round := range 15 {
		queue := fmt.Sprintf("%s-%d", prefix, round)
		keys := make([]store.PartitionKey, len(partitions))
		for i, p := range partitions {
			keys[i] = store.PartitionKey{Queue: queue, Partition: p}
		}
		ids, err := st.EnsurePartitions(ctx, keys)
		require.NoError(t, err)
		parts := make([]uuid.UUID, len(keys))
		for i, k := range keys {
			parts[i] = ids[k]
		}
		started, stop := make(chan struct{}), make(chan struct{})
		wg := racePushes(t, st, parts, started, stop)
		act(ctx, st, queue, started)
		close(stop)
		wg.Wait()
		require.Zero(t, orphans(t, st), "round %d", round)
	}
}

// TestPushMintedRepeatIsAnsweredAsDuplicates: rows whose ids the broker minted skip the duplicate
// lookup; pushed a second time (a caller retrying after an answer it could not read) they meet the
// unique index, and the push is run again with every row looked up: each is a duplicate of the stored
// row, nothing is stored twice.
func TestPushMintedRepeatIsAnsweredAsDuplicates(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	key := store.PartitionKey{Queue: "minted", Partition: "p"}
	ids, err := st.EnsurePartitions(ctx, []store.PartitionKey{key})
	require.NoError(t, err)
	rows := make([]store.PushRow, 5)
	for i := range rows {
		rows[i] = store.PushRow{PartitionID: ids[key], TransactionID: uuid.Must(uuid.NewV7()).String(),
			ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`), Minted: true}
	}
	first, err := st.Push(ctx, rows)
	require.NoError(t, err)
	for _, o := range first {
		require.True(t, o.Inserted)
	}
	again := make([]store.PushRow, len(rows))
	for i, r := range rows {
		r.ID = uuid.Must(uuid.NewV7())
		again[i] = r
	}
	second, err := st.Push(ctx, again)
	require.NoError(t, err)
	for i, o := range second {
		require.False(t, o.Inserted)
		require.Equal(t, rows[i].ID, o.ExistingID)
	}
	var n int64
	require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT count(*) FROM messages WHERE partition_id = $1`, ids[key]).Scan(&n))
	require.EqualValues(t, len(rows), n)
}
