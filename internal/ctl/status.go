package ctl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

func (a *app) statusCmd() *cobra.Command {
	var ns, task string
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "status [QUEUE]",
		Short: "Show message counts per queue and consumer group, or one queue's partitions",
		Example: `  queenctl status
  queenctl status --namespace billing --watch
  queenctl status orders -o wide`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			return a.watch(cmd.Context(), w, func(ctx context.Context) error {
				if len(args) == 1 {
					raw, err := c.StatusQueue(ctx, args[0])
					if err != nil {
						return err
					}
					return a.print(view{data: raw, toRows: groupRowsAt("partitions"),
						columns: append(slices.Clone(partitionColumns), column{"LAST-ACTIVITY", "lastActivity", true}),
						name:    func(r map[string]any) string { return "partition/" + str(r["name"]) }})
				}
				out, err := queuesWithGroups(ctx, c, ns, task)
				if err != nil {
					return err
				}
				return a.print(view{data: out, toRows: groupRowsAt(""), columns: withGroupCounts([]column{{"QUEUE", "name", false},
					{"NAMESPACE", "namespace", false}, {"TASK", "task", false}, {"PARTITIONS", "partitions", true}},
					column{"LAG", "group.lag.messages", true}, column{"PARTITIONS-LAGGING", "group.lag.partitions", true}),
					name: func(r map[string]any) string { return "queue/" + str(r["name"]) }})
			})
		},
	}
	cmd.Flags().StringVar(&ns, "namespace", "", "only queues of this namespace")
	cmd.Flags().StringVar(&task, "task", "", "only queues of this task")
	w.register(cmd)
	return cmd
}

// analyticsRoutes are the read-only dashboard series, by sub-command.
var analyticsRoutes = []struct{ name, path, short string }{
	{"overview", "/api/v1/status", "dashboard summary: throughput, totals, leases, dead letters"},
	{"throughput", "/api/v1/status/analytics", "ingest series by minute, hour or day"},
	{"queue-lag", "/api/v1/analytics/queue-lag", "pop lag per queue and minute"},
	{"queue-ops", "/api/v1/analytics/queue-ops", "operation counters per queue and bucket"},
	{"retention", "/api/v1/analytics/retention", "retention deletions per bucket"},
	{"buffers", "/api/v1/status/buffers", "state of the broker's disk spool"},
	{"resources", "/api/v1/resources/overview", "system totals, lag and throughput"},
}

func (a *app) analyticsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "analytics",
		Aliases: []string{"an", "a"},
		Short:   "Read the broker's dashboard and analytics series",
		Example: `  queenctl analytics overview --from "1h ago"
  queenctl analytics queue-ops --queue orders --from "6h ago" -o json`,
	}
	for _, r := range analyticsRoutes {
		var from, to, queue string
		sub := &cobra.Command{
			Use:     r.name,
			Short:   "Show the " + r.short + " (GET " + r.path + ")",
			Example: "  queenctl analytics " + r.name + " --from '1h ago' -o json",
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				v := url.Values{}
				for k, s := range map[string]string{"from": from, "to": to} {
					if s == "" {
						continue
					}
					t, err := timeFlag(s)
					if err != nil {
						return err
					}
					v.Set(k, t.UTC().Format(time.RFC3339Nano))
				}
				if queue != "" {
					v.Set("queue", queue)
				}
				return a.show(cmd.Context(), view{}, func(ctx context.Context, c *client.Client) (any, error) {
					return c.GetRaw(ctx, r.path, v)
				})
			},
		}
		sub.Flags().StringVar(&from, "from", "", "start of the window (1h ago, RFC 3339, …)")
		sub.Flags().StringVar(&to, "to", "", "end of the window")
		sub.Flags().StringVar(&queue, "queue", "", "only this queue (where the route filters by queue)")
		cmd.AddCommand(sub)
	}
	return cmd
}

func (a *app) namespacesCmd() *cobra.Command {
	return a.rollupCmd("namespaces", []string{"namespace", "ns"}, "namespace", func(ctx context.Context, c *client.Client) (json.RawMessage, error) {
		return c.Namespaces(ctx)
	})
}

func (a *app) tasksCmd() *cobra.Command {
	return a.rollupCmd("tasks", []string{"task"}, "task", func(ctx context.Context, c *client.Client) (json.RawMessage, error) {
		return c.Tasks(ctx)
	})
}

func (a *app) rollupCmd(use string, aliases []string, field string, get func(context.Context, *client.Client) (json.RawMessage, error)) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   "List " + use + " with their queues and message counts",
		Example: "  queenctl " + use + "\n  queenctl " + use + " -o name",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			raw, err := get(cmd.Context(), c)
			if err != nil {
				return err
			}
			return a.print(view{data: raw, items: use, columns: []column{{upper(field), field, false}, {"QUEUES", "queues", false},
				{"PARTITIONS", "partitions", false}, {"PENDING", "messages.pending", false}, {"TOTAL", "messages.total", false}},
				name: func(r map[string]any) string { return field + "/" + str(r[field]) }})
		},
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func (a *app) tracesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "traces",
		Aliases: []string{"trace"},
		Short:   "Read trace events (names, by name, by message) and record one",
		Example: `  queenctl traces names
  queenctl traces by-name checkout-42
  queenctl traces by-message 3f2e… 0a1b…`,
	}
	var limit, offset int
	names := &cobra.Command{
		Use:     "names",
		Aliases: []string{"list", "ls"},
		Short:   "List trace names with their event counts",
		Example: "  queenctl traces names --limit 20",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.show(cmd.Context(), view{items: "trace_names", columns: []column{{"NAME", "trace_name", false},
				{"EVENTS", "trace_count", false}, {"MESSAGES", "message_count", false}, {"LAST", "last_seen", false}},
				name: func(r map[string]any) string { return str(r["trace_name"]) }}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.TraceNames(ctx, limit, offset)
			})
		},
	}
	names.Flags().IntVar(&limit, "limit", 100, "page size")
	names.Flags().IntVar(&offset, "offset", 0, "page offset")
	var blimit, boffset int
	byName := &cobra.Command{
		Use:     "by-name NAME",
		Short:   "List the trace events carrying a name",
		Example: "  queenctl traces by-name checkout-42 -o wide",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.show(cmd.Context(), view{items: "traces", columns: traceColumns, name: func(r map[string]any) string { return str(r["id"]) }}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.TracesByName(ctx, args[0], blimit, boffset)
			})
		},
	}
	byName.Flags().IntVar(&blimit, "limit", 100, "page size")
	byName.Flags().IntVar(&boffset, "offset", 0, "page offset")
	byMsg := &cobra.Command{
		Use:     "by-message PARTITION_ID TRANSACTION_ID",
		Short:   "List a message's trace events",
		Example: "  queenctl traces by-message 3f2e… 0a1b…",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.messageTraces(cmd.Context(), args[0], args[1])
		},
	}
	var event, data, group string
	var tnames []string
	record := &cobra.Command{
		Use:     "record PARTITION_ID TRANSACTION_ID",
		Short:   "Record a trace event on a message",
		Example: `  queenctl traces record 3f2e… 0a1b… --name checkout-42 --event info --data '{"step":"paid"}'`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !json.Valid([]byte(data)) {
				return usageErr("--data must be JSON")
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			body := map[string]any{"partitionId": args[0], "transactionId": args[1], "data": json.RawMessage(data),
				"eventType": event, "traceNames": tnames}
			if group != "" {
				body["consumerGroup"] = group
			}
			raw, err := c.Do(cmd.Context(), http.MethodPost, "/api/v1/traces", nil, body)
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: []column{{"SUCCESS", "success", false}, {"ID", "traceId", false}}})
		},
	}
	record.Flags().StringVar(&event, "event", "info", "event type")
	record.Flags().StringVar(&data, "data", "{}", "event data (JSON)")
	record.Flags().StringArrayVar(&tnames, "name", nil, "trace name (repeatable)")
	record.Flags().StringVar(&group, "cg", "", "consumer group that recorded it")
	cmd.AddCommand(names, byName, byMsg, record)
	return cmd
}
