package store_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestJobPlansSkipUnusedOptions: the background jobs' statements for per-queue options (eviction by
// maxWaitTimeSeconds, retention by age and by consumption) read no partition, cursor or message when no
// queue sets the option, with statistics taken before the queue grew from 100 to 30 000 partitions with
// a cursor each. Planned from those statistics, the eviction walked every cursor and joined the queues
// last (5.4 s per pass at 100 000 partitions in a benchmark), holding back the vacuum of every table.
func TestJobPlansSkipUnusedOptions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, c := privateConn(t)
	pool := store.PoolOf(st)
	// Statistics taken while the queue had 100 partitions with a cursor and a message each, then 30 000.
	autovacuumOff(t, pool, "messages", "partitions", "partition_consumers", "queues")
	grow := func(from, to int) {
		t.Helper()
		ids := fmt.Sprintf(`SELECT ('00000000-0000-0000-0001-' || lpad(to_hex(i), 12, '0'))::uuid AS id, i FROM generate_series(%d, %d) i`, from, to)
		_, err := pool.Exec(ctx, `
INSERT INTO queues (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'q') ON CONFLICT DO NOTHING;
INSERT INTO partitions (id, queue_id, name, last_seq)
  SELECT id, '00000000-0000-0000-0000-000000000001', 'p' || i, 1 FROM (`+ids+`) s;
INSERT INTO messages (partition_id, seq, id, transaction_id, created_at)
  SELECT id, 1, gen_random_uuid(), gen_random_uuid()::text, now() - interval '1 day' FROM (`+ids+`) s;
INSERT INTO partition_consumers (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
  SELECT id, 'g', 0, 0 FROM (`+ids+`) s`)
		require.NoError(t, err)
	}
	grow(1, 100)
	_, err := pool.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	grow(101, 30000)
	for _, s := range []struct{ name, args string }{
		{"MessageExpireWaiting", `1000, NULL`},
		{"RetentionDeleteExpired", `now(), 1000`},
		{"RetentionDeleteCompleted", `now(), 1000`},
	} {
		_, err := c.Prepare(ctx, s.name, store.Queries[s.name])
		require.NoError(t, err)
		top, plan := analyzed(t, func(opts string) string { return explainRolledBack(t, c, false, s.name, opts, s.args) })
		for _, rel := range []string{"partitions", "partition_consumers", "messages"} {
			require.Zero(t, top.rowsRead(rel), "%s: rows of %s read; plan:\n%s", s.name, rel, plan)
		}
	}
}
