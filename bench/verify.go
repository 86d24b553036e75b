package main

import (
	"sync"
	"time"
)

// tracker records, for one queue, every transactionId the broker answered "queued" and every delivery
// that was acked successfully, per consumer group, and checks exactly-once consumption at the end.
type tracker struct {
	mu       sync.Mutex
	pushedAt map[string]time.Time      // transactionId -> when its push request was sent
	unsure   map[string]bool           // push failed at the transport level: may or may not be stored
	consumed map[string]map[string]int // group -> transactionId -> successful acks
	distinct map[string]int            // group -> distinct transactionIds acked
	groups   []string
}

func newTracker(groups ...string) *tracker {
	t := &tracker{pushedAt: map[string]time.Time{}, unsure: map[string]bool{}, consumed: map[string]map[string]int{}, distinct: map[string]int{}, groups: groups}
	for _, g := range groups {
		t.consumed[g] = map[string]int{}
	}
	return t
}

func (t *tracker) pushed(sent time.Time, txids ...string) {
	t.mu.Lock()
	for _, id := range txids {
		t.pushedAt[id] = sent
	}
	t.mu.Unlock()
}

func (t *tracker) maybePushed(txids ...string) {
	t.mu.Lock()
	for _, id := range txids {
		t.unsure[id] = true
	}
	t.mu.Unlock()
}

// acked records successful acks of group and returns, per id, when it was pushed (zero if unknown).
func (t *tracker) acked(group string, txids []string, sentAt []time.Time) []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.consumed[group]
	sentAt = sentAt[:0]
	for _, id := range txids {
		m[id]++
		if m[id] == 1 {
			t.distinct[group]++
		}
		sentAt = append(sentAt, t.pushedAt[id])
	}
	return sentAt
}

// backlog is the largest number of queued messages some group has not consumed yet (approximate: a
// message in doubt that was consumed counts against it).
func (t *tracker) backlog() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := 0
	for _, g := range t.groups {
		b = max(b, len(t.pushedAt)-t.distinct[g])
	}
	return b
}

// pushedCount is how many messages were answered queued.
func (t *tracker) pushedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pushedAt)
}

// Verification is the exactly-once check of one queue.
type Verification struct {
	Queue      string   `json:"queue"`
	Groups     int      `json:"groups"`
	Pushed     int      `json:"pushed"`     // answered queued
	Consumed   int      `json:"consumed"`   // distinct (group, message) acked
	Missing    int      `json:"missing"`    // queued but never acked, summed over groups
	Duplicates int      `json:"duplicates"` // extra successful acks of an already consumed message
	Unexpected int      `json:"unexpected"` // consumed but never answered queued (nor in doubt)
	InDoubt    int      `json:"in_doubt"`   // push failed in transport; consumed-or-not both fine
	OK         bool     `json:"ok"`
	Sample     []string `json:"sample,omitempty"` // a few missing or duplicated transactionIds
}

func (t *tracker) verify(queue string) Verification {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := Verification{Queue: queue, Groups: len(t.groups), Pushed: len(t.pushedAt), InDoubt: len(t.unsure)}
	for _, g := range t.groups {
		m := t.consumed[g]
		for id := range t.pushedAt {
			if m[id] == 0 {
				v.Missing++
				if len(v.Sample) < 5 {
					v.Sample = append(v.Sample, "missing "+g+"/"+id)
				}
			}
		}
		for id, n := range m {
			v.Consumed++
			if n > 1 {
				v.Duplicates += n - 1
				if len(v.Sample) < 10 {
					v.Sample = append(v.Sample, "duplicate "+g+"/"+id)
				}
			}
			if _, ok := t.pushedAt[id]; !ok && !t.unsure[id] {
				v.Unexpected++
			}
		}
	}
	v.OK = v.Missing == 0 && v.Duplicates == 0 && v.Unexpected == 0
	return v
}
