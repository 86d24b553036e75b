package ctl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

var messageColumns = []column{{"TX", "transactionId", false}, {"QUEUE", "queue", false}, {"PARTITION", "partition", false},
	{"STATUS", "status", false}, {"CREATED", "createdAt", false}, {"PARTITIONID", "partitionId", true},
	{"PRODUCER", "producerSub", true}, {"TRACE", "traceId", true}}

func msgName(r map[string]any) string { return str(r["partitionId"]) + "/" + str(r["transactionId"]) }

func (a *app) messagesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "messages",
		Aliases: []string{"message", "msg"},
		Short:   "List, show and delete stored messages",
		Example: `  queenctl messages list --queue orders --status pending
  queenctl messages get 3f2e… 0a1b…
  queenctl messages delete 3f2e… 0a1b… --yes`,
	}
	var f client.MessageFilter
	var w watchFlags
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List messages, newest first",
		Example: `  queenctl messages list --queue orders
  queenctl messages list --queue orders --cg billing --status completed -o wide
  queenctl messages list --queue orders -o jsonpath='{.messages[*].transactionId}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.showWatched(cmd.Context(), w, view{items: "messages", columns: messageColumns, name: msgName}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Messages(ctx, f)
			})
		},
	}
	lf := list.Flags()
	lf.StringVar(&f.Queue, "queue", "", "only this queue")
	lf.StringVarP(&f.Partition, "partition", "p", "", "only this partition (name)")
	lf.StringVar(&f.Status, "status", "", "pending | processing | completed | failed (for --cg)")
	lf.StringVar(&f.ConsumerGroup, "cg", "", "consumer group the status is relative to (default: queue mode)")
	lf.IntVar(&f.Limit, "limit", 100, "page size")
	lf.IntVar(&f.Offset, "offset", 0, "page offset")
	w.register(list)
	get := &cobra.Command{
		Use:     "get PARTITION_ID TRANSACTION_ID",
		Aliases: []string{"describe", "show"},
		Short:   "Show one message with its payload (404 exits 5)",
		Example: "  queenctl messages get 3f2e… 0a1b…\n  queenctl messages get 3f2e… 0a1b… -o jsonpath='{.payload}'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.show(cmd.Context(), view{columns: append(messageColumns[:5:5], column{"DATA", "payload", false}), name: msgName}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Message(ctx, args[0], args[1])
			})
		},
	}
	var yes bool
	del := &cobra.Command{
		Use:     "delete PARTITION_ID TRANSACTION_ID",
		Aliases: []string{"rm"},
		Short:   "Delete one message",
		Example: "  queenctl messages delete 3f2e… 0a1b… --yes",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.confirm(yes, "delete message "+args[1]); err != nil {
				return err
			}
			return a.show(cmd.Context(), view{columns: []column{{"TX", "transactionId", false}, {"PARTITIONID", "partitionId", false}, {"SUCCESS", "success", false}}, name: msgName}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.DeleteMessage(ctx, args[0], args[1])
			})
		},
	}
	del.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	traces := &cobra.Command{
		Use:     "traces PARTITION_ID TRANSACTION_ID",
		Short:   "Show a message's trace events",
		Example: "  queenctl messages traces 3f2e… 0a1b…",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.messageTraces(cmd.Context(), args[0], args[1])
		},
	}
	cmd.AddCommand(list, get, del, traces)
	return cmd
}

var traceColumns = []column{{"AT", "created_at", false}, {"EVENT", "event_type", false}, {"NAMES", "trace_names", false},
	{"DATA", "data", false}, {"TX", "transaction_id", true}, {"PARTITION", "partition_name", true}, {"CG", "consumer_group", true}}

func (a *app) messageTraces(ctx context.Context, pid, tx string) error {
	return a.show(ctx, view{items: "traces", columns: traceColumns, name: func(r map[string]any) string { return str(r["id"]) }}, func(ctx context.Context, c *client.Client) (any, error) {
		return c.MessageTraces(ctx, pid, tx)
	})
}

// ---- dead letters ----

var dlqColumns = []column{{"TX", "transactionId", false}, {"QUEUE", "queue", false}, {"PARTITION", "partition", false},
	{"CG", "consumerGroup", false}, {"RETRIES", "retryCount", false}, {"ERROR", "errorMessage", false},
	{"FAILED-AT", "failedAt", false}, {"PARTITIONID", "partitionId", true}, {"DATA", "data", true}}

type dlqFilterFlags struct {
	queue, group, partition, from, to string
	limit, offset                     int
}

func (f *dlqFilterFlags) register(cmd *cobra.Command, paging bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.queue, "queue", "", "only this queue")
	fl.StringVar(&f.group, "cg", "", "only this consumer group")
	fl.StringVarP(&f.partition, "partition", "p", "", "only this partition (name)")
	fl.StringVar(&f.from, "from", "", "failed at or after (1h ago, RFC 3339, …)")
	fl.StringVar(&f.to, "to", "", "failed at or before")
	if paging {
		fl.IntVar(&f.limit, "limit", 100, "page size")
		fl.IntVar(&f.offset, "offset", 0, "page offset")
	}
}

func (f *dlqFilterFlags) filter() (client.DLQFilter, error) {
	from, err := timeFlag(f.from)
	if err != nil {
		return client.DLQFilter{}, err
	}
	to, err := timeFlag(f.to)
	if err != nil {
		return client.DLQFilter{}, err
	}
	return client.DLQFilter{Queue: f.queue, ConsumerGroup: f.group, Partition: f.partition, From: from, To: to,
		Limit: f.limit, Offset: f.offset}, nil
}

func (f *dlqFilterFlags) any() bool {
	return f.queue != "" || f.group != "" || f.partition != "" || f.from != "" || f.to != ""
}

func (a *app) dlqCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "dlq",
		Aliases: []string{"dead-letters"},
		Short:   "List, show, retry and delete dead letters (one, or in bulk by filter)",
		Example: `  queenctl dlq list --queue orders
  queenctl dlq retry 3f2e… 0a1b…
  queenctl dlq retry --all --queue orders --from "1h ago" --yes
  queenctl dlq delete --all --queue orders --dry-run`,
	}
	var lf dlqFilterFlags
	var w watchFlags
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List dead letters, newest failure first",
		Example: "  queenctl dlq list --queue orders --cg billing\n  queenctl dlq list --from '2h ago' -o wide",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			f, err := lf.filter()
			if err != nil {
				return err
			}
			return a.watch(cmd.Context(), w, func(ctx context.Context) error {
				page, err := c.DLQ(ctx, f)
				if err != nil {
					return err
				}
				return a.print(view{data: page, items: "messages", columns: dlqColumns, name: msgName})
			})
		},
	}
	lf.register(list, true)
	w.register(list)
	get := &cobra.Command{
		Use:     "get PARTITION_ID TRANSACTION_ID",
		Aliases: []string{"describe", "show"},
		Short:   "Show one dead letter with its payload (404 exits 5)",
		Example: "  queenctl dlq get 3f2e… 0a1b… -o yaml",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.show(cmd.Context(), view{columns: append(dlqColumns[:7:7], column{"DATA", "data", false}), name: msgName}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.DLQMessage(ctx, args[0], args[1])
			})
		},
	}
	cmd.AddCommand(list, get,
		a.dlqActionCmd("retry", "Serve dead letters again to their consumer group", "retried",
			func(ctx context.Context, c *client.Client, pid, tx string) error {
				return c.RetryDLQMessage(ctx, pid, tx)
			}),
		a.dlqActionCmd("delete", "Discard dead letters", "deleted",
			func(ctx context.Context, c *client.Client, pid, tx string) error {
				return c.DeleteDLQMessage(ctx, pid, tx)
			}))
	return cmd
}

// dlqActionCmd builds retry and delete: one dead letter by address, or every one matching the
// filter flags with --all (after confirmation; --dry-run lists what would be touched).
func (a *app) dlqActionCmd(verb, short, done string, act func(context.Context, *client.Client, string, string) error) *cobra.Command {
	var f dlqFilterFlags
	var all, yes, dry bool
	aliases := []string{}
	if verb == "delete" {
		aliases = []string{"rm", "drain"}
	} else {
		aliases = []string{"requeue"}
	}
	cmd := &cobra.Command{
		Use:     verb + " [PARTITION_ID TRANSACTION_ID] | --all [filters]",
		Aliases: aliases,
		Short:   short,
		Example: fmt.Sprintf(`  queenctl dlq %[1]s 3f2e… 0a1b…
  queenctl dlq %[1]s --all --queue orders --cg billing --yes
  queenctl dlq %[1]s --all --queue orders --from "1h ago" --dry-run`, verb),
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch {
			case all && len(args) > 0:
				return usageErr("give PARTITION_ID TRANSACTION_ID or --all, not both")
			case !all && len(args) != 2:
				return usageErr("give PARTITION_ID TRANSACTION_ID, or --all with filters")
			case all && !f.any():
				return usageErr("--all needs at least one filter (--queue, --cg, --partition, --from, --to)")
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			if !all {
				if err := act(ctx, c, args[0], args[1]); err != nil {
					return err
				}
				return a.print(view{data: []map[string]any{{"partitionId": args[0], "transactionId": args[1], "result": done}},
					columns: []column{{"TX", "transactionId", false}, {"RESULT", "result", false}}, name: msgName})
			}
			filter, err := f.filter()
			if err != nil {
				return err
			}
			// Collect the matches first: acting while paging would shift the pages.
			var targets []client.DLQMessage
			filter.Limit = 1000
			for {
				page, err := c.DLQ(ctx, filter)
				if err != nil {
					return err
				}
				targets = append(targets, page.Messages...)
				if len(page.Messages) < filter.Limit {
					break
				}
				filter.Offset += len(page.Messages)
			}
			if len(targets) == 0 {
				a.info("no dead letter matches")
				return errNoop
			}
			result := done
			if dry {
				result = "would be " + done
			} else if err := a.confirm(yes, fmt.Sprintf("%s %d dead letters", verb, len(targets))); err != nil {
				return err
			}
			rows := make([]map[string]any, 0, len(targets))
			for _, m := range targets {
				if !dry {
					if err := act(ctx, c, m.PartitionID, m.TransactionID); err != nil && !client.IsNotFound(err) {
						return err
					}
				}
				rows = append(rows, map[string]any{"partitionId": m.PartitionID, "transactionId": m.TransactionID,
					"queue": m.Queue, "consumerGroup": m.ConsumerGroup, "result": result})
			}
			return a.print(view{data: rows, columns: []column{{"TX", "transactionId", false}, {"QUEUE", "queue", false},
				{"CG", "consumerGroup", false}, {"RESULT", "result", false}}, name: msgName})
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&all, "all", false, "act on every dead letter matching the filters")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation (bulk)")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what --all would touch, change nothing")
	return cmd
}

func jsonField(raw json.RawMessage, path string) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return str(lookup(v, path))
}
