package notify

import (
	"container/heap"
	"maps"
	"slices"
	"sync"
	"time"
)

// tick is the granularity of scheduled announcements: everything coming due for a queue within one
// tick is announced together, at the end of the tick. A busy queue that hands out a thousand leases a
// second thus keeps at most one pending announcement per tick of their expiry.
const tick = 100 * time.Millisecond

// maxKeyed bounds the cancellable announcements remembered; past it an announcement is still made but
// can no longer be cancelled (it then wakes pops that find nothing, which costs a pop each, no more).
const maxKeyed = 50_000

// schedule holds announcements that come due later: things that become claimable by the passing of
// time alone (a lease that runs out, a retry delay or a delayed message that ends). Each due instant
// is rounded up to the next tick and merged per (tick, queue); one timer, reset to the earliest tick,
// fires them. Cancelling by key takes an announcement back, in whole or one partition at a time (a
// lease acked before it ran out).
type schedule struct {
	mu      sync.Mutex // protects every field below; a leaf: fire is called unlocked
	slots   map[slot]*pending
	order   slotHeap
	keyed   map[string]keyedDue
	timer   *time.Timer
	timerAt int64 // the tick the timer is set for; 0 = not set
	fire    func(queue string, partitions []string)
}

// slot is one queue's announcements due at one tick (Unix time in ticks).
type slot struct {
	at    int64
	queue string
}

// pending is what a slot announces: its partitions, each with the number of announcements naming
// it, and the keys scheduled into it (forgotten when it fires).
type pending struct {
	parts map[string]int
	keys  []string
}

type keyedDue struct {
	s     slot
	parts []string
}

func newSchedule(fire func(queue string, partitions []string)) *schedule {
	return &schedule{slots: map[slot]*pending{}, keyed: map[string]keyedDue{}, fire: fire}
}

// add schedules the announcement of partitions of queue at when; key ("" for none) lets cancel take
// it back.
func (s *schedule) add(queue string, partitions []string, when time.Time, key string) {
	if len(partitions) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.keyed[key]; ok && key != "" {
		delete(s.keyed, key)
		s.takeBack(old.s, old.parts)
	}
	s.put(queue, partitions, when, key)
}

// put adds to the slot of when. Callers hold mu.
func (s *schedule) put(queue string, partitions []string, when time.Time, key string) {
	// Rounded up, never down: an announcement made before the thing came due would find nothing.
	sl := slot{at: (when.UnixNano() + int64(tick) - 1) / int64(tick), queue: queue}
	p := s.slots[sl]
	if p == nil {
		p = &pending{parts: map[string]int{}}
		s.slots[sl] = p
		heap.Push(&s.order, sl)
	}
	for _, part := range partitions {
		p.parts[part]++
	}
	if key != "" && len(s.keyed) < maxKeyed {
		s.keyed[key] = keyedDue{s: sl, parts: slices.Clone(partitions)}
		p.keys = append(p.keys, key)
	}
	s.arm()
}

// postpone moves what was scheduled under key to when (a lease extended), if it has not fired yet.
func (s *schedule) postpone(key string, when time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keyed[key]
	if !ok {
		return
	}
	delete(s.keyed, key)
	s.takeBack(k.s, k.parts)
	if len(k.parts) > 0 {
		s.put(k.s.queue, k.parts, when, key)
	}
}

// cancel takes back, of what was scheduled under key, the partition named ("" = all of it), if it has
// not fired yet.
func (s *schedule) cancel(key, partition string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keyed[key]
	if !ok {
		return
	}
	if partition == "" {
		delete(s.keyed, key)
		s.takeBack(k.s, k.parts)
		return
	}
	i := slices.Index(k.parts, partition)
	if i < 0 {
		return
	}
	s.takeBack(k.s, k.parts[i:i+1])
	k.parts = slices.Delete(k.parts, i, i+1)
	if len(k.parts) == 0 {
		delete(s.keyed, key)
		return
	}
	s.keyed[key] = k
}

// takeBack lowers a slot's counts; an emptied slot stays in the heap and fires as a no-op. Callers
// hold mu.
func (s *schedule) takeBack(sl slot, partitions []string) {
	p := s.slots[sl]
	if p == nil {
		return
	}
	for _, part := range partitions {
		if p.parts[part]--; p.parts[part] <= 0 {
			delete(p.parts, part)
		}
	}
	if len(p.parts) == 0 {
		// Everything scheduled here was taken back: no key points here any more. Dropping the list now
		// keeps a busy queue's acked leases from holding memory until their expiry tick.
		p.keys = nil
	}
}

// arm sets the timer for the earliest slot. Callers hold mu.
func (s *schedule) arm() {
	if len(s.order) == 0 {
		return
	}
	first := s.order[0].at
	if s.timerAt != 0 && s.timerAt <= first {
		return
	}
	d := time.Until(time.Unix(0, first*int64(tick)))
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.run)
	} else {
		s.timer.Stop()
		s.timer.Reset(d)
	}
	s.timerAt = first
}

// run announces every slot that came due and re-arms the timer for the next.
func (s *schedule) run() {
	now := time.Now().UnixNano()
	type due struct {
		queue string
		parts []string
	}
	var fired []due
	s.mu.Lock()
	s.timerAt = 0
	for len(s.order) > 0 && s.order[0].at*int64(tick) <= now {
		sl := heap.Pop(&s.order).(slot)
		p := s.slots[sl]
		delete(s.slots, sl)
		if p == nil {
			continue
		}
		if len(p.parts) > 0 {
			fired = append(fired, due{sl.queue, slices.Collect(maps.Keys(p.parts))})
		}
		for _, k := range p.keys {
			// What fired can no longer be taken back (a key rescheduled since points elsewhere).
			if v, ok := s.keyed[k]; ok && v.s == sl {
				delete(s.keyed, k)
			}
		}
	}
	s.arm()
	s.mu.Unlock()
	for _, f := range fired {
		s.fire(f.queue, f.parts)
	}
}

// reset drops everything scheduled (the broker is stopping).
func (s *schedule) reset() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.slots, s.order, s.keyed, s.timerAt = map[slot]*pending{}, nil, map[string]keyedDue{}, 0
	s.mu.Unlock()
}

// len counts the scheduled slots, for tests.
func (s *schedule) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// slotHeap orders slots by due tick.
type slotHeap []slot

func (h slotHeap) Len() int           { return len(h) }
func (h slotHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h slotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)        { *h = append(*h, x.(slot)) }
func (h *slotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
