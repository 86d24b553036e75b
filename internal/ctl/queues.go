package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/setting"
)

// queueColumns show a queue's counts per consumer group, one row each.
var queueColumns = withGroupCounts([]column{{"NAME", "name", false}, {"NAMESPACE", "namespace", false},
	{"TASK", "task", false}, {"PARTITIONS", "partitions", false}},
	column{"LAG", "group.lag.messages", true}, column{"PARTITIONS-LAGGING", "group.lag.partitions", true},
	column{"CREATED", "createdAt", true})

func (a *app) queuesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "queues",
		Aliases: []string{"queue", "q"},
		Short:   "List, inspect, configure and delete queues",
		Example: `  queenctl queues list
  queenctl queues configure orders --lease-time 60 --retry-limit 5 --dlq
  queenctl queues describe orders
  queenctl queues delete orders --yes`,
	}
	cmd.AddCommand(a.queuesListCmd(), a.queuesGetCmd(), a.queuesDescribeCmd(), a.queuesConfigureCmd(), a.applyCmd(), a.queuesDeleteCmd())
	return cmd
}

func (a *app) queuesListCmd() *cobra.Command {
	var ns, task string
	var w watchFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List queues with message counts per consumer group",
		Example: `  queenctl queues list
  queenctl queues list --namespace billing -o wide
  queenctl queues list -o name
  queenctl queues list --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.showWatched(cmd.Context(), w, view{columns: queueColumns, toRows: groupRowsAt(""),
				name: func(r map[string]any) string { return "queue/" + str(r["name"]) }},
				func(ctx context.Context, c *client.Client) (any, error) {
					return queuesWithGroups(ctx, c, ns, task)
				})
		},
	}
	cmd.Flags().StringVar(&ns, "namespace", "", "only queues of this namespace")
	cmd.Flags().StringVar(&task, "task", "", "only queues of this task")
	w.register(cmd)
	return cmd
}

func (a *app) queuesGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "get QUEUE",
		Short:             "Show one queue with its counts per consumer group (404 exits 5)",
		Example:           "  queenctl queues get orders\n  queenctl queues get orders -o jsonpath='{.totals.pending}'",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, d, err := a.queueInfo(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			row, err := normalize(map[string]any{"name": d.Name, "namespace": d.Namespace, "task": d.Task,
				"partitions": len(d.Partitions), "consumerGroups": d.ConsumerGroups, "createdAt": d.CreatedAt})
			if err != nil {
				return err
			}
			return a.print(view{data: d, columns: queueColumns, name: func(map[string]any) string { return "queue/" + d.Name }}.withRows(perGroupRows([]any{row})))
		},
	}
}

// queueInfo connects and reads one queue's details: the start of the commands that show a queue
// or work from its counts.
func (a *app) queueInfo(ctx context.Context, name string) (*client.Client, client.QueueDetail, error) {
	c, err := a.conn()
	if err != nil {
		return nil, client.QueueDetail{}, err
	}
	d, err := c.Queue(name).Info(ctx)
	return c, d, err
}

// withRows makes table, name and ndjson output use rows while json and yaml print data.
func (v view) withRows(rows any) view { v.rows = rows; return v }

func (a *app) queuesDescribeCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "describe QUEUE",
		Aliases:           []string{"show"},
		Short:             "Show a queue's configuration, and its counts per consumer group and partition",
		Example:           "  queenctl queues describe orders\n  queenctl queues describe orders -o yaml",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			raw, err := c.StatusQueue(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var d any
			if err := json.Unmarshal(raw, &d); err != nil {
				return err
			}
			if f := a.outputFormat(""); f != "table" && f != "wide" {
				return a.print(view{data: raw, name: func(map[string]any) string { return "queue/" + args[0] }})
			}
			// Human form: a key/value block for the queue and its options, then the counts of each
			// consumer group, then each partition's counts per group.
			q, _ := normalize(lookup(d, "queue"))
			pairs := []map[string]any{}
			for _, k := range []string{"name", "namespace", "task", "priority", "createdAt"} {
				pairs = append(pairs, map[string]any{"k": k, "v": lookup(q, k)})
			}
			if cfg, ok := lookup(q, "config").(map[string]any); ok {
				for _, k := range sortedKeys(cfg) {
					// priority is shown above; maxQueueSize is the original's name for maxSize.
					if k != "priority" && k != "maxQueueSize" {
						pairs = append(pairs, map[string]any{"k": k, "v": cfg[k]})
					}
				}
			}
			wide := a.outputFormat("") == "wide"
			a.table(a.env.Stdout, toAny(pairs), []column{{"FIELD", "k", false}, {"VALUE", "v", false}}, false)
			fmt.Fprintln(a.env.Stdout)
			a.table(a.env.Stdout, toAny(perGroupRows([]any{d})), withGroupCounts(nil,
				column{"LAG", "group.lag.messages", false}, column{"PARTITIONS-LAGGING", "group.lag.partitions", false}), wide)
			fmt.Fprintln(a.env.Stdout)
			a.table(a.env.Stdout, groupRowsAt("partitions")(d), partitionColumns, wide)
			return nil
		},
	}
}

// partitionColumns show a partition's counts per consumer group, one row each.
var partitionColumns = withGroupCounts([]column{{"PARTITION", "name", false}},
	column{"LAG", "group.lag.messages", true}, column{"POSITION", "group.position", true}, column{"ID", "id", true})

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// queueFlags are the options of queues configure, bound to flags named like the API's camelCase
// options in kebab case. A flag that is not given leaves its option unset (the broker default); one
// given as 0 or false sets it to that, so --retry-limit 0 means no retries rather than the default.
type queueFlags struct {
	ns, task string
	o        client.QueueOptions
}

func (f *queueFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.ns, "namespace", "", "namespace of the queue")
	fl.StringVar(&f.task, "task", "", "task of the queue")
	fl.Var(optInt{&f.o.LeaseTime}, "lease-time", "seconds a pop's lease lasts (default 300)")
	fl.Var(optInt{&f.o.RetryLimit}, "retry-limit", "failed deliveries before dead-lettering (default 3)")
	fl.Var(optInt{&f.o.RetryDelay}, "retry-delay", "milliseconds before a failed message redelivers (default 1000)")
	fl.Var(optInt{&f.o.MaxSize}, "max-size", "maximum queued messages (default 0 = unlimited)")
	fl.Var(optInt{&f.o.TTL}, "ttl", "message time to live in seconds (default 3600)")
	fl.Var(optInt{&f.o.Priority}, "priority", "priority for namespace/task pops, higher first (default 0)")
	fl.Var(optInt{&f.o.DelayedProcessing}, "delayed-processing", "seconds a message stays invisible after push (default 0)")
	fl.Var(optInt{&f.o.WindowBuffer}, "window-buffer", "seconds a partition must be quiet before it is served (default 0)")
	fl.Var(optInt{&f.o.RetentionSeconds}, "retention", "delete pending messages older than this many seconds (needs --retention-enabled; default 0)")
	fl.Var(optInt{&f.o.CompletedRetentionSeconds}, "completed-retention", "delete consumed messages older than this many seconds (needs --retention-enabled; default 0)")
	boolFlag(fl, &f.o.RetentionEnabled, "retention-enabled", "enable the two retention settings")
	boolFlag(fl, &f.o.EncryptionEnabled, "encrypt", "encrypt payloads at rest (broker needs QUEEN_ENCRYPTION_KEY)")
	boolFlag(fl, &f.o.DeadLetterQueue, "dlq", "keep dead letters")
	boolFlag(fl, &f.o.DLQAfterMaxRetries, "dlq-after-max-retries", "dead-letter when the retry limit is exhausted")
	fl.Var(optInt{&f.o.MaxWaitTimeSeconds}, "max-wait-time", "dead-letter messages waiting longer than this many seconds (default 0 = never)")
}

// optInt is an integer flag that sets its option only when given.
type optInt struct{ p **int }

func (o optInt) String() string {
	if *o.p == nil {
		return ""
	}
	return strconv.Itoa(**o.p)
}

func (o optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*o.p = &v
	return nil
}

func (optInt) Type() string { return "int" }

// optBool is a boolean flag that sets its option only when given: --dlq, --dlq=true, --dlq=false
// (any spelling every switch reads: 1/0, yes/no, on/off).
type optBool struct{ p **bool }

func (o optBool) String() string {
	if *o.p == nil {
		return ""
	}
	return strconv.FormatBool(**o.p)
}

func (o optBool) Set(s string) error {
	v, err := setting.Bool(s)
	if err != nil {
		return err
	}
	*o.p = &v
	return nil
}

func (optBool) Type() string { return "bool" }

func boolFlag(fl *pflag.FlagSet, p **bool, name, usage string) {
	fl.VarPF(optBool{p}, name, "", usage).NoOptDefVal = "true"
}

func configuredView(res client.QueueConfigured) view {
	return view{data: res, columns: []column{{"QUEUE", "queue", false}, {"NAMESPACE", "namespace", false},
		{"TASK", "task", false}, {"CONFIGURED", "configured", false}, {"ID", "queueId", true}, {"OPTIONS", "options", true}},
		name: func(r map[string]any) string { return "queue/" + str(r["queue"]) }}
}

func (a *app) queuesConfigureCmd() *cobra.Command {
	var f queueFlags
	var dry bool
	cmd := &cobra.Command{
		Use:     "configure QUEUE",
		Aliases: []string{"create"},
		Short:   "Create a queue or replace its configuration",
		Long: `Create a queue or replace its configuration (POST /api/v1/configure). Like the API, configure is a
full replace: every option not given is reset to the broker default.`,
		Example: `  queenctl queues configure orders --lease-time 60 --retry-limit 5 --dlq --dlq-after-max-retries
  queenctl queues configure audit --retention-enabled --retention 86400 --completed-retention 3600
  queenctl queues configure orders --namespace billing --task invoices --priority 5 --dry-run -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dry {
				return a.print(view{data: map[string]any{"queue": args[0], "namespace": f.ns, "task": f.task, "options": f.o}, format: "json"})
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			res, err := c.Queue(args[0]).Namespace(f.ns).Task(f.task).Config(f.o).Create(cmd.Context())
			if err != nil {
				return err
			}
			return a.print(configuredView(res))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&dry, "dry-run", false, "print the request instead of sending it")
	return cmd
}

func (a *app) queuesDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:               "delete QUEUE...",
		Aliases:           []string{"rm"},
		Short:             "Delete queues with their partitions, messages and dead letters",
		Example:           "  queenctl queues delete orders --yes\n  queenctl queues delete a b c --yes",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.confirm(yes, "delete "+strings.Join(args, ", ")); err != nil {
				return err
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			var rows []map[string]any
			missing := 0
			for _, q := range args {
				existed, err := c.Queue(q).Delete(cmd.Context())
				if err != nil {
					return err
				}
				if !existed {
					missing++
				}
				rows = append(rows, map[string]any{"queue": q, "deleted": existed, "existed": existed})
			}
			if err := a.print(view{data: rows, columns: []column{{"QUEUE", "queue", false}, {"DELETED", "deleted", false}},
				name: func(r map[string]any) string { return "queue/" + str(r["queue"]) }}); err != nil {
				return err
			}
			if missing == len(args) {
				return &exitError{code: ExitNotFound, err: fmt.Errorf("no such queue: %s", strings.Join(args, ", "))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// ---- apply ----

// manifest is one document of an apply file.
type manifest struct {
	Kind      string         `yaml:"kind"`
	Name      string         `yaml:"name"`
	Namespace string         `yaml:"namespace"`
	Task      string         `yaml:"task"`
	Config    map[string]any `yaml:"config"`
	Options   map[string]any `yaml:"options"`
	Queue     string         `yaml:"queue"`
	SeekTo    string         `yaml:"seekTo"`
	SeekTo2   string         `yaml:"seek-to"`
}

// optionNames maps a normalised option key (lower case, no '-' or '_') to the API's camelCase name,
// so that leaseTime, leasetime, lease-time and lease_time all work. Unknown keys are an error,
// never silently dropped (the original CLI's bug).
var optionNames = func() map[string]string {
	m := map[string]string{}
	for _, k := range client.QueueOptionNames() {
		m[normKey(k)] = k
	}
	m["retention"] = "retentionSeconds"
	m["completedretention"] = "completedRetentionSeconds"
	m["maxwaittime"] = "maxWaitTimeSeconds"
	m["encrypt"] = "encryptionEnabled"
	m["dlq"] = "deadLetterQueue"
	return m
}()

func normKey(k string) string {
	return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
}

func queueOptions(in map[string]any) (client.QueueOptions, error) {
	var o client.QueueOptions
	out := map[string]any{}
	for k, v := range in {
		name, ok := optionNames[normKey(k)]
		if !ok {
			return o, fmt.Errorf("unknown queue option %q", k)
		}
		out[name] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return o, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&o); err != nil {
		return o, fmt.Errorf("queue options: %w", err)
	}
	return o, nil
}

func (a *app) readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(a.env.Stdin)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return b, nil
}

func (a *app) applyCmd() *cobra.Command {
	var file string
	var dry bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update queues and seek consumer groups from a YAML/JSON manifest",
		Long: `Apply every document of a YAML or JSON file ('---' separated). kind: Queue configures a queue with
its config (or options) block, whose keys are the API's camelCase option names (leaseTime,
retryLimit, retentionEnabled, …; kebab and lower case are accepted too; an unknown key is an
error). kind: ConsumerGroup seeks the group on its queue (seekTo: beginning | end | a time).`,
		Example: `  queenctl apply -f queues.yaml
  cat queues.yaml | queenctl apply -f -
  queenctl apply -f queues.yaml --dry-run

  # queues.yaml
  kind: Queue
  name: orders
  namespace: billing
  config: {leaseTime: 60, retryLimit: 5, deadLetterQueue: true}
  ---
  kind: ConsumerGroup
  name: analyzer
  queue: orders
  seekTo: beginning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErr("apply needs -f FILE (or -f - for stdin)")
			}
			b, err := a.readInput(file)
			if err != nil {
				return err
			}
			var docs []manifest
			dec := yaml.NewDecoder(bytes.NewReader(b))
			for {
				var m manifest
				err := dec.Decode(&m)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return usageErr("%s: %v", file, err)
				}
				if m.Kind == "" && m.Name == "" {
					continue
				}
				docs = append(docs, m)
			}
			// Validate everything before changing anything.
			type step struct {
				m    manifest
				opts client.QueueOptions
			}
			steps := make([]step, len(docs))
			for i, m := range docs {
				steps[i].m = m
				switch strings.ToLower(m.Kind) {
				case "queue":
					if m.Name == "" {
						return usageErr("document %d: a Queue needs a name", i+1)
					}
					src := m.Config
					if src == nil {
						src = m.Options
					}
					o, err := queueOptions(src)
					if err != nil {
						return usageErr("document %d (%s): %v", i+1, m.Name, err)
					}
					steps[i].opts = o
				case "consumergroup":
					if m.Name == "" || m.Queue == "" {
						return usageErr("document %d: a ConsumerGroup needs name and queue", i+1)
					}
					if m.SeekTo == "" {
						steps[i].m.SeekTo = m.SeekTo2
					}
				default:
					return usageErr("document %d: unknown kind %q (Queue, ConsumerGroup)", i+1, m.Kind)
				}
			}
			if len(steps) == 0 {
				a.info("no documents in %s", file)
				return errNoop
			}
			var c *client.Client
			if !dry {
				if c, err = a.conn(); err != nil {
					return err
				}
			}
			var rows []map[string]any
			for _, s := range steps {
				row := map[string]any{"kind": s.m.Kind, "name": s.m.Name}
				switch strings.ToLower(s.m.Kind) {
				case "queue":
					row["options"] = s.opts
					if !dry {
						if _, err := c.Queue(s.m.Name).Namespace(s.m.Namespace).Task(s.m.Task).Config(s.opts).Create(cmd.Context()); err != nil {
							return err
						}
					}
					row["result"] = "configured"
				case "consumergroup":
					row["queue"] = s.m.Queue
					if s.m.SeekTo != "" {
						row["seekTo"] = s.m.SeekTo
						row["result"] = "seeked"
						if !dry {
							// The broker places the group on every partition, read or not; only an
							// unknown queue fails (404, exit 5).
							if _, err := seekGroup(cmd.Context(), c, s.m.Name, s.m.Queue, s.m.SeekTo); err != nil {
								return err
							}
						}
					} else {
						row["result"] = "unchanged"
					}
				}
				if dry {
					row["result"] = "dry-run"
				}
				rows = append(rows, row)
			}
			return a.print(view{data: rows, columns: []column{{"KIND", "kind", false}, {"NAME", "name", false}, {"RESULT", "result", false}, {"OPTIONS", "options", true}},
				name: func(r map[string]any) string { return strings.ToLower(str(r["kind"])) + "/" + str(r["name"]) }})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "manifest file, or - for stdin")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "validate and print what would be applied")
	return cmd
}

func (a *app) completeQueues(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	c, err := a.conn()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	qs, err := c.Queues(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func (a *app) partitionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "partitions",
		Aliases: []string{"partition", "part"},
		Short:   "List a queue's partitions",
		Example: "  queenctl partitions list orders",
	}
	list := &cobra.Command{
		Use:               "list QUEUE",
		Aliases:           []string{"ls"},
		Short:             "List a queue's partitions with exact counts per consumer group",
		Example:           "  queenctl partitions list orders -o wide",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.show(cmd.Context(), view{columns: append(slices.Clone(partitionColumns), column{"CREATED", "createdAt", true}),
				toRows: groupRowsAt(""), name: func(r map[string]any) string { return "partition/" + str(r["name"]) }},
				func(ctx context.Context, c *client.Client) (any, error) {
					d, err := c.Queue(args[0]).Info(ctx)
					if err != nil {
						return nil, err
					}
					return d.Partitions, nil
				})
		},
	}
	cmd.AddCommand(list)
	return cmd
}

// filterQueues keeps the queues of namespace ns and task task; an empty filter keeps every queue.
func filterQueues(qs []client.QueueSummary, ns, task string) []client.QueueSummary {
	out := make([]client.QueueSummary, 0, len(qs))
	for _, q := range qs {
		if (ns == "" || q.Namespace == ns) && (task == "" || q.Task == task) {
			out = append(out, q)
		}
	}
	return out
}
