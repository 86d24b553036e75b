package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

var groupColumns = []column{{"CG", "name", false}, {"QUEUE", "queueName", false}, {"MEMBERS", "members", false},
	{"PARTITIONS", "partitions", true}, {"LAG", "totalLag", false}, {"PARTITIONS-LAGGING", "partitionsWithLag", false},
	{"MAX-LAG-S", "maxTimeLag", false}, {"PENDING", "messages.pending", true}, {"COMPLETED", "messages.completed", true},
	{"DLQ", "messages.deadLetter", true}, {"STATE", "state", false},
	{"MODE", "subscriptionMode", true}, {"SUBSCRIBED", "subscriptionCreatedAt", true}}

var lagColumns = []column{{"CG", "consumer_group", false}, {"QUEUE", "queue_name", false}, {"PARTITION", "partition_name", false},
	{"OFFSET-LAG", "offset_lag", false}, {"TIME-LAG-S", "time_lag_seconds", false}, {"OLDEST", "oldest_unconsumed_at", true},
	{"READ", "has_cursor", true}, {"LAST-CONSUMED", "last_consumed_at", true}}

func (a *app) groupsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "groups",
		Aliases: []string{"cg", "consumer-groups", "group"},
		Short:   "List, describe, seek and delete consumer groups; show lag",
		Example: `  queenctl groups list
  queenctl groups describe billing
  queenctl groups seek billing orders --to beginning
  queenctl groups lag --min-seconds 60
  queenctl groups delete billing --queue orders --yes`,
	}
	var w watchFlags
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List consumer groups per queue (queue mode included)",
		Example: "  queenctl groups list -o wide\n  queenctl groups list --watch",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.showWatched(cmd.Context(), w, view{columns: groupColumns, name: func(r map[string]any) string { return "cg/" + str(r["name"]) }}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.ConsumerGroups(ctx)
			})
		},
	}
	w.register(list)
	describe := &cobra.Command{
		Use:     "describe CG",
		Aliases: []string{"get", "show"},
		Short:   "Show a group's position on every partition of its queues (exit 5 when unknown)",
		Example: "  queenctl groups describe billing -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			m, err := c.ConsumerGroup(args[0]).Get(cmd.Context())
			if err != nil {
				return err
			}
			if len(m) == 0 {
				return &exitError{code: ExitNotFound, err: fmt.Errorf("consumer group %q has no cursor on any queue", args[0])}
			}
			var rows []map[string]any
			for _, q := range sortedKeysOf(m) {
				for _, p := range m[q] {
					rows = append(rows, map[string]any{"queue": q, "partition": p.Partition, "offsetLag": p.OffsetLag,
						"timeLagSeconds": p.TimeLagSeconds, "totalConsumed": p.TotalConsumed, "lastConsumedAt": p.LastConsumedAt,
						"leaseActive": p.LeaseActive, "workerId": p.WorkerID, "hasCursor": p.HasCursor})
				}
			}
			return a.print(view{data: m, columns: []column{{"QUEUE", "queue", false}, {"PARTITION", "partition", false},
				{"CONSUMED", "totalConsumed", false}, {"OFFSET-LAG", "offsetLag", false}, {"TIME-LAG-S", "timeLagSeconds", false},
				{"LEASED", "leaseActive", false}, {"READ", "hasCursor", true}, {"LAST-CONSUMED", "lastConsumedAt", true}, {"WORKER", "workerId", true}},
				name: func(r map[string]any) string { return str(r["queue"]) + "/" + str(r["partition"]) }}.withRows(rows))
		},
	}
	cmd.AddCommand(list, describe, a.seekCmd("seek CG QUEUE"), a.groupsDeleteCmd(), a.lagCmd())
	return cmd
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

// seekGroup moves a group on a queue: end|now|latest → to the end; anything else → to that time.
func seekGroup(ctx context.Context, c *client.Client, group, queue, to string) (client.SeekResult, error) {
	g := c.ConsumerGroup(group)
	switch strings.ToLower(to) {
	case "end", "now", "latest":
		return g.SeekToEnd(ctx, queue)
	}
	t, err := parseTime(to, time.Now().UTC())
	if err != nil {
		return client.SeekResult{}, err
	}
	return g.SeekTo(ctx, queue, t)
}

func (a *app) seekCmd(use string) *cobra.Command {
	var to, partition string
	var dry bool
	cmd := &cobra.Command{
		Use:   use,
		Short: "Move a consumer group's position on a queue (replay or skip)",
		Long: `Place a consumer group on every partition of a queue, read or not: --to end|now|latest skips the
backlog; --to beginning replays everything; --to TIME (1h ago, RFC 3339, …) replays what came after it.
With --partition only that partition moves, and only to the end. An unknown queue exits 5.`,
		Example: `  queenctl groups seek billing orders --to beginning
  queenctl replay orders --cg billing --to "2h ago"
  queenctl groups seek billing orders --to end --partition eu`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return usageErr("--to is required (end, beginning or a time)")
			}
			var group, queue string
			if strings.HasPrefix(use, "replay") {
				queue, group = args[0], cmd.Flag("cg").Value.String()
				if group == "" {
					return usageErr("--cg is required")
				}
			} else {
				group, queue = args[0], args[1]
			}
			if partition != "" && !strings.EqualFold(to, "end") && !strings.EqualFold(to, "now") && !strings.EqualFold(to, "latest") {
				return usageErr("a partition seek only goes to the end (--to end)")
			}
			if dry {
				return a.print(view{data: map[string]any{"consumerGroup": group, "queue": queue, "partition": partition, "to": to, "dryRun": true}})
			}
			if strings.EqualFold(to, "end") || strings.EqualFold(to, "now") || strings.EqualFold(to, "latest") {
			} else if _, err := parseTime(to, time.Now()); err != nil {
				return err
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			if partition != "" {
				r, err := c.ConsumerGroup(group).SeekPartitionToEnd(cmd.Context(), queue, partition)
				if err != nil {
					return err
				}
				return a.print(view{data: r, columns: []column{{"CG", "consumerGroup", false}, {"QUEUE", "queueName", false},
					{"PARTITION", "partitionName", false}, {"SUCCESS", "success", false}}})
			}
			r, err := seekGroup(cmd.Context(), c, group, queue, to)
			if err != nil {
				return err
			}
			return a.print(view{data: r, columns: []column{{"CG", "consumerGroup", false}, {"QUEUE", "queueName", false},
				{"TO-END", "seekToEnd", false}, {"TIMESTAMP", "targetTimestamp", false}, {"PARTITIONS", "partitionsUpdated", false}}})
		},
	}
	if strings.HasPrefix(use, "replay") {
		cmd.Args = cobra.ExactArgs(1)
		cmd.Flags().String("cg", "", "consumer group to move (required)")
	} else {
		cmd.Args = cobra.ExactArgs(2)
	}
	cmd.Flags().StringVar(&to, "to", "", "end | beginning | a time")
	cmd.Flags().StringVarP(&partition, "partition", "p", "", "only this partition (to the end)")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "print the seek without sending it")
	return cmd
}

func (a *app) replayCmd() *cobra.Command {
	cmd := a.seekCmd("replay QUEUE --cg CG --to TIME")
	cmd.Short = "Replay a queue for a consumer group from a point in time (groups seek)"
	return cmd
}

func (a *app) groupsDeleteCmd() *cobra.Command {
	var queue string
	var meta, yes bool
	cmd := &cobra.Command{
		Use:     "delete CG",
		Aliases: []string{"rm"},
		Short:   "Delete a consumer group's cursors (on every queue, or one with --queue)",
		Example: "  queenctl groups delete billing --yes\n  queenctl groups delete billing --queue orders --metadata --yes",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			what := "delete consumer group " + args[0]
			if queue != "" {
				what += " on " + queue
			}
			if err := a.confirm(yes, what); err != nil {
				return err
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			g := c.ConsumerGroup(args[0])
			var r client.GroupDeleted
			if queue != "" {
				r, err = g.DeleteForQueue(cmd.Context(), queue, meta)
			} else {
				r, err = g.Delete(cmd.Context(), meta)
			}
			if err != nil {
				return err
			}
			return a.print(view{data: r, columns: []column{{"CG", "consumerGroup", false}, {"QUEUE", "queueName", false},
				{"PARTITIONS", "deletedPartitions", false}, {"METADATA", "metadataDeleted", false}},
				name: func(r map[string]any) string { return "cg/" + str(r["consumerGroup"]) }})
		},
	}
	cmd.Flags().StringVar(&queue, "queue", "", "only this queue")
	cmd.Flags().BoolVar(&meta, "metadata", false, "also delete the subscription record (the next pop subscribes afresh)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (a *app) lagCmd() *cobra.Command {
	var minSecs int
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "lag",
		Short: "Show partitions whose oldest unconsumed message is older than --min-seconds, per consumer group (never-read partitions included)",
		Example: `  queenctl lag
  queenctl groups lag --min-seconds 300 --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if minSecs < 0 {
				return usageErr("--min-seconds must not be negative")
			}
			return a.showWatched(cmd.Context(), w, view{columns: lagColumns,
				name: func(r map[string]any) string {
					return str(r["consumer_group"]) + "/" + str(r["queue_name"]) + "/" + str(r["partition_name"])
				}}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.LaggingPartitions(ctx, time.Duration(minSecs)*time.Second)
			})
		},
	}
	cmd.Flags().IntVar(&minSecs, "min-seconds", 0, "minimum lag in seconds")
	w.register(cmd)
	return cmd
}
