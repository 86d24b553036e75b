package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"
	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

type pushFlags struct {
	data         []string
	file         string
	partition    string
	partitionKey string
	traceID      string
	txID         string
	wrapped      bool
	batch        int
	concurrency  int
	dryRun       bool
	progress     string
	results      bool
	ordered      bool
}

// pushItem is one parsed input line.
type pushItem struct {
	partition string
	item      client.PushItem
	size      int64 // input bytes it came from, for the progress bar
}

// pushSummary is what push prints.
type pushSummary struct {
	Queue      string              `json:"queue"`
	Pushed     int64               `json:"pushed"`
	Queued     int64               `json:"queued"`
	Duplicate  int64               `json:"duplicate"`
	Buffered   int64               `json:"buffered"`
	Failed     int64               `json:"failed"`
	Seconds    float64             `json:"seconds"`
	PerSecond  float64             `json:"messagesPerSecond"`
	DryRun     bool                `json:"dryRun,omitempty"`
	Results    []client.PushResult `json:"results,omitempty"`
	resultsMux sync.Mutex
}

func (a *app) pushCmd() *cobra.Command {
	var f pushFlags
	cmd := &cobra.Command{
		Use:   "push QUEUE [JSON...]",
		Short: "Push messages from arguments, a file or stdin (JSON lines)",
		Long: `Push messages to a queue. Payloads come from the JSON arguments, from --data, or from a file (-f)
or stdin as JSON lines (one payload per line; empty lines are skipped). Large inputs are pushed in
batches of --batch items by --concurrency parallel requests, with a progress bar on a terminal.

With --wrapped each line is an envelope {"data":…, "transactionId":…, "traceId":…, "partition":…}.
--partition-key takes the partition from a field of each payload (a dot path such as customer.id).
Every item gets a transaction id (generated when absent), so a request retried after a server error
is reported duplicate rather than stored twice.

Order: with --concurrency above 1, batches are in flight together, so messages keep the input's
order only within a batch. --ordered sends one request at a time, keeping the input's order in
every partition (at a lower rate).`,
		Example: `  queenctl push orders '{"id":1}' '{"id":2}'
  queenctl push orders --data '{"id":1}' --partition eu --transaction-id order-1
  queenctl push orders -f orders.jsonl --batch 500 --concurrency 8
  queenctl push orders -f orders.jsonl --ordered
  producer | queenctl push orders --partition-key customer.id
  queenctl push orders -f envelopes.jsonl --wrapped`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeQueues,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.push(cmd.Context(), args[0], args[1:], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.data, "data", nil, "a JSON payload (repeatable)")
	fl.StringVarP(&f.file, "file", "f", "", "JSON lines file, or - for stdin (stdin is read when nothing else is given)")
	fl.StringVarP(&f.partition, "partition", "p", "", "partition (default \"Default\")")
	fl.StringVar(&f.partitionKey, "partition-key", "", "dot path of a payload field whose value names the partition")
	fl.StringVar(&f.traceID, "trace-id", "", "trace id (a UUID) for every message")
	fl.StringVar(&f.txID, "transaction-id", "", "transaction id (idempotency key) of a single message")
	fl.BoolVar(&f.wrapped, "wrapped", false, "lines are envelopes {data, transactionId, traceId, partition}")
	fl.IntVar(&f.batch, "batch", 500, "items per push request")
	fl.IntVar(&f.concurrency, "concurrency", 8, "push requests in flight")
	fl.BoolVar(&f.dryRun, "dry-run", false, "parse and count the input without pushing")
	fl.StringVar(&f.progress, "progress", "auto", "progress display: auto (a bar on a terminal), always, never")
	fl.BoolVar(&f.results, "results", false, "include every item's result in the output")
	fl.BoolVar(&f.ordered, "ordered", false, "keep the input order in every partition (one request in flight)")
	return cmd
}

func (a *app) push(ctx context.Context, queue string, args []string, f pushFlags) error {
	if f.batch < 1 || f.batch > 10000 {
		return usageErr("--batch must be 1..10000")
	}
	if f.concurrency < 1 || f.concurrency > 256 {
		return usageErr("--concurrency must be 1..256")
	}
	if f.partition != "" && f.partitionKey != "" {
		return usageErr("--partition and --partition-key are exclusive")
	}
	if f.ordered {
		f.concurrency = 1
	}
	switch f.progress {
	case "auto", "always", "never":
	default:
		return usageErr("--progress must be auto, always or never")
	}
	inline := append(append([]string{}, args...), f.data...)
	if len(inline) > 0 && f.file != "" {
		return usageErr("give payloads as arguments/--data or with -f, not both")
	}
	var src io.Reader
	var total int64
	switch {
	case len(inline) > 0:
		src = strings.NewReader(strings.Join(inline, "\n"))
	case f.file == "-" || (f.file == "" && !a.env.StdinTTY):
		src = a.env.Stdin
	case f.file != "":
		fh, err := os.Open(f.file)
		if err != nil {
			return usageErr("%v", err)
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil {
			total = st.Size()
		}
		src = fh
	default:
		return usageErr("nothing to push: give JSON arguments, --data, -f FILE or pipe JSON lines")
	}
	var c *client.Client
	if !f.dryRun {
		var err error
		if c, err = a.conn(); err != nil {
			return err
		}
	}
	sum := &pushSummary{Queue: queue, DryRun: f.dryRun}
	prog := a.newProgress(f.progress, total)
	start := time.Now()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []pushItem, f.concurrency*2)
	var readErr error
	go func() {
		defer close(batches)
		readErr = a.readPushItems(ctx, src, f, batches)
	}()
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err; cancel() }) }
	for range f.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := a.pushBatch(ctx, c, queue, b, sum, f); err != nil {
					fail(err)
					for range batches { // drain so the reader can finish
					}
					return
				}
				var bytes int64
				for _, it := range b {
					bytes += it.size
				}
				prog.add(int64(len(b)), bytes)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	prog.done()
	if firstErr != nil {
		return firstErr
	}
	if readErr != nil {
		return readErr
	}
	sum.Seconds = el.Seconds()
	if el > 0 {
		sum.PerSecond = float64(sum.Pushed) / el.Seconds()
	}
	if err := a.print(view{data: sum, columns: []column{{"QUEUE", "queue", false}, {"PUSHED", "pushed", false},
		{"QUEUED", "queued", false}, {"DUPLICATE", "duplicate", false}, {"BUFFERED", "buffered", false},
		{"FAILED", "failed", false}, {"SECONDS", "seconds", true}, {"MSG/S", "messagesPerSecond", true}},
		name: func(map[string]any) string { return "queue/" + queue }}); err != nil {
		return err
	}
	if sum.Pushed == 0 {
		return errNoop
	}
	return nil
}

// readPushItems parses the input into batches. Items of one batch share a partition, because the
// SDK addresses one partition per push request.
func (a *app) readPushItems(ctx context.Context, src io.Reader, f pushFlags, out chan<- []pushItem) error {
	r := bufio.NewReaderSize(src, 1<<20)
	pending := map[string][]pushItem{}
	flush := func(p string) bool {
		b := pending[p]
		if len(b) == 0 {
			return true
		}
		delete(pending, p)
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	n := 0
	var carry int64 // bytes of blank lines, counted with the next item
	for line := 1; ; line++ {
		raw, err := r.ReadBytes('\n')
		if len(raw) > 0 {
			size := int64(len(raw)) + carry
			txt := trimSpace(raw)
			if len(txt) > 0 {
				carry = 0
				it, perr := parsePushLine(txt, f)
				if perr != nil {
					return usageErr("line %d: %v", line, perr)
				}
				it.size = size
				n++
				if f.txID != "" && n > 1 {
					return usageErr("--transaction-id is for a single message")
				}
				pending[it.partition] = append(pending[it.partition], it)
				if len(pending[it.partition]) >= f.batch && !flush(it.partition) {
					return ctx.Err()
				}
			} else {
				carry = size
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
	}
	for p := range pending {
		if !flush(p) {
			return ctx.Err()
		}
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func parsePushLine(txt []byte, f pushFlags) (pushItem, error) {
	if !json.Valid(txt) {
		return pushItem{}, errors.New("not valid JSON")
	}
	payload := json.RawMessage(append([]byte(nil), txt...))
	it := pushItem{partition: f.partition, item: client.PushItem{Payload: payload, TraceID: f.traceID, TransactionID: f.txID}}
	if f.wrapped {
		var env struct {
			Data          json.RawMessage `json:"data"`
			TransactionID string          `json:"transactionId"`
			TraceID       string          `json:"traceId"`
			Partition     string          `json:"partition"`
		}
		if err := json.Unmarshal(txt, &env); err != nil {
			return pushItem{}, fmt.Errorf("envelope: %v", err)
		}
		if env.Data == nil {
			env.Data = json.RawMessage("null")
		}
		it.item.Payload = env.Data
		if env.TransactionID != "" {
			it.item.TransactionID = env.TransactionID
		}
		if env.TraceID != "" {
			it.item.TraceID = env.TraceID
		}
		if env.Partition != "" {
			it.partition = env.Partition
		}
		payload = env.Data
	}
	if f.partitionKey != "" {
		var v any
		_ = json.Unmarshal(payload, &v)
		key := str(lookup(v, f.partitionKey))
		if key == "" {
			return pushItem{}, fmt.Errorf("payload has no %q field for --partition-key", f.partitionKey)
		}
		it.partition = key
	}
	return it, nil
}

func (a *app) pushBatch(ctx context.Context, c *client.Client, queue string, b []pushItem, sum *pushSummary, f pushFlags) error {
	items := make([]client.PushItem, len(b))
	for i, it := range b {
		items[i] = it.item
	}
	if f.dryRun {
		atomic.AddInt64(&sum.Pushed, int64(len(items)))
		return nil
	}
	q := c.Queue(queue)
	if b[0].partition != "" {
		q = q.Partition(b[0].partition)
	}
	res, err := q.Push(ctx, items...)
	if err != nil {
		return err
	}
	atomic.AddInt64(&sum.Pushed, int64(len(res)))
	for _, r := range res {
		switch r.Status {
		case client.PushQueued:
			atomic.AddInt64(&sum.Queued, 1)
		case client.PushDuplicate:
			atomic.AddInt64(&sum.Duplicate, 1)
		case client.PushBuffered:
			atomic.AddInt64(&sum.Buffered, 1)
		default:
			atomic.AddInt64(&sum.Failed, 1)
		}
	}
	if f.results {
		sum.resultsMux.Lock()
		sum.Results = append(sum.Results, res...)
		sum.resultsMux.Unlock()
	}
	return nil
}

// pushProgress shows push progress on stderr: a go-pretty bar on a terminal, a plain line per
// second otherwise (with --progress always), nothing with never or auto off a terminal.
type pushProgress struct {
	pw       progress.Writer
	tr       *progress.Tracker
	msgs     atomic.Int64
	bytes    atomic.Int64
	total    int64
	stop     chan struct{}
	finished chan struct{}
}

func (a *app) newProgress(mode string, total int64) *pushProgress {
	p := &pushProgress{total: total}
	tty := a.env.StderrTTY
	if mode == "never" || (mode == "auto" && !tty) || a.g.quiet {
		return p
	}
	p.stop, p.finished = make(chan struct{}), make(chan struct{})
	if tty {
		pw := progress.NewWriter()
		pw.SetOutputWriter(a.env.Stderr)
		pw.SetUpdateFrequency(200 * time.Millisecond)
		pw.SetAutoStop(false)
		pw.Style().Visibility.ETA = true
		pw.Style().Visibility.Speed = true
		pw.SetTrackerLength(30)
		units := progress.UnitsDefault
		tot := total
		msg := "push"
		if total > 0 {
			units = progress.UnitsBytes
		}
		p.tr = &progress.Tracker{Message: msg, Total: tot, Units: units}
		pw.AppendTracker(p.tr)
		p.pw = pw
		go pw.Render()
		go func() {
			defer close(p.finished)
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					p.update()
				}
			}
		}()
		return p
	}
	start := time.Now()
	go func() {
		defer close(p.finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				p.line(a, start)
				return
			case <-t.C:
				p.line(a, start)
			}
		}
	}()
	return p
}

func (p *pushProgress) update() {
	if p.total > 0 {
		p.tr.SetValue(p.bytes.Load())
	} else {
		p.tr.SetValue(p.msgs.Load())
	}
}

func (p *pushProgress) line(a *app, start time.Time) {
	n := p.msgs.Load()
	rate := float64(n) / max(time.Since(start).Seconds(), 1e-9)
	if p.total > 0 {
		fmt.Fprintf(a.env.Stderr, "pushed %d messages (%.1f%% of input, %.0f msg/s)\n", n, 100*float64(p.bytes.Load())/float64(p.total), rate)
	} else {
		fmt.Fprintf(a.env.Stderr, "pushed %d messages (%.0f msg/s)\n", n, rate)
	}
}

func (p *pushProgress) add(msgs, bytes int64) {
	p.msgs.Add(msgs)
	p.bytes.Add(bytes)
}

func (p *pushProgress) done() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.finished
	if p.pw != nil {
		p.update()
		p.tr.MarkAsDone()
		time.Sleep(250 * time.Millisecond) // one more render shows the finished bar
		p.pw.Stop()
		for p.pw.IsRenderInProgress() {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
