package ctl

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/queen-go/queen/client"
)

// Counts of a queue only mean something relative to a consumer group: "completed" for one group is
// "pending" for another. So every table of counts shows one row per group of the queue (queue mode
// being one of them), labelled with the group, and never a queue-wide figure that belongs to nobody.

// queueModeLabel is how tables name queue mode (the competing consumers without a group name).
const queueModeLabel = "(queue mode)"

// groupLabel names the group of a normalised per-group entry.
func groupLabel(g map[string]any) string {
	if b, _ := g["queueMode"].(bool); b || g["consumerGroup"] == client.QueueMode {
		return queueModeLabel
	}
	return str(g["consumerGroup"])
}

// perGroupRows expands normalised items (queues or partitions) into one row per entry of their
// consumerGroups list: the item's fields, and the group's under "group" with a "label" and, for
// partitions, a "position" (the cursor, or "never read").
func perGroupRows(items []any) []map[string]any {
	var rows []map[string]any
	for _, it := range items {
		m, _ := it.(map[string]any)
		groups, _ := m["consumerGroups"].([]any)
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			if gm == nil {
				continue
			}
			group := map[string]any{"label": groupLabel(gm)}
			for k, v := range gm {
				group[k] = v
			}
			// Tables show the lag to a tenth of a second; json keeps the broker's figure.
			if sec, err := strconv.ParseFloat(str(lookup(gm, "lag.seconds")), 64); err == nil {
				group["lagSeconds"] = strconv.FormatFloat(sec, 'f', 1, 64)
			}
			if c, ok := gm["cursor"]; ok {
				group["position"] = c
				if c == nil {
					group["position"] = "never read"
				}
			}
			row := map[string]any{"group": group}
			for k, v := range m {
				if k != "consumerGroups" {
					row[k] = v
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// groupRowsAt returns a view's toRows reading the items at path ("" for the data itself).
func groupRowsAt(path string) func(any) []any {
	return func(data any) []any { return toAny(perGroupRows(rowsOf(data, path))) }
}

// queueWithGroups is a queue of the listing with its groups' counts (from /consumer-groups).
type queueWithGroups struct {
	client.QueueSummary
	ConsumerGroups []client.GroupCounts `json:"consumerGroups"`
}

// queuesWithGroups lists the queues of namespace ns and task task with every group's counts.
func queuesWithGroups(ctx context.Context, c *client.Client, ns, task string) ([]queueWithGroups, error) {
	qs, err := c.Queues(ctx)
	if err != nil {
		return nil, err
	}
	gs, err := c.ConsumerGroups(ctx)
	if err != nil {
		return nil, err
	}
	byQueue := map[string][]client.GroupCounts{}
	for _, g := range gs {
		gc := client.GroupCounts{ConsumerGroup: g.Name, QueueMode: g.QueueMode || g.Name == client.QueueMode,
			Messages: g.Messages, Lag: client.GroupLag{Seconds: g.MaxTimeLag, Partitions: g.PartitionsWithLag}}
		if g.TotalLag != nil {
			gc.Lag.Messages = int(*g.TotalLag)
		}
		byQueue[g.QueueName] = append(byQueue[g.QueueName], gc)
	}
	qs = filterQueues(qs, ns, task)
	out := make([]queueWithGroups, len(qs))
	for i, q := range qs {
		groups := byQueue[q.Name]
		slices.SortFunc(groups, compareGroups)
		if groups == nil {
			groups = []client.GroupCounts{}
		}
		out[i] = queueWithGroups{QueueSummary: q, ConsumerGroups: groups}
	}
	return out, nil
}

// compareGroups puts queue mode first, then the named groups by name.
func compareGroups(a, b client.GroupCounts) int {
	if a.QueueMode != b.QueueMode {
		if a.QueueMode {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ConsumerGroup, b.ConsumerGroup)
}

// groupCountColumns are the per-group count columns of every counts table.
var groupCountColumns = []column{{"GROUP", "group.label", false},
	{"PENDING", "group.messages.pending", false}, {"PROCESSING", "group.messages.processing", false},
	{"COMPLETED", "group.messages.completed", false}, {"DLQ", "group.messages.deadLetter", false},
	{"TOTAL", "group.messages.total", false}, {"LAG-S", "group.lagSeconds", false}}

// withGroupCounts returns head, the per-group count columns, then tail.
func withGroupCounts(head []column, tail ...column) []column {
	return append(append(slices.Clone(head), groupCountColumns...), tail...)
}
