package faults

// HA load generator, shared by the fault tests that take PostgreSQL away under a running workload
// (failover, Patroni, poolers). It judges the broker only by what a client was told.
//
//	l := startHALoad(t, baseURL, haLoadOptions{Producers: 4, Groups: []string{"", "audit"}})
//	... fault ...
//	l.Stop()                 // stops producers, lets consumers drain what was answered, stops them
//	r := l.Verify(t)         // t.Logs a summary and returns the figures
//	r.requireExactlyOnce(t)  // 0 lost, 0 duplicated, 0 order violations in every group
//
// Producers: producer i pushes single-item requests into partition "p<i>" of opts.Queue, transactionId
// "p<i>-<seq>" (seq counts up per producer). A push answered 201 with status queued or buffered is
// "answered": the broker promised it. Any other answer (or none) is "unanswered": it may or may not be
// stored, and the verification accepts either.
//
// Consumers: for each group in opts.Groups ("" is queue mode) opts.ConsumersPerGroup loops pop with
// wait=true and ack every delivered message with one /ack/batch. An ack is "confirmed" when its answer
// says success:true.
//
// Verification, per group:
//   - Lost: answered pushes never delivered.
//   - Duplicates: a delivery by a pop sent after that message's ack was confirmed. Redelivery of a
//     message whose ack was never confirmed (lease expiry, an ack lost with a dying connection) is
//     at-least-once behaviour, not a duplicate.
//   - OrderViolations: per partition, a message delivered for the first time before a message of
//     smaller seq that was also delivered for the first time later.
//   - PushGap / PopGap: the longest time, between the first success and Stop, without any push answered
//     201, and without any pop delivering messages. Gap is the larger of the two: how long the service
//     was interrupted for a client doing both.
//
// Queues get a short lease (opts.LeaseSeconds, default 2 s) so that a lease taken by a pop whose answer
// was lost in the fault expires quickly.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type haLoadOptions struct {
	Queue             string        // default "haload"
	Producers         int           // partitions, one producer each; default 4
	Groups            []string      // consumer groups, "" = queue mode; default {""}
	ConsumersPerGroup int           // default 1
	Batch             int           // pop batch; default 10
	PushPause         time.Duration // pause between one producer's pushes; default 5 ms
	LeaseSeconds      int           // queue leaseTime; default 2
	DrainTimeout      time.Duration // how long Stop lets consumers catch up; default 30 s
	MoreBrokers       []string      // further broker base URLs; clients spread over all of them
}

// haDelivery is one delivery of one message to one group.
type haDelivery struct {
	part    string
	seq     int
	popSent time.Time
}

type haGroupState struct {
	mu         sync.Mutex
	deliveries []haDelivery
	ackedAt    map[string]time.Time // tx -> when its ack was confirmed
}

type haLoad struct {
	t      testing.TB
	opts   haLoadOptions
	bases  []string
	client *http.Client

	stopProducers chan struct{}
	stopConsumers chan struct{}
	producers     sync.WaitGroup
	consumers     sync.WaitGroup

	mu          sync.Mutex
	answered    map[string][]int // partition -> answered seqs in push order
	pushOK      []time.Time
	popOK       []time.Time
	stoppedAt   time.Time
	unanswered  atomic.Int64
	pushErrs    map[string]int // non-201 answer or transport error, by kind
	popErrs     map[string]int
	groups      map[string]*haGroupState
	stopOnce    sync.Once
	startedLoad time.Time
}

// haResult is what Verify found.
type haResult struct {
	Answered        int
	Unanswered      int
	Delivered       map[string]int // per group, deliveries including redeliveries
	Lost            map[string]int // per group
	Duplicates      map[string]int // per group
	OrderViolations map[string]int // per group
	LostExamples    []string
	DupExamples     []string
	PushGap, PopGap time.Duration
	Gap             time.Duration
	PushErrors      map[string]int
	PopErrors       map[string]int
}

// TotalLost and TotalDuplicates sum over groups.
func (r haResult) TotalLost() int       { return sum(r.Lost) }
func (r haResult) TotalDuplicates() int { return sum(r.Duplicates) }
func (r haResult) TotalOrder() int      { return sum(r.OrderViolations) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (r haResult) requireExactlyOnce(t testing.TB) {
	t.Helper()
	require.Positive(t, r.Answered, "no push was answered")
	require.Zero(t, r.TotalLost(), "answered pushes lost: %v e.g. %v", r.Lost, r.LostExamples)
	require.Zero(t, r.TotalDuplicates(), "duplicates: %v e.g. %v", r.Duplicates, r.DupExamples)
	require.Zero(t, r.TotalOrder(), "order violations: %v", r.OrderViolations)
}

// startHALoad configures the queue and starts producers and consumers against base (and opts.MoreBrokers).
func startHALoad(t testing.TB, base string, opts haLoadOptions) *haLoad {
	t.Helper()
	if opts.Queue == "" {
		opts.Queue = "haload"
	}
	if opts.Producers <= 0 {
		opts.Producers = 4
	}
	if len(opts.Groups) == 0 {
		opts.Groups = []string{""}
	}
	if opts.ConsumersPerGroup <= 0 {
		opts.ConsumersPerGroup = 1
	}
	if opts.Batch <= 0 {
		opts.Batch = 10
	}
	if opts.PushPause == 0 {
		opts.PushPause = 5 * time.Millisecond
	}
	if opts.LeaseSeconds <= 0 {
		opts.LeaseSeconds = 2
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	l := &haLoad{
		t: t, opts: opts, bases: append([]string{base}, opts.MoreBrokers...),
		// Keep-alives off: a connection the fault broke must not be reused for the next request.
		client:        &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		stopProducers: make(chan struct{}),
		stopConsumers: make(chan struct{}),
		answered:      map[string][]int{},
		pushErrs:      map[string]int{},
		popErrs:       map[string]int{},
		groups:        map[string]*haGroupState{},
		startedLoad:   time.Now(),
	}
	code, body, err := l.post(base+"/api/v1/configure", map[string]any{"queue": opts.Queue,
		"options": map[string]any{"leaseTime": opts.LeaseSeconds}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(body))
	for _, g := range opts.Groups {
		l.groups[g] = &haGroupState{ackedAt: map[string]time.Time{}}
	}
	for i := range opts.Producers {
		l.producers.Add(1)
		go l.produce(i)
	}
	n := 0
	for _, g := range opts.Groups {
		for range opts.ConsumersPerGroup {
			l.consumers.Add(1)
			go l.consume(g, l.bases[n%len(l.bases)])
			n++
		}
	}
	t.Cleanup(l.halt)
	return l
}

func (l *haLoad) post(u string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	resp, err := l.client.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func errKind(code int, err error) string {
	if err != nil {
		s := err.Error()
		for _, k := range []string{"connection refused", "connection reset", "EOF", "timeout"} {
			if strings.Contains(s, k) {
				return k
			}
		}
		return "transport"
	}
	return strconv.Itoa(code)
}

func (l *haLoad) produce(i int) {
	defer l.producers.Done()
	part := fmt.Sprint("p", i)
	base := l.bases[i%len(l.bases)]
	for seq := 0; ; seq++ {
		select {
		case <-l.stopProducers:
			return
		case <-time.After(l.opts.PushPause):
		}
		tx := fmt.Sprintf("%s-%08d", part, seq)
		code, body, err := l.post(base+"/api/v1/push", map[string]any{"items": []map[string]any{
			{"queue": l.opts.Queue, "partition": part, "payload": map[string]int{"p": i, "n": seq}, "transactionId": tx}}})
		var res []struct{ Status string }
		if err == nil && code == http.StatusCreated {
			err = json.Unmarshal(body, &res)
		}
		if err != nil || code != http.StatusCreated || len(res) != 1 || (res[0].Status != "queued" && res[0].Status != "buffered") {
			l.unanswered.Add(1)
			l.mu.Lock()
			l.pushErrs[errKind(code, err)]++
			l.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		l.answered[part] = append(l.answered[part], seq)
		l.pushOK = append(l.pushOK, time.Now())
		l.mu.Unlock()
	}
}

type haMessage struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	Partition     string `json:"partition"`
	LeaseID       string `json:"leaseId"`
}

func (l *haLoad) consume(group, base string) {
	defer l.consumers.Done()
	st := l.groups[group]
	q := url.Values{"batch": {strconv.Itoa(l.opts.Batch)}, "wait": {"true"}, "timeout": {"500"}}
	if group != "" {
		q.Set("consumerGroup", group)
	}
	popURL := base + "/api/v1/pop/queue/" + url.PathEscape(l.opts.Queue) + "?" + q.Encode()
	for {
		select {
		case <-l.stopConsumers:
			return
		default:
		}
		sent := time.Now()
		resp, err := l.client.Get(popURL)
		var body []byte
		code := 0
		if err == nil {
			code = resp.StatusCode
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err != nil || (code != http.StatusOK && code != http.StatusNoContent) {
			l.mu.Lock()
			l.popErrs[errKind(code, err)]++
			l.mu.Unlock()
			// Not the 5 s of Retry-After: the gap is what we measure, so retry soon.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if code == http.StatusNoContent {
			continue
		}
		var pr struct{ Messages []haMessage }
		if err := json.Unmarshal(body, &pr); err != nil || len(pr.Messages) == 0 {
			l.mu.Lock()
			l.popErrs["bad body"]++
			l.mu.Unlock()
			continue
		}
		st.mu.Lock()
		for _, m := range pr.Messages {
			part, seqText, _ := strings.Cut(m.TransactionID, "-")
			seq, _ := strconv.Atoi(seqText)
			st.deliveries = append(st.deliveries, haDelivery{part: part, seq: seq, popSent: sent})
		}
		st.mu.Unlock()
		l.mu.Lock()
		l.popOK = append(l.popOK, time.Now())
		l.mu.Unlock()
		acks := make([]map[string]any, len(pr.Messages))
		for i, m := range pr.Messages {
			acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID,
				"leaseId": m.LeaseID, "status": "completed"}
		}
		ackBody := map[string]any{"acknowledgments": acks}
		if group != "" {
			ackBody["consumerGroup"] = group
		}
		code, body, err = l.post(base+"/api/v1/ack/batch", ackBody)
		if err != nil || code != http.StatusOK {
			l.mu.Lock()
			l.popErrs["ack "+errKind(code, err)]++
			l.mu.Unlock()
			continue // unconfirmed: the lease expires and the batch comes again
		}
		var results []struct {
			TransactionID string `json:"transactionId"`
			Success       bool   `json:"success"`
		}
		_ = json.Unmarshal(body, &results)
		now := time.Now()
		st.mu.Lock()
		for _, r := range results {
			if _, seen := st.ackedAt[r.TransactionID]; r.Success && !seen {
				st.ackedAt[r.TransactionID] = now
			}
		}
		st.mu.Unlock()
	}
}

// drained reports whether every group has been delivered every answered push and has been quiet (no
// delivery) for a moment, so that a duplicate right behind the last delivery still shows. It does not
// wait for confirmed acks: an ack that committed but whose answer the fault lost is never confirmed,
// and its message rightly never comes back.
func (l *haLoad) drained() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.popOK) > 0 && time.Since(l.popOK[len(l.popOK)-1]) < 500*time.Millisecond {
		return false
	}
	for _, st := range l.groups {
		st.mu.Lock()
		seen := make(map[string]bool, len(st.deliveries))
		for _, d := range st.deliveries {
			seen[fmt.Sprintf("%s-%08d", d.part, d.seq)] = true
		}
		st.mu.Unlock()
		for part, seqs := range l.answered {
			for _, seq := range seqs {
				if !seen[fmt.Sprintf("%s-%08d", part, seq)] {
					return false
				}
			}
		}
	}
	return true
}

// Stop stops the producers, gives the consumers opts.DrainTimeout to deliver and ack every answered
// push, then stops them.
func (l *haLoad) Stop() {
	l.stopOnce.Do(func() {
		close(l.stopProducers)
		l.producers.Wait()
		l.mu.Lock()
		l.stoppedAt = time.Now()
		l.mu.Unlock()
		deadline := time.Now().Add(l.opts.DrainTimeout)
		for !l.drained() && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		close(l.stopConsumers)
		l.consumers.Wait()
	})
}

// halt is Stop without the drain, for a test that failed before calling Stop.
func (l *haLoad) halt() {
	l.stopOnce.Do(func() {
		close(l.stopProducers)
		close(l.stopConsumers)
		l.producers.Wait()
		l.consumers.Wait()
	})
}

// Answered is how many pushes were answered 201 so far.
func (l *haLoad) Answered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pushOK)
}

// Popped is how many pops delivered messages so far.
func (l *haLoad) Popped() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.popOK)
}

// longestGap is the longest interval without an event in ts between the first event and end.
func longestGap(ts []time.Time, start, end time.Time) time.Duration {
	sorted := append([]time.Time(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	var gap time.Duration
	prev := start
	for _, x := range sorted {
		gap = max(gap, x.Sub(prev))
		prev = x
	}
	return max(gap, end.Sub(prev))
}

// Verify computes the result (call after Stop) and logs a summary.
func (l *haLoad) Verify(t testing.TB) haResult {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := haResult{Unanswered: int(l.unanswered.Load()), Delivered: map[string]int{}, Lost: map[string]int{},
		Duplicates: map[string]int{}, OrderViolations: map[string]int{}, PushErrors: l.pushErrs, PopErrors: l.popErrs}
	for _, seqs := range l.answered {
		r.Answered += len(seqs)
	}
	if len(l.pushOK) > 0 {
		first := l.pushOK[0]
		end := l.stoppedAt
		if end.IsZero() {
			end = time.Now()
		}
		r.PushGap = longestGap(l.pushOK, first, end)
		if len(l.popOK) > 0 {
			r.PopGap = longestGap(l.popOK, l.popOK[0], end)
		}
		r.Gap = max(r.PushGap, r.PopGap)
	}
	for g, st := range l.groups {
		st.mu.Lock()
		r.Delivered[g] = len(st.deliveries)
		seen := map[string]bool{}
		lastFirst := map[string]int{} // partition -> seq of the latest first-time delivery
		for _, d := range st.deliveries {
			tx := fmt.Sprintf("%s-%08d", d.part, d.seq)
			if ackedAt, ok := st.ackedAt[tx]; ok && d.popSent.After(ackedAt) {
				r.Duplicates[g]++
				if len(r.DupExamples) < 5 {
					r.DupExamples = append(r.DupExamples, fmt.Sprintf("%q:%s", g, tx))
				}
			}
			if seen[tx] {
				continue
			}
			seen[tx] = true
			if last, ok := lastFirst[d.part]; ok && d.seq < last {
				r.OrderViolations[g]++
			}
			lastFirst[d.part] = max(lastFirst[d.part], d.seq)
		}
		for part, seqs := range l.answered {
			for _, seq := range seqs {
				tx := fmt.Sprintf("%s-%08d", part, seq)
				if !seen[tx] {
					r.Lost[g]++
					if len(r.LostExamples) < 5 {
						r.LostExamples = append(r.LostExamples, fmt.Sprintf("%q:%s", g, tx))
					}
				}
			}
		}
		st.mu.Unlock()
	}
	t.Logf("haload: answered %d, unanswered %d, delivered %v, lost %v, duplicates %v, order violations %v, "+
		"gap %v (push %v, pop %v), push errors %v, pop errors %v",
		r.Answered, r.Unanswered, r.Delivered, r.Lost, r.Duplicates, r.OrderViolations,
		r.Gap.Round(time.Millisecond), r.PushGap.Round(time.Millisecond), r.PopGap.Round(time.Millisecond),
		r.PushErrors, r.PopErrors)
	return r
}

// TestHALoadSteady runs the load generator with no fault: everything answered is delivered exactly once
// to each group, in order. It keeps the generator itself honest.
func TestHALoadSteady(t *testing.T) {
	b := startProc(t, map[string]string{"DATABASE_URL": ownCluster(t).URL("postgres"), "FILE_BUFFER_DIR": t.TempDir()})
	l := startHALoad(t, b.base, haLoadOptions{Producers: 3, Groups: []string{"", "audit"}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, l.Answered(), 100, "pushes answered")
		assert.GreaterOrEqual(c, l.Popped(), 10, "pops delivered")
	}, 30*time.Second, 20*time.Millisecond, "no load")
	l.Stop()
	l.Verify(t).requireExactlyOnce(t)
}
