package httpapi_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// groupsModel is what a queue's consumer groups should report, kept by the test from the operations
// it sent: the messages of each partition, and each group's subscription, cursors and dead letters.
// Position rule (docs/decisions.md): a group's cursor, or before the first message where it has none.
type groupsModel struct {
	queue string
	parts []string            // partition names in creation order
	msgs  map[string][]string // partition → transaction ids in sequence order (seq = index+1)
	at    map[string][]time.Time
	// Per group: subscribed (a pop or a seek recorded it), its cursor rows, its dead-lettered seqs.
	subscribed map[string]bool
	rows       map[string]map[string]int64
	dead       map[string]map[string]map[int64]bool
}

const queueModeGroup = "__QUEUE_MODE__"

func (m *groupsModel) pos(g, p string) (int64, bool) {
	c, ok := m.rows[g][p]
	return c, ok
}

// groups are the queue's groups: the subscribed named ones, and queue mode when it has a cursor on the
// queue or no named group is subscribed.
func (m *groupsModel) groups() []string {
	var out []string
	for g, ok := range m.subscribed {
		if ok {
			out = append(out, g)
		}
	}
	if len(m.rows[queueModeGroup]) > 0 || len(out) == 0 {
		out = append(out, queueModeGroup)
	}
	slices.Sort(out)
	return out
}

func (m *groupsModel) setRow(g, p string, c int64) {
	if m.rows[g] == nil {
		m.rows[g] = map[string]int64{}
	}
	m.rows[g][p] = c
}

// seekTarget is where a seek to ts (zero: the end) puts a partition: after the last message at or
// before ts.
func (m *groupsModel) seekTarget(p string, ts time.Time) int64 {
	if ts.IsZero() {
		return int64(len(m.msgs[p]))
	}
	var n int64
	for i, at := range m.at[p] {
		if !at.After(ts) {
			n = int64(i + 1)
		}
	}
	return n
}

type groupFigures struct {
	Lag, Pending, Completed, Dead, Total, Behind int64
}

func (f *groupFigures) add(o groupFigures) {
	f.Lag, f.Pending, f.Completed = f.Lag+o.Lag, f.Pending+o.Pending, f.Completed+o.Completed
	f.Dead, f.Total, f.Behind = f.Dead+o.Dead, f.Total+o.Total, f.Behind+o.Behind
}

// figures are group g's counts on partition p.
func (m *groupsModel) figures(g, p string) groupFigures {
	pos, _ := m.pos(g, p)
	n := int64(len(m.msgs[p]))
	var deadBefore int64
	for s := range m.dead[g][p] {
		if s <= pos {
			deadBefore++
		}
	}
	f := groupFigures{Lag: max(n-pos, 0), Total: n, Dead: int64(len(m.dead[g][p]))}
	f.Pending, f.Completed = f.Lag, min(pos, n)-deadBefore
	if f.Lag > 0 {
		f.Behind = 1
	}
	return f
}

// TestGroupsModel runs random pushes, pops and acks (queue mode and named groups in every subscription
// mode), dead letters, seeks (to the end, to the beginning, to instants between pushes) and partitions
// created after them, and checks after every step that every read route reports the lag, pending and
// completed figures of the model, and that a pop delivers exactly the messages after the group's
// position (so nothing a seek to the end skipped).
func TestGroupsModel(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	a := b.raw
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	m := &groupsModel{queue: uniqueName("model"), msgs: map[string][]string{}, at: map[string][]time.Time{},
		subscribed: map[string]bool{}, rows: map[string]map[string]int64{}, dead: map[string]map[string]map[int64]bool{}}
	// Group → the pop parameters of its first pop (its subscription).
	modes := map[string][]string{"": nil, "g-all": {"subscriptionMode", "from_beginning"}, "g-new": {"subscriptionMode", "new"},
		"g-ts": nil}
	names := []string{"", "g-all", "g-new", "g-ts"}
	var marks []time.Time // instants between pushes
	mark := func() {
		// Between a push's answer and the next push: every message stored before is at or before it.
		marks = append(marks, time.Now())
	}
	tx := 0
	push := func() {
		p := "p" + strconv.Itoa(rng.IntN(len(m.parts)+1))
		if !slices.Contains(m.parts, p) {
			p = "p" + strconv.Itoa(len(m.parts))
			m.parts = append(m.parts, p)
		}
		n := 1 + rng.IntN(3)
		var txs []string
		for range n {
			tx++
			txs = append(txs, "t"+strconv.Itoa(tx))
		}
		a.pushTxs(m.queue, p, txs...)
		now := time.Now()
		for _, x := range txs {
			m.msgs[p] = append(m.msgs[p], x)
			m.at[p] = append(m.at[p], now)
		}
	}
	subscribe := func(g, mode string, ts time.Time) {
		if g == "" || m.subscribed[g] {
			return
		}
		m.subscribed[g] = true
		for _, p := range m.parts {
			switch mode {
			case "new":
				m.setRow(g, p, int64(len(m.msgs[p])))
			case "timestamp":
				m.setRow(g, p, m.seekTarget(p, ts))
			}
		}
	}
	pop := func(name string) {
		g := name
		kv := []string{"batch", strconv.Itoa(1 + rng.IntN(3))}
		if name != "" {
			kv = append(kv, "consumerGroup", name)
			kv = append(kv, modes[name]...)
		} else {
			g = queueModeGroup
		}
		if name == "g-ts" && !m.subscribed[g] && len(marks) > 0 {
			from := marks[rng.IntN(len(marks))]
			kv = append(kv, "subscriptionFrom", from.UTC().Format(time.RFC3339Nano))
			subscribe(g, "timestamp", from)
		}
		switch {
		case name == "g-new":
			subscribe(g, "new", time.Time{})
		case name != "":
			subscribe(g, "all", time.Time{})
		}
		res := a.pop(popPath(m.queue, "", kv...))
		if res == nil {
			for _, p := range m.parts {
				require.Zero(t, m.figures(g, p).Lag, "%s: 204 although %s has messages after its position", g, p)
			}
			return
		}
		p := res.Messages[0].Partition
		pos, _ := m.pos(g, p)
		for i, msg := range res.Messages {
			require.Equal(t, p, msg.Partition)
			require.Less(t, pos+int64(i), int64(len(m.msgs[p])), "%s got %s beyond the end of %s", g, msg.TransactionID, p)
			require.Equal(t, m.msgs[p][pos+int64(i)], msg.TransactionID, "%s on %s: the message after its position", g, p)
		}
		// One message in four goes to the dead letters (once per group), the others complete.
		if len(res.Messages) == 1 && rng.IntN(4) == 0 && !m.dead[g][p][pos+1] {
			a.ackOK(res.Messages[0], "dlq", "model")
			if m.dead[g] == nil {
				m.dead[g] = map[string]map[int64]bool{}
			}
			if m.dead[g][p] == nil {
				m.dead[g][p] = map[int64]bool{}
			}
			m.dead[g][p][pos+1] = true
		} else {
			for _, r := range a.ackAll(name, res.Messages, "completed") {
				require.True(t, r.Success, "%+v", r)
			}
		}
		m.setRow(g, p, pos+int64(len(res.Messages)))
	}
	seek := func(name string) {
		g := orDefault(name, queueModeGroup)
		var ts time.Time
		body := map[string]any{"toEnd": true}
		switch rng.IntN(3) {
		case 1:
			ts = time.Now().Add(-time.Hour) // before everything: the beginning
		case 2:
			if len(marks) > 0 {
				ts = marks[rng.IntN(len(marks))]
			}
		}
		if !ts.IsZero() {
			body = map[string]any{"timestamp": ts.UTC().Format(time.RFC3339Nano)}
		}
		var res struct {
			PartitionsUpdated int `json:"partitionsUpdated"`
		}
		a.json("POST", "/api/v1/consumer-groups/"+url.PathEscape(g)+"/queues/"+m.queue+"/seek", body, http.StatusOK, &res)
		require.Equal(t, len(m.parts), res.PartitionsUpdated, "a seek places every partition")
		if g != queueModeGroup {
			m.subscribed[g] = true
		}
		for _, p := range m.parts {
			target := m.seekTarget(p, ts)
			if _, ok := m.pos(g, p); ok || target > 0 {
				m.setRow(g, p, target)
			}
		}
	}

	push()
	for step := range 60 {
		switch op := rng.IntN(10); {
		case op < 4:
			push()
			if rng.IntN(2) == 0 {
				mark()
			}
		case op < 8:
			pop(names[rng.IntN(len(names))])
		default:
			seek(names[rng.IntN(len(names))])
		}
		checkGroupsModel(t, a, m, step)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkGroupsModel compares every read route's figures with the model's.
func checkGroupsModel(t *testing.T, a *api, m *groupsModel, step int) {
	t.Helper()
	groups := m.groups()
	ctx := fmt.Sprintf("step %d", step)

	// GET /api/v1/consumer-groups: one row per group of the queue.
	var list []struct {
		Name              string `json:"name"`
		QueueName         string `json:"queueName"`
		Partitions        int64  `json:"partitions"`
		PartitionsWithLag int64  `json:"partitionsWithLag"`
		TotalLag          int64  `json:"totalLag"`
		Messages          struct {
			Total, Pending, Processing, Completed, DeadLetter int64
		} `json:"messages"`
	}
	a.json("GET", "/api/v1/consumer-groups", nil, http.StatusOK, &list)
	var listed []string
	for _, r := range list {
		if r.QueueName != m.queue {
			continue
		}
		listed = append(listed, r.Name)
		var want groupFigures
		for _, p := range m.parts {
			want.add(m.figures(r.Name, p))
		}
		got := groupFigures{Lag: r.TotalLag, Pending: r.Messages.Pending, Completed: r.Messages.Completed,
			Dead: r.Messages.DeadLetter, Total: r.Messages.Total, Behind: r.PartitionsWithLag}
		require.Equal(t, want, got, "%s: consumer-groups row of %s", ctx, r.Name)
		require.Equal(t, int64(len(m.parts)), r.Partitions, ctx)
	}
	require.Equal(t, groups, listed, "%s: the queue's groups", ctx)

	// GET /api/v1/status/queues/:queue: per group, per partition and group, and the partition stats
	// relative to the slowest group.
	var detail struct {
		ConsumerGroups []struct {
			ConsumerGroup string `json:"consumerGroup"`
			Messages      struct{ Total, Pending, Processing, Completed, DeadLetter int64 }
			Lag           struct{ Messages, Partitions int64 }
		} `json:"consumerGroups"`
		Partitions []struct {
			Name           string `json:"name"`
			Stats          struct{ Total, Pending, Processing, Completed, DeadLetter int64 }
			ConsumerGroups []struct {
				ConsumerGroup string `json:"consumerGroup"`
				Cursor        *int64 `json:"cursor"`
				Messages      struct{ Total, Pending, Processing, Completed, DeadLetter int64 }
				Lag           struct{ Messages int64 }
			} `json:"consumerGroups"`
		} `json:"partitions"`
	}
	a.json("GET", "/api/v1/status/queues/"+m.queue, nil, http.StatusOK, &detail)
	var detailGroups []string
	for _, g := range detail.ConsumerGroups {
		detailGroups = append(detailGroups, g.ConsumerGroup)
		var want groupFigures
		for _, p := range m.parts {
			want.add(m.figures(g.ConsumerGroup, p))
		}
		got := groupFigures{Lag: g.Lag.Messages, Pending: g.Messages.Pending, Completed: g.Messages.Completed,
			Dead: g.Messages.DeadLetter, Total: g.Messages.Total, Behind: g.Lag.Partitions}
		require.Equal(t, want, got, "%s: status consumerGroups of %s", ctx, g.ConsumerGroup)
	}
	slices.Sort(detailGroups)
	require.Equal(t, groups, detailGroups, ctx)
	require.Len(t, detail.Partitions, len(m.parts), ctx)
	for _, dp := range detail.Partitions {
		p := dp.Name
		low := int64(-1)
		for _, pg := range dp.ConsumerGroups {
			f := m.figures(pg.ConsumerGroup, p)
			got := groupFigures{Lag: pg.Lag.Messages, Pending: pg.Messages.Pending, Completed: pg.Messages.Completed,
				Dead: pg.Messages.DeadLetter, Total: pg.Messages.Total, Behind: f.Behind}
			require.Equal(t, f, got, "%s: %s on partition %s", ctx, pg.ConsumerGroup, p)
			pos, has := m.pos(pg.ConsumerGroup, p)
			require.Equal(t, has, pg.Cursor != nil, "%s: %s has a cursor on %s", ctx, pg.ConsumerGroup, p)
			if low < 0 || pos < low {
				low = pos
			}
		}
		require.Len(t, dp.ConsumerGroups, len(groups), ctx)
		n := int64(len(m.msgs[p]))
		deadSeqs := map[int64]bool{}
		var deadBefore int64
		for _, byPart := range m.dead {
			for s := range byPart[p] {
				if !deadSeqs[s] && s <= low {
					deadBefore++
				}
				deadSeqs[s] = true
			}
		}
		require.Equal(t, []int64{n, n - low, low - deadBefore, int64(len(deadSeqs))},
			[]int64{dp.Stats.Total, dp.Stats.Pending, dp.Stats.Completed, dp.Stats.DeadLetter},
			"%s: partition %s relative to the slowest group (position %d)", ctx, p, low)
	}

	// GET /api/v1/consumer-groups/:group, for each group: every partition with its offset lag.
	for _, g := range groups {
		var d map[string]struct {
			Partitions []struct {
				Partition string `json:"partition"`
				OffsetLag int64  `json:"offsetLag"`
				HasCursor bool   `json:"hasCursor"`
			} `json:"partitions"`
		}
		a.json("GET", "/api/v1/consumer-groups/"+url.PathEscape(g), nil, http.StatusOK, &d)
		got := d[m.queue].Partitions
		require.Len(t, got, len(m.parts), "%s: %s's partitions", ctx, g)
		for _, x := range got {
			_, has := m.pos(g, x.Partition)
			require.Equal(t, []any{m.figures(g, x.Partition).Lag, has}, []any{x.OffsetLag, x.HasCursor}, "%s: %s on %s", ctx, g, x.Partition)
		}
	}

	// GET /api/v1/consumer-groups/lagging?minLagSeconds=0: every (group, partition) with a message
	// after the position.
	var lagging []struct {
		Group     string `json:"consumer_group"`
		Queue     string `json:"queue_name"`
		Partition string `json:"partition_name"`
		OffsetLag int64  `json:"offset_lag"`
	}
	a.json("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", nil, http.StatusOK, &lagging)
	var gotLag, wantLag []string
	for _, l := range lagging {
		if l.Queue == m.queue {
			gotLag = append(gotLag, fmt.Sprintf("%s/%s/%d", l.Group, l.Partition, l.OffsetLag))
		}
	}
	for _, g := range groups {
		for _, p := range m.parts {
			if f := m.figures(g, p); f.Lag > 0 {
				wantLag = append(wantLag, fmt.Sprintf("%s/%s/%d", g, p, f.Lag))
			}
		}
	}
	require.ElementsMatch(t, wantLag, gotLag, "%s: lagging", ctx)
}
