package main

// -failover-at: one push/pop/ack run across a PostgreSQL failover. The bench starts its private primary
// with a synchronous standby, points the brokers at both with a multi-host URL, kills the primary
// (-m immediate) at the given time and promotes the standby, then drains and checks what the clients
// were told: every push answered 201 delivered, none delivered again after its ack was confirmed, order
// kept per partition. It prints the gap: the longest time without a successful push, and without a pop
// that delivered messages.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queen-go/queen/internal/pgcluster"
)

type foDelivery struct {
	tx      string
	popSent time.Time
}

type foState struct {
	mu         sync.Mutex
	answered   map[string][]string // partition -> answered transaction ids, in push order
	deliveries []foDelivery
	ackedAt    map[string]time.Time
	pushOK     []time.Time
	popOK      []time.Time
	errs       map[string]int
}

func (s *foState) fail(kind string) {
	s.mu.Lock()
	s.errs[kind]++
	s.mu.Unlock()
}

func runFailoverBench(ctx context.Context, o options) (int, error) {
	logw := io.Discard
	tmp, err := os.MkdirTemp("", "queen-bench-failover-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return 1, err
	}
	bin := o.brokerBin
	if bin == "" {
		bin = filepath.Join(tmp, "queen")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/queen")
		build.Dir, build.Stdout, build.Stderr = o.repo, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 1, fmt.Errorf("bench: go build ./cmd/queen: %w", err)
		}
	}
	primary, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(tmp, "primary"), Durable: !o.fast,
		Name: "primary", Replication: true, SynchronousStandbys: []string{"standby"}, Settings: o.pgSettings})
	if err != nil {
		return 1, err
	}
	defer func() { _ = primary.Stop(context.Background()) }()
	standby, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(tmp, "standby"), Durable: !o.fast,
		Name: "standby", StandbyOf: primary, Settings: o.pgSettings})
	if err != nil {
		return 1, err
	}
	defer func() { _ = standby.Stop(context.Background()) }()
	url := fmt.Sprintf("postgres://postgres@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write", primary.Addr(), standby.Addr())
	var bases []string
	for i := range o.brokers {
		p, err := startBrokerProc(ctx, bin, filepath.Join(tmp, "work"+strconv.Itoa(i)), url,
			append([]string{"FILE_BUFFER_FLUSH_MS=50", "DB_CONNECTION_TIMEOUT=500"}, o.brokerEnv...), logw)
		if p != nil {
			defer func() { _ = p.cmd.Process.Kill(); <-p.exited }()
		}
		if err != nil {
			return 1, err
		}
		bases = append(bases, p.URL)
	}

	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.conns}}
	post := func(u string, body any) (int, []byte, error) {
		b, _ := json.Marshal(body)
		resp, err := client.Post(u, "application/json", bytes.NewReader(b))
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		return resp.StatusCode, out, err
	}
	const queue = "bench-failover"
	if code, body, err := post(bases[0]+"/api/v1/configure", map[string]any{"queue": queue,
		"options": map[string]any{"leaseTime": 2}}); err != nil || code != http.StatusOK {
		return 1, fmt.Errorf("bench: configure: %d %s %v", code, body, err)
	}

	st := &foState{answered: map[string][]string{}, ackedAt: map[string]time.Time{}, errs: map[string]int{}}
	stopPush, stopPop := make(chan struct{}), make(chan struct{})
	var pushers, poppers sync.WaitGroup
	for i := range o.producers {
		pushers.Add(1)
		go func() {
			defer pushers.Done()
			part, base := fmt.Sprint("p", i), bases[i%len(bases)]
			for seq := 0; ; seq++ {
				select {
				case <-stopPush:
					return
				default:
				}
				tx := fmt.Sprintf("%s-%08d", part, seq)
				code, body, err := post(base+"/api/v1/push", map[string]any{"items": []map[string]any{
					{"queue": queue, "partition": part, "payload": seq, "transactionId": tx}}})
				if err != nil || code != http.StatusCreated || !(bytes.Contains(body, []byte(`"queued"`)) || bytes.Contains(body, []byte(`"buffered"`))) {
					st.fail("push " + strconv.Itoa(code))
					time.Sleep(50 * time.Millisecond)
					continue
				}
				st.mu.Lock()
				st.answered[part] = append(st.answered[part], tx)
				st.pushOK = append(st.pushOK, time.Now())
				st.mu.Unlock()
			}
		}()
	}
	for i := range o.consumers {
		poppers.Add(1)
		go func() {
			defer poppers.Done()
			base := bases[i%len(bases)]
			popURL := fmt.Sprintf("%s/api/v1/pop/queue/%s?batch=%d&wait=true&timeout=500", base, queue, o.popBatch)
			for {
				select {
				case <-stopPop:
					return
				default:
				}
				sent := time.Now()
				resp, err := client.Get(popURL)
				if err != nil {
					st.fail("pop transport")
					time.Sleep(50 * time.Millisecond)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent) {
					st.fail("pop " + strconv.Itoa(resp.StatusCode))
					time.Sleep(50 * time.Millisecond)
					continue
				}
				var pr struct {
					Messages []struct{ TransactionID, PartitionID, LeaseID string }
				}
				if resp.StatusCode == http.StatusNoContent || json.Unmarshal(body, &pr) != nil || len(pr.Messages) == 0 {
					continue
				}
				acks := make([]map[string]any, len(pr.Messages))
				st.mu.Lock()
				st.popOK = append(st.popOK, time.Now())
				for j, m := range pr.Messages {
					st.deliveries = append(st.deliveries, foDelivery{tx: m.TransactionID, popSent: sent})
					acks[j] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": "completed"}
				}
				st.mu.Unlock()
				code, body, err := post(base+"/api/v1/ack/batch", map[string]any{"acknowledgments": acks})
				if err != nil || code != http.StatusOK {
					st.fail("ack " + strconv.Itoa(code))
					continue
				}
				var res []struct {
					TransactionID string `json:"transactionId"`
					Success       bool   `json:"success"`
				}
				_ = json.Unmarshal(body, &res)
				now := time.Now()
				st.mu.Lock()
				for _, r := range res {
					if _, seen := st.ackedAt[r.TransactionID]; r.Success && !seen {
						st.ackedAt[r.TransactionID] = now
					}
				}
				st.mu.Unlock()
			}
		}()
	}

	begin := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(o.failoverAt):
	}
	var lag int64
	if conn, err := pgx.Connect(ctx, primary.URL("postgres")); err == nil {
		_ = conn.QueryRow(ctx, "SELECT coalesce(sum(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), flush_lsn)), 0)::bigint FROM pg_stat_replication").Scan(&lag)
		_ = conn.Close(ctx)
	}
	killed := time.Now()
	if err := primary.Kill(); err != nil {
		return 1, err
	}
	if err := standby.Promote(ctx); err != nil {
		return 1, err
	}
	promoted := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(max(o.duration-time.Since(begin), 3*time.Second)):
	}
	close(stopPush)
	pushers.Wait()
	end := time.Now()
	deadline := time.Now().Add(o.drainTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		st.mu.Lock()
		quiet := len(st.popOK) == 0 || time.Since(st.popOK[len(st.popOK)-1]) > time.Second
		lost, _, _ := st.verify()
		st.mu.Unlock()
		if quiet && lost == 0 {
			break
		}
	}
	close(stopPop)
	poppers.Wait()

	st.mu.Lock()
	defer st.mu.Unlock()
	lost, dups, order := st.verify()
	answered := 0
	for _, txs := range st.answered {
		answered += len(txs)
	}
	pushGap, popGap := longest(st.pushOK, begin, end), longest(st.popOK, begin, end)
	fmt.Printf("failover at %v: synchronous standby, %d broker(s), %d producers, %d consumers; lag at the kill %d bytes; promoted %v after the kill\n",
		o.failoverAt, len(bases), o.producers, o.consumers, lag, promoted.Sub(killed).Round(time.Millisecond))
	fmt.Printf("gap: %v (longest without a successful push %v, without a pop delivering messages %v)\n",
		max(pushGap, popGap).Round(time.Millisecond), pushGap.Round(time.Millisecond), popGap.Round(time.Millisecond))
	verdict := "exactly once: OK"
	if lost+dups+order > 0 {
		verdict = "exactly once: FAILED"
	}
	fmt.Printf("%s: %d pushes answered 201, %d deliveries, %d lost, %d duplicated, %d out of order; failed requests %v\n",
		verdict, answered, len(st.deliveries), lost, dups, order, st.errs)
	if lost+dups+order > 0 {
		return 1, nil
	}
	return 0, nil
}

// verify counts answered pushes never delivered, deliveries after a confirmed ack, and first
// deliveries out of push order per partition. The caller holds s.mu.
func (s *foState) verify() (lost, dups, order int) {
	seen := map[string]bool{}
	last := map[string]string{}
	for _, d := range s.deliveries {
		if at, ok := s.ackedAt[d.tx]; ok && d.popSent.After(at) {
			dups++
		}
		if seen[d.tx] {
			continue
		}
		seen[d.tx] = true
		part, _, _ := strings.Cut(d.tx, "-")
		if d.tx < last[part] { // fixed-width sequence numbers: text order is push order
			order++
		} else {
			last[part] = d.tx
		}
	}
	for _, txs := range s.answered {
		for _, tx := range txs {
			if !seen[tx] {
				lost++
			}
		}
	}
	return lost, dups, order
}

// longest is the longest interval between start, the events in ts and end without an event.
func longest(ts []time.Time, start, end time.Time) time.Duration {
	sorted := append([]time.Time(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	var gap time.Duration
	prev := start
	for _, t := range sorted {
		if t.After(end) {
			break
		}
		gap, prev = max(gap, t.Sub(prev)), t
	}
	return max(gap, end.Sub(prev))
}
