package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

// messageOut is the printed form of a delivered message (pop, consume): one NDJSON object per
// message, whose fields feed `queenctl ack --batch -` directly.
type messageOut struct {
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	PartitionID   string          `json:"partitionId"`
	TransactionID string          `json:"transactionId"`
	LeaseID       string          `json:"leaseId,omitempty"`
	ConsumerGroup string          `json:"consumerGroup,omitempty"`
	TraceID       string          `json:"traceId,omitempty"`
	ProducerSub   string          `json:"producerSub,omitempty"`
	CreatedAt     string          `json:"createdAt"`
	RetryCount    int             `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
}

func messageOf(m client.Message) messageOut {
	return messageOut{Queue: m.Queue, Partition: m.Partition, PartitionID: m.PartitionID, TransactionID: m.TransactionID,
		LeaseID: m.LeaseID, ConsumerGroup: m.ConsumerGroup, TraceID: m.TraceID, ProducerSub: m.ProducerSub,
		CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano), RetryCount: m.RetryCount, Data: m.Data}
}

var deliveredColumns = []column{{"TX", "transactionId", false}, {"PARTITION", "partition", false},
	{"RETRIES", "retryCount", false}, {"CREATED", "createdAt", false}, {"DATA", "data", false},
	{"PARTITIONID", "partitionId", true}, {"LEASE", "leaseId", true}, {"QUEUE", "queue", true}}

type popFlags struct {
	limit, maxPartitions int
	wait                 bool
	timeout              time.Duration
	group, partition     string
	namespace, task      string
	autoAck              bool
	fromMode, since      string
}

func (f *popFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVarP(&f.limit, "limit", "n", 1, "maximum messages to take")
	fl.IntVar(&f.maxPartitions, "max-partitions", 1, "partitions one pop may claim")
	fl.BoolVar(&f.wait, "wait", false, "long-poll until a message arrives or --timeout passes")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "long-poll deadline with --wait")
	fl.StringVar(&f.group, "cg", "", "consumer group (default: queue mode)")
	fl.StringVarP(&f.partition, "partition", "p", "", "only this partition")
	fl.StringVar(&f.namespace, "namespace", "", "pop across queues of this namespace (QUEUE may be omitted)")
	fl.StringVar(&f.task, "task", "", "pop across queues of this task (QUEUE may be omitted)")
	fl.BoolVar(&f.autoAck, "auto-ack", false, "acknowledge at delivery (no lease; at-most-once)")
	fl.StringVar(&f.fromMode, "from-mode", "", "a new consumer group starts at: all | new")
	fl.StringVar(&f.since, "since", "", "a new consumer group starts after this time (10m ago, RFC 3339, …)")
}

func (f *popFlags) queue(a *app, args []string) (*client.Queue, error) {
	c, err := a.conn()
	if err != nil {
		return nil, err
	}
	var q *client.Queue
	switch {
	case len(args) == 1:
		q = c.Queue(args[0])
	case f.namespace != "" || f.task != "":
		q = c.Matching(f.namespace, f.task)
	default:
		return nil, usageErr("give a QUEUE or --namespace/--task")
	}
	if f.partition != "" {
		q = q.Partition(f.partition)
	}
	if f.group != "" {
		q = q.Group(f.group)
	}
	switch f.fromMode {
	case "":
	case "all", "new":
		q = q.SubscriptionMode(f.fromMode)
	case "new-only":
		q = q.SubscriptionMode("new")
	default:
		return nil, usageErr("--from-mode must be all or new")
	}
	if f.since != "" {
		t, err := timeFlag(f.since)
		if err != nil {
			return nil, err
		}
		q = q.SubscriptionFrom(t)
	}
	return q, nil
}

func (a *app) popCmd() *cobra.Command {
	var f popFlags
	cmd := &cobra.Command{
		Use:   "pop [QUEUE]",
		Short: "Take messages (with a lease unless --auto-ack); exit 4 when there is none",
		Long: `Take up to --limit messages. Without --auto-ack each message is leased: acknowledge it with
'queenctl ack' (pop's NDJSON lines can be piped into 'queenctl ack --batch -'). Output is one JSON
object per message (NDJSON) unless -o says otherwise.`,
		Example: `  queenctl pop orders
  queenctl pop orders -n 10 --wait --timeout 30s --cg billing
  queenctl pop orders -n 100 --auto-ack -o table
  queenctl pop orders -n 10 | queenctl ack --batch -`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.limit < 1 {
				return usageErr("--limit must be at least 1")
			}
			q, err := f.queue(a, args)
			if err != nil {
				return err
			}
			msgs, err := q.Pop(cmd.Context(), client.PopOptions{Batch: f.limit, Partitions: f.maxPartitions, Wait: f.wait,
				Timeout: f.timeout, AutoAck: f.autoAck})
			if err != nil {
				return err
			}
			if len(msgs) == 0 {
				a.info("no message available")
				return errNoop
			}
			out := make([]messageOut, len(msgs))
			for i, m := range msgs {
				out[i] = messageOf(m)
			}
			return a.print(view{data: out, columns: deliveredColumns, format: "ndjson",
				name: func(r map[string]any) string { return str(r["partitionId"]) + "/" + str(r["transactionId"]) }})
		},
	}
	f.register(cmd)
	return cmd
}

func (a *app) peekCmd() *cobra.Command {
	var group, partition string
	var limit int
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Show the next pending messages with their payloads, without taking them",
		Long: `Show up to --limit pending messages of a queue (for a consumer group with --cg), oldest first, with
their payloads. Nothing is leased or acknowledged.`,
		Example: `  queenctl peek orders
  queenctl peek orders -n 5 --cg billing -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, info, err := a.queueInfo(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			guess := info.Totals.Pending
			for _, p := range info.Partitions {
				if p.Name == partition {
					guess = p.Stats.Pending
				}
			}
			// The listing is newest first and has no total: find how many pending rows there are,
			// then read the last page, which holds the oldest, i.e. what a consumer gets next.
			f := client.MessageFilter{Queue: args[0], Partition: partition, Status: "pending", ConsumerGroup: group}
			n, err := countMessages(cmd.Context(), c, f, guess)
			if err != nil {
				return err
			}
			f.Offset, f.Limit = max(n-limit, 0), limit
			raw, err := c.Messages(cmd.Context(), f)
			if err != nil {
				return err
			}
			var page struct {
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				return err
			}
			msgs := page.Messages
			for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
				msgs[i], msgs[j] = msgs[j], msgs[i]
			}
			for _, m := range msgs {
				d, err := c.Message(cmd.Context(), str(m["partitionId"]), str(m["transactionId"]))
				if err != nil {
					return err
				}
				var detail map[string]any
				if err := json.Unmarshal(d, &detail); err == nil {
					m["data"] = detail["payload"]
				}
			}
			if len(msgs) == 0 {
				a.info("no pending message")
				return errNoop
			}
			return a.print(view{data: msgs, columns: []column{{"TX", "transactionId", false}, {"PARTITION", "partition", false},
				{"CREATED", "createdAt", false}, {"DATA", "data", false}, {"PARTITIONID", "partitionId", true}},
				name: func(r map[string]any) string { return str(r["partitionId"]) + "/" + str(r["transactionId"]) }})
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 10, "messages to show")
	cmd.Flags().StringVar(&group, "cg", "", "consumer group whose next messages to show (default: queue mode)")
	cmd.Flags().StringVarP(&partition, "partition", "p", "", "only this partition")
	return cmd
}

// countMessages counts the rows a message listing returns (it has no total): it checks single-row
// pages around guess (the queue's exact pending count, usually right), gallops away from it when
// it is off, and bisects. A right guess costs two small requests.
func countMessages(ctx context.Context, c *client.Client, f client.MessageFilter, guess int) (int, error) {
	exists := func(off int) (bool, error) {
		if off < 0 {
			return true, nil
		}
		f.Offset, f.Limit = off, 1
		raw, err := c.Messages(ctx, f)
		if err != nil {
			return false, err
		}
		var page struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return false, err
		}
		return len(page.Messages) > 0, nil
	}
	// Find lo ≤ n < hi with a row at lo-1 (or lo = 0) and none at hi-1.
	guess = max(guess, 0)
	lo, hi := guess, guess+1
	ok, err := exists(guess - 1)
	if err != nil {
		return 0, err
	}
	if ok {
		for step := 1; ; step *= 2 {
			more, err := exists(hi - 1)
			if err != nil {
				return 0, err
			}
			if !more {
				break
			}
			lo, hi = hi, hi+step
		}
	} else {
		hi = guess
		for step := 1; ; step *= 2 {
			lo = max(hi-step, 0)
			ok, err := exists(lo - 1)
			if err != nil {
				return 0, err
			}
			if ok {
				break
			}
			hi = lo
		}
	}
	for lo < hi-1 {
		mid := (lo + hi) / 2
		ok, err := exists(mid - 1)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// ackLine is one line of `ack --batch` input; pop's output lines fit.
type ackLine struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId"`
	ConsumerGroup string `json:"consumerGroup"`
	Status        string `json:"status"`
	Error         string `json:"error"`
}

func (a *app) ackCmd() *cobra.Command {
	var pid, lease, group, reason, batch string
	var failed, dlq, retry bool
	cmd := &cobra.Command{
		Use:   "ack [TRANSACTION_ID]",
		Short: "Acknowledge messages: completed (default), --failed, --dlq or --retry",
		Long: `Acknowledge one message (TRANSACTION_ID with --partition-id, and --lease-id when it was leased) or,
with --batch FILE|-, every NDJSON line {transactionId, partitionId, leaseId[, status, error]} (what pop
prints). A rejected acknowledgement (expired lease, …) exits 2 and names the message.`,
		Example: `  queenctl ack 0a1b… --partition-id 3f2e… --lease-id 9c8d…
  queenctl ack 0a1b… --partition-id 3f2e… --failed --error "bad payload"
  queenctl pop orders -n 10 | queenctl ack --batch -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			status := client.StatusCompleted
			n := 0
			for _, b := range []bool{failed, dlq, retry} {
				if b {
					n++
				}
			}
			if n > 1 {
				return usageErr("--failed, --dlq and --retry are exclusive")
			}
			switch {
			case failed:
				status = client.StatusFailed
			case dlq:
				status = client.StatusDLQ
			case retry:
				status = client.StatusRetry
			}
			var acks []client.Ack
			switch {
			case batch != "" && len(args) > 0:
				return usageErr("give a TRANSACTION_ID or --batch, not both")
			case batch != "":
				var in io.Reader = a.env.Stdin
				if batch != "-" {
					b, err := a.readInput(batch)
					if err != nil {
						return err
					}
					in = bytesReader(b)
				}
				sc := bufio.NewScanner(in)
				sc.Buffer(make([]byte, 1<<20), 64<<20)
				for line := 1; sc.Scan(); line++ {
					txt := trimSpace(sc.Bytes())
					if len(txt) == 0 {
						continue
					}
					var l ackLine
					if err := json.Unmarshal(txt, &l); err != nil {
						return usageErr("line %d: %v", line, err)
					}
					if l.TransactionID == "" || l.PartitionID == "" {
						return usageErr("line %d: transactionId and partitionId are required", line)
					}
					s := status
					if l.Status != "" {
						s = client.AckStatus(l.Status)
					}
					g := l.ConsumerGroup
					if group != "" {
						g = group
					}
					if g == client.QueueMode {
						g = ""
					}
					e := l.Error
					if e == "" {
						e = reason
					}
					acks = append(acks, client.Ack{TransactionID: l.TransactionID, PartitionID: l.PartitionID,
						LeaseID: l.LeaseID, ConsumerGroup: g, Status: s, Error: e})
				}
				if err := sc.Err(); err != nil {
					return err
				}
				if len(acks) == 0 {
					a.info("no acknowledgement in the input")
					return errNoop
				}
			case len(args) == 1:
				if pid == "" {
					return usageErr("--partition-id is required")
				}
				acks = []client.Ack{{TransactionID: args[0], PartitionID: pid, LeaseID: lease, ConsumerGroup: group,
					Status: status, Error: reason}}
			default:
				return usageErr("give a TRANSACTION_ID (with --partition-id) or --batch FILE|-")
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			var results []client.AckResult
			// The batch route applies one consumer group to all items: send one request per group.
			byGroup := map[string][]client.Ack{}
			var order []string
			for _, k := range acks {
				if _, ok := byGroup[k.ConsumerGroup]; !ok {
					order = append(order, k.ConsumerGroup)
				}
				byGroup[k.ConsumerGroup] = append(byGroup[k.ConsumerGroup], k)
			}
			for _, g := range order {
				var res []client.AckResult
				if len(acks) == 1 {
					r, err := c.Ack(cmd.Context(), acks[0])
					var ae *client.AckError
					if err != nil && !errors.As(err, &ae) {
						return err
					}
					res = []client.AckResult{r}
				} else if res, err = c.AckBatch(cmd.Context(), byGroup[g]); err != nil {
					return err
				}
				results = append(results, res...)
			}
			if err := a.print(view{data: results, columns: []column{{"TX", "transactionId", false}, {"SUCCESS", "success", false},
				{"ERROR", "error", false}, {"DLQ", "dlq", false}, {"QUEUE", "queueName", true}, {"PARTITION", "partitionName", true}},
				name: func(r map[string]any) string { return str(r["transactionId"]) }}); err != nil {
				return err
			}
			rejected := 0
			for _, r := range results {
				if !r.Success {
					rejected++
				}
			}
			if rejected > 0 {
				return &exitError{code: ExitServer, err: fmt.Errorf("%d of %d acknowledgements rejected", rejected, len(results))}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&pid, "partition-id", "", "partition id of the message")
	fl.StringVar(&lease, "lease-id", "", "lease id of the delivery (checked by the broker when given)")
	fl.StringVar(&group, "cg", "", "consumer group (default: queue mode, or the lines' consumerGroup)")
	fl.BoolVar(&failed, "failed", false, "report failure (counts a retry; dead-letters past the retry limit)")
	fl.BoolVar(&dlq, "dlq", false, "send straight to the dead-letter queue")
	fl.BoolVar(&retry, "retry", false, "release for redelivery without counting a retry")
	fl.StringVar(&reason, "error", "", "failure reason recorded with --failed/--dlq")
	fl.StringVar(&batch, "batch", "", "NDJSON file of acknowledgements, or - for stdin")
	return cmd
}

func (a *app) consumeCmd() *cobra.Command {
	var f popFlags
	var follow, noAck bool
	var maxMsgs int
	cmd := &cobra.Command{
		Use:     "consume QUEUE",
		Aliases: []string{"tail"},
		Short:   "Print messages as they arrive (tail -f style), acknowledging them",
		Long: `Pop messages in a loop and print each as one NDJSON line (or a table row with -o table). Every
printed message is acknowledged (with the pop: --auto-ack semantics) unless --no-ack, which leaves
them leased until the lease expires. The default consumer group is queenctl-tail, so watching a
queue does not steal messages from its queue-mode consumers. Without -f it stops when the queue is
drained; with -f it waits for new messages until interrupted or --max-messages.`,
		Example: `  queenctl consume orders -f
  queenctl consume orders --cg audit --from-mode new -f
  queenctl tail orders --max-messages 100 -o table
  queenctl consume orders --cg "" -n 100   # drain in queue mode`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("cg") {
				f.group = "queenctl-tail"
			}
			q, err := f.queue(a, args)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			seen := 0
			format := a.outputFormat("ndjson")
			header := true
			for {
				batch := f.limit
				if maxMsgs > 0 {
					batch = min(batch, maxMsgs-seen)
				}
				msgs, err := q.Pop(ctx, client.PopOptions{Batch: batch, Partitions: f.maxPartitions, Wait: follow || f.wait,
					Timeout: f.timeout, AutoAck: !noAck})
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				if len(msgs) == 0 {
					if follow {
						continue
					}
					break
				}
				out := make([]messageOut, len(msgs))
				for i, m := range msgs {
					out[i] = messageOf(m)
				}
				if format == "table" || format == "wide" {
					saved := a.g.noHeaders
					a.g.noHeaders = saved || !header
					a.table(a.env.Stdout, rowsOfAny(out), deliveredColumns, format == "wide")
					a.g.noHeaders = saved
					header = false
				} else if err := a.print(view{data: out, columns: deliveredColumns, format: "ndjson"}); err != nil {
					return err
				}
				seen += len(msgs)
				if maxMsgs > 0 && seen >= maxMsgs {
					break
				}
			}
			if seen == 0 {
				a.info("no message available")
				return errNoop
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().Lookup("limit").Usage = "messages per pop"
	cmd.Flags().Lookup("limit").DefValue = "100"
	f.limit = 100
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep waiting for new messages")
	cmd.Flags().BoolVar(&noAck, "no-ack", false, "do not acknowledge (messages stay leased until the lease expires)")
	cmd.Flags().IntVar(&maxMsgs, "max-messages", 0, "stop after this many messages (0 = no limit)")
	return cmd
}

func rowsOfAny(v any) []any {
	n, _ := normalize(v)
	return rowsOf(n, "")
}

func (a *app) txCmd() *cobra.Command {
	var file string
	var dry bool
	cmd := &cobra.Command{
		Use:   "tx -f FILE",
		Short: "Commit a transaction bundle (acks and pushes in one PostgreSQL transaction)",
		Long: `Send {"operations":[…],"requiredLeases":[…]} from a file (or - for stdin) to POST /api/v1/transaction.
A rollback (QDUP duplicate push, QTXN rejected ack) prints the answer and exits 2.`,
		Example: `  queenctl tx -f bundle.json
  echo '{"operations":[{"type":"push","items":[{"queue":"q2","payload":{"x":1}}]}]}' | queenctl tx -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErr("tx needs -f FILE (or -f -)")
			}
			b, err := a.readInput(file)
			if err != nil {
				return err
			}
			var bundle struct {
				Operations []json.RawMessage `json:"operations"`
			}
			if err := json.Unmarshal(b, &bundle); err != nil {
				return usageErr("%s: %v", file, err)
			}
			if len(bundle.Operations) == 0 {
				return usageErr("%s: no operations", file)
			}
			if dry {
				return a.print(view{data: json.RawMessage(b), format: "json"})
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			res, err := c.CommitRaw(cmd.Context(), b)
			if err != nil {
				return err
			}
			if err := a.print(view{data: res, items: "results", columns: []column{{"INDEX", "index", false}, {"TYPE", "type", false},
				{"SUCCESS", "success", false}, {"TX", "transactionId", false}, {"ERROR", "error", false}}}); err != nil {
				return err
			}
			var out struct {
				Success bool   `json:"success"`
				Error   string `json:"error"`
			}
			_ = json.Unmarshal(res, &out)
			if !out.Success {
				return &exitError{code: ExitServer, err: fmt.Errorf("transaction rolled back: %s", out.Error)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "bundle file, or - for stdin")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "validate and print the bundle without sending it")
	return cmd
}

func (a *app) leaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "lease",
		Short:   "Extend the lease of popped messages",
		Example: "  queenctl lease extend 9c8d… --seconds 120",
	}
	var secs int
	ext := &cobra.Command{
		Use:     "extend LEASE_ID",
		Short:   "Extend every partition lease of a pop to at least now + --seconds",
		Example: "  queenctl lease extend 9c8d… --seconds 120",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			r, err := c.ExtendLease(cmd.Context(), args[0], time.Duration(secs)*time.Second)
			if errors.Is(err, client.ErrLeaseLost) && client.HTTPStatus(err) == 0 {
				return &exitError{code: ExitNotFound, err: err}
			}
			if err != nil {
				return err
			}
			return a.print(view{data: r, columns: []column{{"LEASE", "leaseId", false}, {"SUCCESS", "success", false}, {"EXPIRES", "expiresAt", false}}})
		},
	}
	ext.Flags().IntVar(&secs, "seconds", 60, "new minimum remaining lease time")
	cmd.AddCommand(ext)
	return cmd
}
