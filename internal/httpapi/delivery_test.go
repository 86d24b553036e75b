package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type seqPayload struct {
	Producer int `json:"producer"`
	N        int `json:"n"`
}

// checkOrder asserts that every (partition, producer) stream arrived complete, exactly once and in
// push order.
func checkOrder(t *testing.T, got []message, producers, perProducer int) {
	t.Helper()
	next := map[string]int{} // partition/producer → next expected n
	seen := map[string]bool{}
	for _, m := range got {
		require.False(t, seen[m.ID], "message %s delivered twice", m.ID)
		seen[m.ID] = true
		var p seqPayload
		require.NoError(t, json.Unmarshal(m.Data, &p))
		k := fmt.Sprintf("%s/%d", m.Partition, p.Producer)
		require.Greater(t, p.N, next[k]-1, "stream %s out of order: got %d after %d", k, p.N, next[k]-1)
		next[k] = p.N + 1
	}
	require.Len(t, seen, producers*perProducer)
}

func TestFIFOUnderConcurrentProducers(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).rb
	a := newAPI(t, b.URL)
	const producers, perProducer = 8, 60
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < perProducer; n += 3 {
				// Small batches, all into one partition: the producers interleave at the server.
				items := make([]pushItem, 3)
				for k := range items {
					items[k] = pushItem{Queue: "fifo", Partition: "one", Payload: seqPayload{p, n + k}}
				}
				for _, r := range a.push(items...) {
					require.Equal(t, "queued", r.Status)
				}
			}
		}()
	}
	wg.Wait()
	var got []message
	for {
		res := a.pop("/api/v1/pop/queue/fifo?batch=100")
		if res == nil {
			break
		}
		got = append(got, res.Messages...)
		for _, r := range a.ackAll("", res.Messages, "completed") {
			require.True(t, r.Success)
		}
	}
	checkOrder(t, got, producers, perProducer)

	// The stored order is exactly push order per producer: FIFO means the consumer saw store order.
	for i := 1; i < len(got); i++ {
		require.Equal(t, "one", got[i].Partition)
	}
}

func TestCompetingConsumersNeverShareALease(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).rb
	a := newAPI(t, b.URL)
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": "compete", "options": map[string]any{"leaseTime": 120}})
	require.Equal(t, http.StatusOK, st, string(body))
	const partitions, perPartition = 20, 10
	var items []pushItem
	for p := range partitions {
		for n := range perPartition {
			items = append(items, pushItem{Queue: "compete", Partition: fmt.Sprint("p", p), Payload: seqPayload{p, n}})
		}
	}
	a.push(items...)

	var mu sync.Mutex
	inFlight := map[string]string{} // partition → consumer holding it
	delivered := map[string]int{}
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := fmt.Sprint("c", c)
			for {
				res := a.pop("/api/v1/pop/queue/compete?batch=3")
				if res == nil {
					mu.Lock()
					done := len(delivered) == partitions*perPartition
					mu.Unlock()
					if done {
						return
					}
					continue
				}
				mu.Lock()
				part := res.Messages[0].Partition
				for _, m := range res.Messages {
					require.Equal(t, part, m.Partition, "one pop, one partition")
					delivered[m.ID]++
					require.Equal(t, 1, delivered[m.ID], "message %s delivered twice while leased", m.ID)
				}
				holder, busy := inFlight[part]
				require.False(t, busy, "partition %s served to %s while %s holds its lease", part, me, holder)
				inFlight[part] = me
				mu.Unlock()

				mu.Lock()
				delete(inFlight, part) // released by the ack below, before anyone may claim it again
				mu.Unlock()
				for _, r := range a.ackAll("", res.Messages, "completed") {
					require.True(t, r.Success)
				}
			}
		}()
	}
	wg.Wait()
	require.Len(t, delivered, partitions*perPartition)
}

func TestLeaseExpiryRedelivers(t *testing.T) {
	t.Parallel()
	b := setupClock(t, map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "100"})
	a := b.raw
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": "expiry", "options": map[string]any{"leaseTime": 60}})
	require.Equal(t, http.StatusOK, st, string(body))
	a.push(pushItem{Queue: "expiry", Payload: "x", TransactionID: "only"})

	first := a.pop("/api/v1/pop/queue/expiry")
	require.NotNil(t, first)
	require.Nil(t, a.pop("/api/v1/pop/queue/expiry"), "leased: nothing for a competitor")

	// Not acked: once the lease runs out the same message comes back under a new lease, to a
	// long-poll parked before it ran out too.
	got := a.popLater("/api/v1/pop/queue/expiry?wait=true&timeout=30000")
	b.waitParked(t, 0)
	b.clock.Advance(61 * time.Second)
	again := <-got
	require.NotNil(t, again, "the parked pop was not answered once the lease expired")
	require.Equal(t, first.Messages[0].ID, again.Messages[0].ID)
	require.NotEqual(t, first.LeaseID, again.LeaseID)

	// The old lease is dead: its ack is refused and changes nothing; the new one completes.
	old := a.ackAll("", first.Messages, "completed")
	require.False(t, old[0].Success)
	require.Equal(t, "invalid or expired lease", *old[0].Error)
	cur := a.ackAll("", again.Messages, "completed")
	require.True(t, cur[0].Success)
	require.True(t, cur[0].LeaseReleased)
	require.Nil(t, a.pop("/api/v1/pop/queue/expiry"))
}

func TestLongPollIsWokenByThePush(t *testing.T) {
	t.Parallel()
	// The safety re-check is 10 s: an answer within 2 s of the push can only come from the wake-up.
	b := setup(t, map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "10000"}).rb
	a := newAPI(t, b.URL)
	for _, path := range []string{"/api/v1/pop/queue/wake", "/api/v1/pop/queue/wake/partition/p1"} {
		got := make(chan *popResult, 1)
		go func() { got <- a.pop(path + "?wait=true&timeout=30000") }()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Positive(c, b.Broker.Parked(), "parked long-poll pops")
		}, 10*time.Second, 10*time.Millisecond, "pop not parked yet")
		a.push(pushItem{Queue: "wake", Partition: "p1", Payload: path})
		pushed := time.Now()
		select {
		case res := <-got:
			require.NotNil(t, res)
			require.JSONEq(t, fmt.Sprintf("%q", path), string(res.Messages[0].Data))
			a.ackAll("", res.Messages, "completed")
		case <-time.After(2 * time.Second):
			t.Fatalf("long-poll %s not answered within 2 s of the push (%s)", path, time.Since(pushed))
		}
	}
}

func TestEmptyLongPollAnswersAtItsDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "10000"}).rb
	a := newAPI(t, b.URL)
	start := time.Now()
	require.Nil(t, a.pop("/api/v1/pop/queue/idle?wait=true&timeout=700"))
	require.GreaterOrEqual(t, time.Since(start), 700*time.Millisecond, "answered before its deadline")
}

func TestTenThousandMessagesExactlyOnceInPartitionOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).rb
	a := newAPI(t, b.URL)
	const producers, perProducer, partitions = 4, 2500, 100
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < perProducer; n += 50 {
				items := make([]pushItem, 50)
				for k := range items {
					items[k] = pushItem{Queue: "tenk", Partition: fmt.Sprint("part-", (n+k)%partitions), Payload: seqPayload{p, n + k}}
				}
				a.push(items...)
			}
		}()
	}
	var got []message
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for len(got) < producers*perProducer {
			res := a.pop("/api/v1/pop/queue/tenk?batch=100&partitions=10&wait=true&timeout=2000")
			if res == nil {
				continue
			}
			got = append(got, res.Messages...)
			for _, r := range a.ackAll("", res.Messages, "completed") {
				if !r.Success {
					t.Errorf("ack %s: %v", r.TransactionID, *r.Error)
				}
			}
		}
	}()
	wg.Wait()
	select {
	case <-consumed:
	case <-time.After(5 * time.Minute):
		t.Fatalf("consumer stalled after %d messages", len(got))
	}
	checkOrder(t, got, producers, perProducer)
	require.Nil(t, a.pop("/api/v1/pop/queue/tenk"))
}
