package main

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// tracker records, for one queue, every transactionId the broker answered "queued" and every delivery
// that was acked successfully, per consumer group, and checks exactly-once consumption at the end.
//
// The producers' transactionIds are "<prefix>-<seq>", seq counting 0, 1, 2, ... per producer. Each
// producer's prefix is a stream whose state is kept in slices indexed by seq, so that recording a
// message costs a slice store instead of a map insert of a string (the harness shares the CPU with
// the broker it measures). Any other id (and an id of a prefix the tracker does not know) is kept in
// maps. Both record the same facts and verify checks the same rules over both.
type tracker struct {
	mu       sync.Mutex
	streams  map[string]*txStream
	pushedAt map[string]time.Time      // transactionId -> when its push request was sent
	unsure   map[string]bool           // push failed at the transport level: may or may not be stored
	consumed map[string]map[string]int // group -> transactionId -> successful acks
	distinct map[string]int            // group -> distinct transactionIds acked (streams and maps)
	queued   int                       // messages of streams answered queued
	groups   []string
	group    map[string]int // index of a group in groups
}

// Per-message state of a stream.
const (
	stateNone   = 0
	stateQueued = 1
	stateUnsure = 2
)

// txStream is one producer's transactionIds.
type txStream struct {
	prefix   string
	state    []uint8
	sent     []int64   // unix nanoseconds of the push request, for queued messages
	consumed [][]int32 // per group (index in tracker.groups), per seq: successful acks
}

func newTracker(groups ...string) *tracker {
	t := &tracker{streams: map[string]*txStream{}, pushedAt: map[string]time.Time{}, unsure: map[string]bool{},
		consumed: map[string]map[string]int{}, distinct: map[string]int{}, groups: groups, group: map[string]int{}}
	for i, g := range groups {
		t.consumed[g] = map[string]int{}
		t.group[g] = i
	}
	return t
}

// stream registers the transactionIds "<prefix>-<seq>" of one producer (before it pushes any).
func (t *tracker) stream(prefix string) *txStream {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.streams[prefix]
	if s == nil {
		s = &txStream{prefix: prefix, consumed: make([][]int32, len(t.groups))}
		t.streams[prefix] = s
	}
	return s
}

// grow makes room for seq.
func (s *txStream) grow(seq int) {
	for len(s.state) <= seq {
		s.state = append(s.state, stateNone)
		s.sent = append(s.sent, 0)
	}
}

func (s *txStream) id(seq int) string { return s.prefix + "-" + strconv.Itoa(seq) }

// find maps a transactionId to its stream and seq; nil when it belongs to none.
func (t *tracker) find(id string) (*txStream, int) {
	k := strings.LastIndexByte(id, '-')
	if k < 0 {
		return nil, 0
	}
	s := t.streams[id[:k]]
	if s == nil {
		return nil, 0
	}
	digits := id[k+1:]
	if digits == "" || len(digits) > 1 && digits[0] == '0' {
		return nil, 0
	}
	seq := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' || seq > 1<<40 {
			return nil, 0
		}
		seq = seq*10 + int(c-'0')
	}
	return s, seq
}

// pushedSeqs records the messages first..first+len(queued)-1 of a stream, pushed by a request sent at
// sent: queued[i] answered queued, the others in doubt.
func (t *tracker) pushedSeqs(s *txStream, sent time.Time, first int, queued []bool) {
	ns := sent.UnixNano()
	t.mu.Lock()
	s.grow(first + len(queued) - 1)
	for i, q := range queued {
		if q {
			if s.state[first+i] != stateQueued {
				t.queued++
			}
			s.state[first+i], s.sent[first+i] = stateQueued, ns
		} else if s.state[first+i] == stateNone {
			s.state[first+i] = stateUnsure
		}
	}
	t.mu.Unlock()
}

func (t *tracker) pushed(sent time.Time, txids ...string) {
	t.mu.Lock()
	for _, id := range txids {
		if s, seq := t.find(id); s != nil {
			s.grow(seq)
			if s.state[seq] != stateQueued {
				t.queued++
			}
			s.state[seq], s.sent[seq] = stateQueued, sent.UnixNano()
			continue
		}
		t.pushedAt[id] = sent
	}
	t.mu.Unlock()
}

func (t *tracker) maybePushed(txids ...string) {
	t.mu.Lock()
	for _, id := range txids {
		if s, seq := t.find(id); s != nil {
			s.grow(seq)
			if s.state[seq] == stateNone {
				s.state[seq] = stateUnsure
			}
			continue
		}
		t.unsure[id] = true
	}
	t.mu.Unlock()
}

// acked records successful acks of group and returns, per id, when it was pushed (zero if unknown).
func (t *tracker) acked(group string, txids []string, sentAt []time.Time) []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, g := t.consumed[group], t.group[group]
	sentAt = sentAt[:0]
	for _, id := range txids {
		if s, seq := t.find(id); s != nil {
			c := s.consumed[g]
			for len(c) <= seq {
				c = append(c, 0)
			}
			s.consumed[g] = c
			c[seq]++
			if c[seq] == 1 {
				t.distinct[group]++
			}
			var at time.Time
			if seq < len(s.state) && s.state[seq] == stateQueued {
				at = time.Unix(0, s.sent[seq])
			}
			sentAt = append(sentAt, at)
			continue
		}
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
		b = max(b, t.queued+len(t.pushedAt)-t.distinct[g])
	}
	return b
}

// pushedCount is how many messages were answered queued.
func (t *tracker) pushedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.queued + len(t.pushedAt)
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
	v := Verification{Queue: queue, Groups: len(t.groups), Pushed: t.queued + len(t.pushedAt), InDoubt: len(t.unsure)}
	for _, s := range t.streams {
		for _, st := range s.state {
			if st == stateUnsure {
				v.InDoubt++
			}
		}
	}
	for gi, g := range t.groups {
		m := t.consumed[g]
		for id := range t.pushedAt {
			if m[id] == 0 {
				v.missing(g, id, nil, 0)
			}
		}
		for id, n := range m {
			_, queued := t.pushedAt[id]
			v.consumed(g, id, nil, 0, n, queued || t.unsure[id])
		}
		for _, s := range t.streams {
			c := s.consumed[gi]
			for seq := range max(len(s.state), len(c)) {
				st, n := uint8(stateNone), 0
				if seq < len(s.state) {
					st = s.state[seq]
				}
				if seq < len(c) {
					n = int(c[seq])
				}
				if st == stateQueued && n == 0 {
					v.missing(g, "", s, seq)
				}
				if n > 0 {
					v.consumed(g, "", s, seq, n, st != stateNone)
				}
			}
		}
	}
	v.OK = v.Missing == 0 && v.Duplicates == 0 && v.Unexpected == 0
	return v
}

// sampleID is the transactionId id, or seq of stream s when s is not nil (put together only for the
// sample: verification visits every message).
func sampleID(id string, s *txStream, seq int) string {
	if s != nil {
		return s.id(seq)
	}
	return id
}

func (v *Verification) missing(group, id string, s *txStream, seq int) {
	v.Missing++
	if len(v.Sample) < 5 {
		v.Sample = append(v.Sample, "missing "+group+"/"+sampleID(id, s, seq))
	}
}

// consumed counts a message group acked n times; known: it was answered queued or is in doubt.
func (v *Verification) consumed(group, id string, s *txStream, seq, n int, known bool) {
	v.Consumed++
	if n > 1 {
		v.Duplicates += n - 1
		if len(v.Sample) < 10 {
			v.Sample = append(v.Sample, "duplicate "+group+"/"+sampleID(id, s, seq))
		}
	}
	if !known {
		v.Unexpected++
	}
}
