package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestQueues covers queries/queues.sql: queue and partition creation, configuration, listings and
// counts.
func TestQueues(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()

	t.Run("QueueAnyEncrypted", func(t *testing.T) {
		// First, while this database has no encrypted queue.
		any, err := st.AnyEncryptedQueue(ctx)
		require.NoError(t, err)
		require.False(t, any)
		configure(t, st, uniq("enc"), store.QueueOptions{EncryptionEnabled: true})
		any, err = st.AnyEncryptedQueue(ctx)
		require.NoError(t, err)
		require.True(t, any)
	})

	t.Run("QueueEncrypted", func(t *testing.T) {
		plain, enc := uniq("plain"), uniq("enc")
		configure(t, st, plain, store.QueueOptions{})
		configure(t, st, enc, store.QueueOptions{EncryptionEnabled: true})
		for name, want := range map[string]bool{plain: false, enc: true} {
			got, err := st.QueueEncrypted(ctx, name)
			require.NoError(t, err)
			require.Equal(t, want, got, name)
		}
		_, err := st.QueueEncrypted(ctx, uniq("none"))
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("QueueConfigure+PartitionEnsureDefault+QueueGetByName", func(t *testing.T) {
		name := uniq("conf")
		o := store.QueueOptions{Namespace: "ns", Task: "tk", Priority: 7, LeaseTime: 30, RetryLimit: 4, RetryDelay: 100,
			MaxSize: 50, TTL: 60, DeadLetterQueue: true, RetentionEnabled: true, RetentionSeconds: 10,
			CompletedRetentionSeconds: 20, EncryptionEnabled: true, DLQAfterMaxRetries: true, DelayedProcessing: 3,
			WindowBuffer: 2, MaxWaitTimeSeconds: 9}
		id, def, err := st.Queues().ConfigureQueue(ctx, name, o)
		require.NoError(t, err)
		info, err := st.Queues().QueueByName(ctx, name)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), info.CreatedAt, time.Minute)
		info.CreatedAt = time.Time{}
		require.Equal(t, store.QueueInfo{ID: id, Name: name, QueueOptions: o}, *info)
		// Configure again: a full replace of the options, same queue, same Default partition.
		id2, def2, err := st.Queues().ConfigureQueue(ctx, name, store.QueueOptions{Priority: 1})
		require.NoError(t, err)
		require.Equal(t, id, id2)
		require.Equal(t, def, def2)
		info, err = st.Queues().QueueByName(ctx, name)
		require.NoError(t, err)
		require.Equal(t, int32(1), info.Priority)
		require.Empty(t, info.Namespace)
		require.False(t, info.EncryptionEnabled)
		require.Equal(t, def, partition(t, st, name, "Default"))
		_, err = st.Queues().QueueByName(ctx, uniq("none"))
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("QueueEnsure+PartitionEnsure+PartitionIDs", func(t *testing.T) {
		dotted, plain := uniq("ns.task.x"), uniq("plain")
		keys := []store.PartitionKey{{Queue: dotted, Partition: "a"}, {Queue: dotted, Partition: "b"}, {Queue: plain, Partition: "a"}, {Queue: dotted, Partition: "a"}}
		ids, err := st.EnsurePartitions(ctx, keys)
		require.NoError(t, err)
		require.Len(t, ids, 3)
		again, err := st.EnsurePartitions(ctx, keys[:2])
		require.NoError(t, err)
		require.Equal(t, ids[keys[0]], again[keys[0]], "an existing partition keeps its id")
		require.Equal(t, ids[keys[1]], again[keys[1]])
		// Auto-created queues take namespace and task from their name's first two dot-segments.
		info, err := st.Queues().QueueByName(ctx, dotted)
		require.NoError(t, err)
		require.Equal(t, []string{"ns", "task"}, []string{info.Namespace, info.Task})
		info, err = st.Queues().QueueByName(ctx, plain)
		require.NoError(t, err)
		require.Equal(t, []string{"", ""}, []string{info.Namespace, info.Task})
		// A configured queue is not touched by ensuring it.
		conf := uniq("conf.x")
		configure(t, st, conf, store.QueueOptions{Namespace: "mine", Priority: 3})
		partition(t, st, conf, "p")
		info, err = st.Queues().QueueByName(ctx, conf)
		require.NoError(t, err)
		require.Equal(t, "mine", info.Namespace)
		require.Equal(t, int32(3), info.Priority)
	})

	t.Run("QueueDelete", func(t *testing.T) {
		name := uniq("del")
		p := partition(t, st, name, "Default")
		push(t, st, p, "a")
		pop(t, st, name, store.QueueMode, "", 1)
		deadLetter(t, st, p, store.QueueMode, "a", "x")
		tr, err := st.Traces().RecordTrace(ctx, store.TraceParams{PartitionID: p, TransactionID: "a", EventType: "info", Data: []byte(`{}`), Names: []string{uniq("n")}})
		require.NoError(t, err)
		ok, err := st.Queues().DeleteQueue(ctx, name)
		require.NoError(t, err)
		require.True(t, ok)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM message_trace_names WHERE trace_id = $1`, tr))
		for _, table := range []string{"partitions", "messages", "partition_consumers", "dead_letters", "pending_partitions", "message_traces"} {
			require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM `+table+` WHERE `+map[bool]string{true: "id", false: "partition_id"}[table == "partitions"]+` = $1`, p), table)
		}
		ok, err = st.Queues().DeleteQueue(ctx, name)
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("QueueListByNamespaceTask", func(t *testing.T) {
		ns := uniq("ns")
		a, b, c := uniq("a"), uniq("b"), uniq("c")
		configure(t, st, a, store.QueueOptions{Namespace: ns, Task: "t1", Priority: 1})
		configure(t, st, b, store.QueueOptions{Namespace: ns, Task: "t2", Priority: 5})
		configure(t, st, c, store.QueueOptions{Namespace: ns, Task: "t1", Priority: 5})
		for _, tc := range []struct {
			ns, task string
			want     []string
		}{
			{ns, "", []string{b, c, a}}, // highest priority first, then by name
			{ns, "t1", []string{c, a}},
			{"", "t2", []string{b}},
			{uniq("nobody"), "", []string{}},
		} {
			got, err := st.Queues().QueuesByNamespaceTask(ctx, tc.ns, tc.task)
			require.NoError(t, err)
			if tc.ns == "" {
				got = only(got, tc.want)
			}
			require.Equal(t, tc.want, got, "%s/%s", tc.ns, tc.task)
		}
	})

	t.Run("QueueBacklog+QueueLimits", func(t *testing.T) {
		capped, free := uniq("capped"), uniq("free")
		p := configure(t, st, capped, store.QueueOptions{MaxSize: 10})
		p2 := partition(t, st, capped, "two")
		configure(t, st, free, store.QueueOptions{})
		push(t, st, p, "a", "b", "c")
		push(t, st, p2, "x")
		pop(t, st, capped, store.QueueMode, "Default", 10)
		ackDone(t, st, p, store.QueueMode, "a", "b")
		// Per partition: last_seq minus the lowest cursor (none: 0).
		got, err := st.QueueBacklogs(ctx, []string{capped, free, uniq("none")})
		require.NoError(t, err)
		require.Equal(t, map[string]store.Backlog{capped: {MaxSize: 10, Pending: 2}}, got, "only queues with a maxSize")
		// A slower group holds the backlog at its own cursor.
		subscribe(t, st, capped, "slow")
		ackDone(t, st, p, "slow", "a")
		got, err = st.QueueBacklogs(ctx, []string{capped})
		require.NoError(t, err)
		require.Equal(t, int64(3), got[capped].Pending)
		// A subscribed group that has read nothing yet has all of it ahead.
		subscribe(t, st, capped, uniq("late"))
		got, err = st.QueueBacklogs(ctx, []string{capped})
		require.NoError(t, err)
		require.Equal(t, int64(4), got[capped].Pending)
		limits, err := st.QueueLimits(ctx, []string{capped, free, uniq("none")})
		require.NoError(t, err)
		require.Equal(t, map[string]int32{capped: 10, free: 0}, limits)
	})

	t.Run("QueueList", func(t *testing.T) {
		ns := uniq("list")
		older, newer := uniq("older"), uniq("newer")
		p := configure(t, st, older, store.QueueOptions{Namespace: ns, Task: "t", Priority: 2})
		partition(t, st, older, "second")
		configure(t, st, newer, store.QueueOptions{Namespace: ns, Task: "u"})
		push(t, st, p, "a", "b")
		pop(t, st, older, store.QueueMode, "", 1)
		ackDone(t, st, p, store.QueueMode, "a")
		got, err := st.Queues().ListQueues(ctx, store.ListQueuesParams{Namespace: ns, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{newer, older}, []string{got[0].Name, got[1].Name}, "newest first")
		o := got[1]
		require.Equal(t, int64(2), o.Partitions)
		require.Equal(t, int64(1), o.TotalConsumed, "read live")
		require.Zero(t, o.Total, "counts wait for the stats refresh")
		require.Nil(t, o.StatsAt)
		refreshStats(t, st)
		got, err = st.Queues().ListQueues(ctx, store.ListQueuesParams{Namespace: ns, Task: "t", Limit: 10})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, []int64{2, 1, 1}, []int64{got[0].Total, got[0].Pending, got[0].Completed})
		require.NotNil(t, got[0].StatsAt)
		got, err = st.Queues().ListQueues(ctx, store.ListQueuesParams{Namespace: ns, Limit: 1, Offset: 1})
		require.NoError(t, err)
		require.Equal(t, older, got[0].Name)
	})

	t.Run("PartitionCounts", func(t *testing.T) {
		name := uniq("counts")
		p := configure(t, st, name, store.QueueOptions{})
		p2 := partition(t, st, name, "idle")
		push(t, st, p, "a", "b", "c", "d")
		pop(t, st, name, store.QueueMode, "Default", 2) // a, b processing
		deadLetter(t, st, p, store.QueueMode, "a", "x")
		ackDone(t, st, p, store.QueueMode, "a")
		qid := scalar[uuid.UUID](t, st, `SELECT id FROM queues WHERE name = $1`, name)
		got, err := st.Queues().PartitionCounts(ctx, qid)
		require.NoError(t, err)
		require.Len(t, got, 2)
		d, idle := got[0], got[1]
		require.Equal(t, []string{"Default", "idle"}, []string{d.Name, idle.Name})
		require.Equal(t, p, d.ID)
		require.Equal(t, p2, idle.ID)
		require.Equal(t, []int64{4, 1, 0, 1, 1, 1}, []int64{d.Total, d.Consumed, d.Processing, d.DeadLetter, d.DLQConsumed, d.TotalConsumed},
			"the ack released the lease: b is pending again")
		require.NotNil(t, d.Oldest)
		require.NotNil(t, d.OldestPending)
		require.False(t, d.Newest.Before(*d.Oldest))
		require.NotNil(t, d.LastConsumedAt)
		require.Zero(t, idle.Total)
		require.Nil(t, idle.Oldest)
		require.Nil(t, idle.LastPushAt)
	})

	t.Run("PartitionGroupCounts", func(t *testing.T) {
		// Queue mode read Default; a named group sought x to its end without reading anything. x is
		// still pending for queue mode: the partition's counts say so, and each group's its own.
		name := uniq("gcounts")
		p := configure(t, st, name, store.QueueOptions{})
		x := partition(t, st, name, "x")
		push(t, st, p, "a", "b")
		push(t, st, x, "x1")
		pop(t, st, name, store.QueueMode, "Default", 1) // a processing
		g := uniq("g")
		_, err := st.Groups().SeekPartition(ctx, g, name, "x")
		require.NoError(t, err)
		deadLetter(t, st, x, g, "x1", "x")
		qid := scalar[uuid.UUID](t, st, `SELECT id FROM queues WHERE name = $1`, name)
		parts, err := st.Queues().PartitionCounts(ctx, qid)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 0}, []int64{parts[1].Total, parts[1].Consumed}, "x: consumed by nobody but g")
		require.Equal(t, []int64{2, 0, 1}, []int64{parts[0].Total, parts[0].Consumed, parts[0].Processing},
			"Default: g, which never read it, is before its first message")
		got, err := st.Queues().PartitionGroupCounts(ctx, qid)
		require.NoError(t, err)
		type row struct {
			Part, Group                                        string
			QueueMode, Cursor                                  bool
			Total, Unconsumed, Processing, DeadLetter, DLQDone int64
		}
		var rows []row
		for _, r := range got {
			part := map[uuid.UUID]string{p: "Default", x: "x"}[r.PartitionID]
			rows = append(rows, row{part, r.Group, r.QueueMode, r.Cursor != nil, r.Total, r.Unconsumed, r.Processing, r.DeadLetter, r.DLQConsumed})
			require.Equal(t, r.Unconsumed > 0, r.LagSeconds > 0, "%s/%s lag", part, r.Group)
		}
		require.Equal(t, []row{
			{"Default", store.QueueMode, true, true, 2, 2, 1, 0, 0},
			{"Default", g, false, false, 2, 2, 0, 0, 0},
			{"x", store.QueueMode, true, false, 1, 1, 0, 0, 0},
			{"x", g, false, true, 1, 0, 0, 1, 1},
		}, rows)
	})

	t.Run("QueueGroupList", func(t *testing.T) {
		name := uniq("groups")
		p := partition(t, st, name, "Default")
		push(t, st, p, "a")
		got, err := st.Queues().QueueGroups(ctx, name)
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode}, got, "nobody consumes it: queue mode's backlog")
		for _, g := range []string{"zeta", "alpha", "unread"} {
			subscribe(t, st, name, g)
		}
		ackDone(t, st, p, "zeta", "a")
		ackDone(t, st, p, "alpha", "a")
		got, err = st.Queues().QueueGroups(ctx, name)
		require.NoError(t, err)
		require.Equal(t, []string{"alpha", "unread", "zeta"}, got)
		got, err = st.Queues().QueueGroups(ctx, uniq("none"))
		require.NoError(t, err)
		require.Empty(t, got)
	})

}
