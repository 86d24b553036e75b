package notify

import "strings"

// Brokers cache what they read about queues (options, encryption, recorded subscriptions, partition
// ids) and trust it for a few seconds. A broker that configures or deletes a queue, or deletes a
// group, forgets its own entries at once and tells the others on the push channel, in the same
// coalesced NOTIFY as the announcements, so that their entries go within milliseconds rather than at
// their TTL. The TTLs stay as the bound when a notification is lost; a reconnect of the LISTEN
// session, after which nobody knows what was missed, reports ChangesLost.

// ChangeKind says what changed.
type ChangeKind byte

const (
	QueueConfigured ChangeKind = 'c' // the queue's options changed
	QueueDeleted    ChangeKind = 'd' // the queue and everything in it are gone (it may be re-created)
	GroupDeleted    ChangeKind = 'g' // the group's cursors and subscriptions are gone (Name is the group)
	ChangesLost     ChangeKind = 'l' // the LISTEN session (re)connected: any change may have been missed
)

// Change is one change another broker's cache may hold stale: Name is the queue, or the group.
type Change struct {
	Kind ChangeKind
	Name string
}

// changePrefix starts a change's payload: "C<kind>:<name>". No announcement payload starts so ("<n>:"
// or "P<n>:"), and a broker that predates changes reads it as the announcement of a queue of that
// name, which at worst wakes a parked pop early.
const changePrefix = "C"

func (c Change) payload() string { return changePrefix + string(c.Kind) + ":" + c.Name }

// parseChange reads a change's payload; ok false for any other text.
func parseChange(p string) (Change, bool) {
	rest, found := strings.CutPrefix(p, changePrefix)
	if !found || len(rest) < 2 || rest[1] != ':' {
		return Change{}, false
	}
	switch k := ChangeKind(rest[0]); k {
	case QueueConfigured, QueueDeleted, GroupDeleted:
		return Change{Kind: k, Name: rest[2:]}, true
	}
	return Change{}, false
}

// OnChange sets what the hub calls for each change another broker announces, and with ChangesLost
// each time its LISTEN session connects. Set it before Start; it runs on the LISTEN goroutine.
func (h *Hub) OnChange(fn func(Change)) {
	h.mu.Lock()
	h.onChange = fn
	h.mu.Unlock()
}

// AnnounceChange tells the other brokers about c with the next NOTIFY; this broker's own caches are
// the caller's to update.
func (h *Hub) AnnounceChange(c Change) {
	h.mu.Lock()
	h.changes[c] = struct{}{}
	h.mu.Unlock()
	signal(h.kick)
}

// changed hands c to the OnChange function, if any.
func (h *Hub) changed(c Change) {
	h.mu.Lock()
	fn := h.onChange
	h.mu.Unlock()
	if fn != nil {
		fn(c)
	}
}

// connected runs each time the LISTEN session (re)connects: what was announced while it was not
// listening is lost, so every parked pop re-checks and every cached entry is in doubt.
func (h *Hub) connected() {
	h.waiters.wakeAll()
	h.changed(Change{Kind: ChangesLost})
}
