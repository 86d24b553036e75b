package engine

import (
	"context"
	"time"

	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
)

// Groups answers the consumer-group routes: the listing and lag of groups, deleting their cursors,
// moving their subscription point and seeking them. The pop path records first subscriptions itself
// (Engine.ensureSubscription), whose cache a group delete clears (Engine.announce).
type Groups struct {
	st       *store.Store
	hub      *notify.Hub         // a seek wakes the queue's parked pops
	announce func(notify.Change) // Engine.announce: a delete forgets the group's subscriptions here and on the other brokers
}

// Groups is the consumer-group side of the engine.
func (e *Engine) Groups() *Groups { return e.groups }

// subscriptionTTL bounds how long a recorded subscription is trusted without a round-trip: a delete
// through another broker reaches this one by NOTIFY (changes.go), and this bounds a lost one.
const subscriptionTTL = 10 * time.Second

// subscription resolves where a named group starts in a queue it meets for the first time:
// subscriptionFrom (a timestamp or "now") wins over subscriptionMode (all, new, new-only), which
// falls back to DEFAULT_SUBSCRIPTION_MODE.
func (e *Engine) subscription(mode, from string) (string, time.Time, error) {
	switch from {
	case "":
	case "now":
		return store.SubscribeNew, time.Time{}, nil
	default:
		ts, err := time.Parse(time.RFC3339Nano, from)
		if err != nil {
			return "", time.Time{}, Invalid("subscriptionFrom must be an ISO-8601 timestamp or now, got %q", from)
		}
		return store.SubscribeTimestamp, ts, nil
	}
	if mode == "" {
		mode = e.opt.DefaultSubscriptionMode
	}
	// from_beginning is what the original clients send for all. Other values stay refused: the
	// original read them as all, but a misspelt new would then replay a queue's whole history.
	switch mode {
	case "", "all", "from_beginning":
		return store.SubscribeAll, time.Time{}, nil
	case "new", "new-only":
		return store.SubscribeNew, time.Time{}, nil
	}
	return "", time.Time{}, Invalid("subscriptionMode must be all, from_beginning, new or new-only, got %q", mode)
}

// ensureSubscription records a named group's first subscription on a queue (the first one wins).
func (e *Engine) ensureSubscription(ctx context.Context, queue, group, mode string, ts time.Time) error {
	key := queue + "\x00" + group
	if _, ok := e.subs.get(key); ok {
		return nil
	}
	exists, err := e.st.Groups().EnsureSubscription(ctx, queue, group, mode, ts)
	if err != nil {
		return err
	}
	if exists {
		e.subs.put(key, struct{}{})
	}
	return nil
}

// GroupCounts are the messages of a queue or a partition as one consumer group sees them: pending and
// processing are after its position (processing inside its live lease), completed at or before it
// and not dead-lettered for it, deadLetter its dead letters.
type GroupCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
}

// GroupQueue is one (consumer group, queue) pair of the listing. Members counts the partitions where
// the group has a cursor, Partitions every partition of the queue; the lag figures count every
// partition, a never-read one from its first message.
type GroupQueue struct {
	Name                  string      `json:"name"`
	Topics                []string    `json:"topics"`
	QueueName             string      `json:"queueName"`
	QueueMode             bool        `json:"queueMode"`
	Members               int64       `json:"members"`
	Partitions            int64       `json:"partitions"`
	PartitionsWithLag     int64       `json:"partitionsWithLag"`
	TotalLag              int64       `json:"totalLag"`
	MaxTimeLag            float64     `json:"maxTimeLag"`
	TotalConsumed         int64       `json:"totalConsumed"`
	Messages              GroupCounts `json:"messages"`
	State                 string      `json:"state"`
	SubscriptionMode      *string     `json:"subscriptionMode"`
	SubscriptionTimestamp *string     `json:"subscriptionTimestamp"`
	SubscriptionCreatedAt *string     `json:"subscriptionCreatedAt"`
}

// laggingAfter is how old a group's oldest unconsumed message may get before it is "Lagging".
const laggingAfter = 300.0

// ConsumerGroups lists every group of every queue (docs/decisions.md: the named groups subscribed to
// it, and queue mode when it read the queue or no named group did).
func (g *Groups) ConsumerGroups(ctx context.Context) ([]GroupQueue, error) {
	rows, err := g.st.Groups().ListConsumerGroups(ctx)
	if err != nil {
		return nil, OpFailed("list consumer groups", err)
	}
	out := make([]GroupQueue, len(rows))
	for i, r := range rows {
		gq := GroupQueue{Name: r.Group, Topics: []string{r.Queue}, QueueName: r.Queue, QueueMode: r.QueueMode,
			Members: r.Members, Partitions: r.Partitions, PartitionsWithLag: r.Behind, TotalLag: r.Lag,
			MaxTimeLag: r.MaxLagSeconds, TotalConsumed: r.Consumed,
			Messages: GroupCounts{Total: r.Total, Pending: max(r.Lag-r.Processing, 0), Processing: r.Processing,
				Completed: r.Total - r.Lag - r.DLQConsumed, DeadLetter: r.DeadLetter}}
		switch {
		case r.MaxLagSeconds > laggingAfter:
			gq.State = "Lagging"
		case r.Consumed > 0 || r.Behind == 0:
			gq.State = "Stable"
		default:
			gq.State = "Dead"
		}
		gq.SubscriptionMode, gq.SubscriptionTimestamp, gq.SubscriptionCreatedAt = r.Mode, OptTime(r.SubscriptionTS), OptTime(r.SubscribedAt)
		out[i] = gq
	}
	return out, nil
}

// GroupPartition is one cursor in a group's details.
type GroupPartition struct {
	Partition      string  `json:"partition"`
	PartitionID    string  `json:"partitionId"`
	WorkerID       *string `json:"workerId"`
	LastConsumedAt *string `json:"lastConsumedAt"`
	TotalConsumed  int64   `json:"totalConsumed"`
	OffsetLag      int64   `json:"offsetLag"`
	TimeLagSeconds float64 `json:"timeLagSeconds"`
	LeaseActive    bool    `json:"leaseActive"`
	HasCursor      bool    `json:"hasCursor"`
}

// GroupDetails are a group's positions on every partition of the queues it belongs to, keyed by queue
// name; ErrNotFound for a group that belongs to no queue.
type GroupDetails map[string]struct {
	Partitions []GroupPartition `json:"partitions"`
}

// ConsumerGroup describes one group's position on every partition of its queues (a never-read one:
// HasCursor false, lag from the partition's first message).
func (g *Groups) ConsumerGroup(ctx context.Context, group string) (GroupDetails, error) {
	rows, err := g.st.Groups().GroupPartitions(ctx, group)
	if err != nil {
		return nil, OpFailed("consumer group", err)
	}
	if len(rows) == 0 {
		return nil, notFound("consumer group %q not found", group)
	}
	out := GroupDetails{}
	for _, r := range rows {
		p := GroupPartition{Partition: r.Partition, PartitionID: r.PartitionID.String(), TotalConsumed: r.TotalConsumed,
			OffsetLag: r.OffsetLag, TimeLagSeconds: r.TimeLagSeconds, LeaseActive: r.LeaseActive, HasCursor: r.HasCursor,
			WorkerID: OptUUID(r.LeaseID), LastConsumedAt: OptTime(r.LastConsumedAt)}
		q := out[r.Queue]
		q.Partitions = append(q.Partitions, p)
		out[r.Queue] = q
	}
	return out, nil
}

// LaggingPartition is a cursor behind by more than the asked threshold (snake_case on the wire).
type LaggingPartition struct {
	ConsumerGroup      string  `json:"consumer_group"`
	QueueName          string  `json:"queue_name"`
	PartitionName      string  `json:"partition_name"`
	PartitionID        string  `json:"partition_id"`
	WorkerID           *string `json:"worker_id"`
	OffsetLag          int64   `json:"offset_lag"`
	TimeLagSeconds     float64 `json:"time_lag_seconds"`
	LagHours           float64 `json:"lag_hours"`
	OldestUnconsumedAt string  `json:"oldest_unconsumed_at"`
	LastConsumedAt     *string `json:"last_consumed_at"`
	HasCursor          bool    `json:"has_cursor"`
}

// LaggingPartitions lists the (group, partition) pairs whose oldest message after the group's position
// is older than minLag, worst first; partitions a group never read are among them.
func (g *Groups) LaggingPartitions(ctx context.Context, minLag time.Duration) ([]LaggingPartition, error) {
	rows, err := g.st.Groups().LaggingPartitions(ctx, minLag)
	if err != nil {
		return nil, OpFailed("lagging partitions", err)
	}
	out := make([]LaggingPartition, len(rows))
	for i, r := range rows {
		l := LaggingPartition{ConsumerGroup: r.Group, QueueName: r.Queue, PartitionName: r.Partition,
			PartitionID: r.PartitionID.String(), OffsetLag: r.OffsetLag, TimeLagSeconds: r.TimeLagSeconds,
			LagHours: r.TimeLagSeconds / 3600, OldestUnconsumedAt: ISOMillis(r.OldestUnconsumedAt),
			WorkerID: OptUUID(r.LeaseID), LastConsumedAt: OptTime(r.LastConsumedAt), HasCursor: r.HasCursor}
		out[i] = l
	}
	return out, nil
}

// DeleteGroupResult answers a consumer-group delete.
type DeleteGroupResult struct {
	Success           bool   `json:"success"`
	ConsumerGroup     string `json:"consumerGroup"`
	QueueName         string `json:"queueName,omitempty"`
	DeletedPartitions int64  `json:"deletedPartitions"`
	MetadataDeleted   bool   `json:"metadataDeleted"`
}

// DeleteConsumerGroup removes a group's cursors (on one queue, or all when queue is ""); ErrNotFound
// when it had none and no subscription either.
func (g *Groups) DeleteConsumerGroup(ctx context.Context, group, queue string, deleteMetadata bool) (*DeleteGroupResult, error) {
	cursors, meta, err := g.st.Groups().DeleteGroup(ctx, group, queue, deleteMetadata)
	if err != nil {
		return nil, OpFailed("delete consumer group", err)
	}
	g.announce(notify.Change{Kind: notify.GroupDeleted, Name: group})
	if cursors == 0 && meta == 0 {
		if queue != "" {
			return nil, notFound("consumer group %q has no cursors on queue %q", group, queue)
		}
		return nil, notFound("consumer group %q not found", group)
	}
	return &DeleteGroupResult{Success: true, ConsumerGroup: group, QueueName: queue, DeletedPartitions: cursors,
		MetadataDeleted: deleteMetadata && meta > 0}, nil
}

// SubscriptionResult is the answer to moving a group's subscription point.
type SubscriptionResult struct {
	Success       bool   `json:"success"`
	ConsumerGroup string `json:"consumerGroup"`
	NewTimestamp  string `json:"newTimestamp"`
	RowsUpdated   int64  `json:"rowsUpdated"`
}

// UpdateSubscription moves a group's subscription point; cursors that have consumed nothing yet move too.
func (g *Groups) UpdateSubscription(ctx context.Context, group string, ts time.Time) (*SubscriptionResult, error) {
	n, err := g.st.Groups().UpdateSubscription(ctx, group, ts)
	if err != nil {
		return nil, OpFailed("update subscription", err)
	}
	if n == 0 {
		return nil, notFound("consumer group %q has no recorded subscription", group)
	}
	return &SubscriptionResult{Success: true, ConsumerGroup: group, NewTimestamp: ISOMillis(ts), RowsUpdated: n}, nil
}

// SeekResult is the answer to seeking a group on a queue; TargetTimestamp is null for a seek to the end.
type SeekResult struct {
	Success           bool    `json:"success"`
	ConsumerGroup     string  `json:"consumerGroup"`
	QueueName         string  `json:"queueName"`
	SeekToEnd         bool    `json:"seekToEnd"`
	TargetTimestamp   *string `json:"targetTimestamp"`
	PartitionsUpdated int64   `json:"partitionsUpdated"`
}

// SeekQueue places a group's position on every partition of a queue, read by the group or not, at the
// end or at a point in time, ending its leases; partitions created later start at their beginning.
// Messages after the new position are delivered (again); those before it are skipped. PartitionsUpdated
// counts the queue's partitions; a NotFoundError for an unknown queue.
func (g *Groups) SeekQueue(ctx context.Context, group, queue string, toEnd bool, ts time.Time) (*SeekResult, error) {
	if group == "" {
		group = QueueMode
	}
	n, err := g.st.Groups().SeekQueue(ctx, group, queue, toEnd, ts)
	if err != nil {
		return nil, OpFailedOr("seek", err, "queue %q not found", queue)
	}
	var target *string
	if !toEnd {
		target = OptTime(&ts)
	}
	g.hub.Announce(queue, int(n))
	return &SeekResult{Success: true, ConsumerGroup: group, QueueName: queue, SeekToEnd: toEnd, TargetTimestamp: target,
		PartitionsUpdated: n}, nil
}

// PartitionSeekResult is the answer to seeking a group on one partition to its end.
type PartitionSeekResult struct {
	Success       bool   `json:"success"`
	ConsumerGroup string `json:"consumerGroup"`
	QueueName     string `json:"queueName"`
	PartitionName string `json:"partitionName"`
	Updated       bool   `json:"updated"`
	CursorMovedTo int64  `json:"cursorMovedTo"`
}

// SeekPartition moves a group's cursor on one partition to its end.
func (g *Groups) SeekPartition(ctx context.Context, group, queue, partition string) (*PartitionSeekResult, error) {
	if group == "" {
		group = QueueMode
	}
	seq, err := g.st.Groups().SeekPartition(ctx, group, queue, partition)
	if err != nil {
		if err == store.ErrNotFound {
			return nil, notFound("partition %q of queue %q not found", partition, queue)
		}
		return nil, OpFailed("seek", err)
	}
	return &PartitionSeekResult{Success: true, ConsumerGroup: group, QueueName: queue, PartitionName: partition,
		Updated: true, CursorMovedTo: seq}, nil
}
