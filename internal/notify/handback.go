package notify

import (
	"sync"
	"time"
)

// defaultHandBack is how long a partition whose lease an ack ended waits for a pop of the same group
// on this broker before this broker's parked pops are woken for it. A consumer that acks usually pops
// again at once and takes the partition back; a parked pop woken at the ack raced it, and the loser
// ran a pop statement that found nothing: with 16 consumers on 10 partitions, 4 pops in 10
// (docs/decisions.md, "Hand-back of released partitions").
const defaultHandBack = 5 * time.Millisecond

// heldKey is one partition of one consumer group's view of a queue.
type heldKey struct{ queue, group, partition string }

// handbacks are the released partitions waiting out Hub.handBack. Locking: mu is a leaf.
type handbacks struct {
	mu   sync.Mutex
	held map[heldKey]uint64 // the release that holds it: an older timer finds it taken over
	gen  uint64
}

// hold records the partitions as released now and returns the release's number.
func (hb *handbacks) hold(queue, group string, partitions []string) uint64 {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.held == nil {
		hb.held = map[heldKey]uint64{}
	}
	hb.gen++
	for _, p := range partitions {
		hb.held[heldKey{queue, group, p}] = hb.gen
	}
	return hb.gen
}

// due returns, of the partitions release gen held, those no pop has claimed since, and forgets them.
func (hb *handbacks) due(queue, group string, partitions []string, gen uint64) []string {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	var out []string
	for _, p := range partitions {
		k := heldKey{queue, group, p}
		if g, ok := hb.held[k]; ok && g == gen {
			delete(hb.held, k)
			out = append(out, p)
		}
	}
	return out
}

// claimed forgets the partitions: a pop of the group took them back, and nobody is to be woken for them.
func (hb *handbacks) claimed(queue, group string, partitions []string) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if len(hb.held) == 0 {
		return
	}
	for _, p := range partitions {
		delete(hb.held, heldKey{queue, group, p})
	}
}

// AnnounceReleased is AnnouncePartitions for partitions whose lease for group an ack ended: the other
// brokers are told as soon as for a push, but this broker's parked pops are woken only after
// handBack, and only for the partitions no pop of the group on this broker claimed meanwhile
// (Claimed). What the empty memo knows about them is forgotten at once.
func (h *Hub) AnnounceReleased(queue, group string, partitions []string) {
	if len(partitions) == 0 {
		return
	}
	if !h.waiters.forgetParked(queue, partitions) {
		h.AnnouncePartitions(queue, partitions) // nobody parked here: nothing to hold back
		return
	}
	h.notifyOthers(queue, len(partitions), partitions)
	gen := h.hb.hold(queue, group, partitions)
	time.AfterFunc(h.handBack, func() {
		if parts := h.hb.due(queue, group, partitions, gen); len(parts) > 0 {
			h.waiters.wakeN(queue, len(parts), parts)
		}
	})
}

// Claimed tells the hub that a pop of group on this broker claimed the partitions of queue.
func (h *Hub) Claimed(queue, group string, partitions []string) {
	h.hb.claimed(queue, group, partitions)
}
