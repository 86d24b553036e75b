package views

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
)

// The read side of queues: listings from the rolled-up statistics (at most one stats interval old)
// and one queue's exact per-partition counts.

// allRows bounds the listings that have no page of their own (namespaces, tasks, status, overview).
const allRows = 100_000

// Counts is the message breakdown of a queue or a partition.
type Counts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	DeadLetter int64 `json:"deadLetter"`
}

func (c *Counts) add(o Counts) {
	c.Total += o.Total
	c.Pending += o.Pending
	c.Processing += o.Processing
	c.Completed += o.Completed
	c.DeadLetter += o.DeadLetter
}

func partitionCounts(p store.PartitionCounts) Counts {
	return Counts{Total: p.Total, Pending: p.Total - p.Consumed - p.Processing, Processing: p.Processing,
		Completed: p.Consumed - p.DLQConsumed, DeadLetter: p.DeadLetter}
}

func summaryCounts(q store.QueueSummary) Counts {
	return Counts{Total: q.Total, Pending: q.Pending, Processing: q.Processing, Completed: q.Completed, DeadLetter: q.DeadLetter}
}

// QueueFilter selects the queues of a listing; empty strings match everything.
type QueueFilter struct {
	Namespace, Task string
	Limit, Offset   int
}

// ShortCounts are the counts a queue listing shows (rolled up, relative to the slowest group of the
// queue, as the queue detail's totals).
type ShortCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
}

// QueueRef names a queue and its namespace and task; every queue shape starts with it.
type QueueRef struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Task      string `json:"task"`
}

func queueRef(id uuid.UUID, name, namespace, task string) QueueRef {
	return QueueRef{ID: id.String(), Name: name, Namespace: namespace, Task: task}
}

// QueueItem is one queue of a listing.
type QueueItem struct {
	QueueRef
	Priority   int32       `json:"priority"`
	CreatedAt  string      `json:"createdAt"`
	Partitions int64       `json:"partitions"`
	Messages   ShortCounts `json:"messages"`
	StatsAt    *string     `json:"statsAt"`
}

// QueueList is a page of queues and the age in seconds of the oldest statistics row behind it (-1: the
// stats job never ran).
type QueueList struct {
	Queues   []QueueItem
	StatsAge int64
}

// statsAge is the age in seconds of the oldest rolled-up row, -1 when the stats job never ran.
func statsAge(qs []store.QueueSummary) int64 {
	var oldest time.Time
	for _, q := range qs {
		if q.StatsAt == nil {
			return -1
		}
		if oldest.IsZero() || q.StatsAt.Before(oldest) {
			oldest = *q.StatsAt
		}
	}
	if oldest.IsZero() {
		return -1
	}
	return int64(time.Since(oldest).Seconds())
}

func (v *Views) listQueues(ctx context.Context, f QueueFilter) ([]store.QueueSummary, error) {
	var out []store.QueueSummary
	err := v.read(ctx, func(st *store.Store) (err error) {
		out, err = st.Queues().ListQueues(ctx, store.ListQueuesParams(f))
		return err
	})
	return out, engine.OpFailed("list queues", err)
}

// Queues lists queues newest first with their rolled-up counts; a zero Limit lists them all.
func (v *Views) Queues(ctx context.Context, f QueueFilter) (*QueueList, error) {
	if f.Limit == 0 {
		f.Limit = allRows
	}
	qs, err := v.listQueues(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]QueueItem, len(qs))
	for i, q := range qs {
		out[i] = QueueItem{QueueRef: queueRef(q.ID, q.Name, q.Namespace, q.Task), Priority: q.Priority,
			CreatedAt: engine.ISOMillis(q.CreatedAt), Partitions: q.Partitions,
			Messages: ShortCounts{Total: q.Total, Pending: q.Pending, Processing: q.Processing, Completed: q.Completed,
				DeadLetter: q.DeadLetter},
			StatsAt: engine.OptTime(q.StatsAt)}
	}
	return &QueueList{Queues: out, StatsAge: statsAge(qs)}, nil
}

// GroupTotals roll up the queues that share a namespace or a task.
type GroupTotals struct {
	Queues     int64 `json:"queues"`
	Partitions int64 `json:"partitions"`
	Messages   struct {
		Total   int64 `json:"total"`
		Pending int64 `json:"pending"`
	} `json:"messages"`
}

// NamespaceTotals is one namespace with its queues rolled up.
type NamespaceTotals struct {
	Namespace string `json:"namespace"`
	GroupTotals
}

// TaskTotals is one task with its queues rolled up.
type TaskTotals struct {
	Task string `json:"task"`
	GroupTotals
}

// rollUp groups every queue by key and makes one row of each group, in key order.
func rollUp[T any](ctx context.Context, v *Views, key func(store.QueueSummary) string, row func(string, GroupTotals) T) ([]T, error) {
	qs, err := v.listQueues(ctx, QueueFilter{Limit: allRows})
	if err != nil {
		return nil, err
	}
	m := map[string]*GroupTotals{}
	var keys []string
	for _, q := range qs {
		k := key(q)
		g := m[k]
		if g == nil {
			g = &GroupTotals{}
			m[k] = g
			keys = append(keys, k)
		}
		g.Queues++
		g.Partitions += q.Partitions
		g.Messages.Total += q.Total
		g.Messages.Pending += q.Pending
	}
	sort.Strings(keys)
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = row(k, *m[k])
	}
	return out, nil
}

// Namespaces rolls the queues up by namespace.
func (v *Views) Namespaces(ctx context.Context) ([]NamespaceTotals, error) {
	return rollUp(ctx, v, func(q store.QueueSummary) string { return q.Namespace },
		func(k string, g GroupTotals) NamespaceTotals { return NamespaceTotals{Namespace: k, GroupTotals: g} })
}

// Tasks rolls the queues up by task.
func (v *Views) Tasks(ctx context.Context) ([]TaskTotals, error) {
	return rollUp(ctx, v, func(q store.QueueSummary) string { return q.Task },
		func(k string, g GroupTotals) TaskTotals { return TaskTotals{Task: k, GroupTotals: g} })
}

// QueueConfig is a queue's configuration as the status routes show it: every option configure
// accepts, under its name there, so that sending it back as configure's options changes nothing; and
// maxQueueSize, the original's name for maxSize (configure ignores it).
type QueueConfig struct {
	engine.EffectiveOptions
	MaxQueueSize int32 `json:"maxQueueSize"`
}

// PartitionDetail is one partition with its exact counts.
type PartitionDetail struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	CreatedAt      string  `json:"createdAt"`
	Stats          Counts  `json:"stats"`
	OldestMessage  *string `json:"oldestMessage"`
	NewestMessage  *string `json:"newestMessage"`
	LastActivity   *string `json:"lastActivity"`
	TotalConsumed  int64   `json:"totalConsumed"`
	LastConsumedAt *string `json:"lastConsumedAt"`
	// ConsumerGroups are the counts of each group of the queue on this partition; Stats are relative
	// to the slowest of them.
	ConsumerGroups []PartitionGroup `json:"consumerGroups"`
}

// GroupLag is how far a group is behind: the messages after its position (processing included), the
// age in seconds of the first of them (0: none), and on a queue the partitions where it is behind.
type GroupLag struct {
	Messages   int64   `json:"messages"`
	Seconds    float64 `json:"seconds"`
	Partitions *int64  `json:"partitions,omitempty"`
}

// PartitionGroup is one group's view of one partition: Cursor is null where the group never read it
// (it is then positioned before the first message).
type PartitionGroup struct {
	ConsumerGroup string             `json:"consumerGroup"`
	QueueMode     bool               `json:"queueMode"`
	Cursor        *int64             `json:"cursor"`
	Messages      engine.GroupCounts `json:"messages"`
	Lag           GroupLag           `json:"lag"`
}

// QueueGroup is one group's view of a whole queue: its partitions' figures summed, the lag's age the
// oldest.
type QueueGroup struct {
	ConsumerGroup string             `json:"consumerGroup"`
	QueueMode     bool               `json:"queueMode"`
	Messages      engine.GroupCounts `json:"messages"`
	Lag           GroupLag           `json:"lag"`
}

// QueueDetail is one queue with exact per-partition counts (the shape of /resources/queues/{queue}).
type QueueDetail struct {
	QueueRef
	CreatedAt  string            `json:"createdAt"`
	Partitions []PartitionDetail `json:"partitions"`
	Totals     Counts            `json:"totals"`
	// ConsumerGroups are the queue's groups (queue mode first), each with its own counts; Totals
	// are relative to the slowest of them.
	ConsumerGroups []QueueGroup `json:"consumerGroups"`
	Priority       int32        `json:"-"`
	Config         QueueConfig  `json:"-"`
}

// queueInfo reads one queue from st; a NotFoundError naming it when missing.
func queueInfo(ctx context.Context, st *store.Store, name string) (*store.QueueInfo, error) {
	q, err := st.Queues().QueueByName(ctx, name)
	return q, engine.OpFailedOr("queue", err, "Queue not found: %s", name)
}

// Queue reads a queue and counts its partitions exactly; a NotFoundError naming it when missing.
func (v *Views) Queue(ctx context.Context, name string) (*QueueDetail, error) {
	// One store for the three reads, so that they describe one moment's queue.
	var q *store.QueueInfo
	var ps []store.PartitionCounts
	var gs []store.PartitionGroupCounts
	err := v.read(ctx, func(st *store.Store) (err error) {
		if q, err = queueInfo(ctx, st, name); err != nil {
			return err
		}
		if ps, err = st.Queues().PartitionCounts(ctx, q.ID); err != nil {
			return engine.OpFailed("partition counts", err)
		}
		gs, err = st.Queues().PartitionGroupCounts(ctx, q.ID)
		return engine.OpFailed("consumer group counts", err)
	})
	if err != nil {
		return nil, err
	}
	d := &QueueDetail{QueueRef: queueRef(q.ID, q.Name, q.Namespace, q.Task), CreatedAt: engine.ISOMillis(q.CreatedAt),
		Priority: q.Priority, Partitions: make([]PartitionDetail, len(ps)),
		Config: QueueConfig{EffectiveOptions: engine.EffectiveOf(q.QueueOptions), MaxQueueSize: q.MaxSize}}
	for i, p := range ps {
		c := partitionCounts(p)
		d.Totals.add(c)
		last := p.LastPushAt
		if p.LastConsumedAt != nil && (last == nil || p.LastConsumedAt.After(*last)) {
			last = p.LastConsumedAt
		}
		d.Partitions[i] = PartitionDetail{ID: p.ID.String(), Name: p.Name, CreatedAt: engine.ISOMillis(p.CreatedAt), Stats: c,
			OldestMessage: engine.OptTime(p.Oldest), NewestMessage: engine.OptTime(p.Newest), LastActivity: engine.OptTime(last),
			TotalConsumed: p.TotalConsumed, LastConsumedAt: engine.OptTime(p.LastConsumedAt), ConsumerGroups: []PartitionGroup{}}
	}
	d.ConsumerGroups = groupCounts(d.Partitions, gs)
	return d, nil
}

// groupCounts fills each partition's per-group counts from rows in partition order (the same order
// as parts) and sums them per group, in the order the groups first appear.
func groupCounts(parts []PartitionDetail, rows []store.PartitionGroupCounts) []QueueGroup {
	out := []QueueGroup{}
	at := map[string]int{}
	i := 0
	for _, r := range rows {
		for i < len(parts) && parts[i].ID != r.PartitionID.String() {
			i++
		}
		if i == len(parts) {
			break // a partition created between the two reads
		}
		pg := PartitionGroup{ConsumerGroup: r.Group, QueueMode: r.QueueMode, Cursor: r.Cursor,
			Messages: engine.GroupCounts{Total: r.Total, Pending: r.Unconsumed - r.Processing, Processing: r.Processing,
				Completed: r.Total - r.Unconsumed - r.DLQConsumed, DeadLetter: r.DeadLetter},
			Lag: GroupLag{Messages: r.Unconsumed, Seconds: max(r.LagSeconds, 0)}}
		parts[i].ConsumerGroups = append(parts[i].ConsumerGroups, pg)
		k, ok := at[r.Group]
		if !ok {
			k, at[r.Group] = len(out), len(out)
			out = append(out, QueueGroup{ConsumerGroup: r.Group, QueueMode: r.QueueMode, Lag: GroupLag{Partitions: new(int64)}})
		}
		g := &out[k]
		g.Messages.Total += pg.Messages.Total
		g.Messages.Pending += pg.Messages.Pending
		g.Messages.Processing += pg.Messages.Processing
		g.Messages.Completed += pg.Messages.Completed
		g.Messages.DeadLetter += pg.Messages.DeadLetter
		g.Lag.Messages += pg.Lag.Messages
		g.Lag.Seconds = max(g.Lag.Seconds, pg.Lag.Seconds)
		if pg.Lag.Messages > 0 {
			*g.Lag.Partitions++
		}
	}
	return out
}
