package engine

import (
	"strings"

	"github.com/queen-go/queen/internal/notify"
)

// queueChanged forgets what this broker caches about queue: its options (maxSize, encryption, the
// time settings of its wake-ups) and, when it was deleted, its partition ids and the subscriptions
// recorded on it (a queue created anew under the name needs them recorded again: they seed its
// pending-work rows). Configure and delete call it here, and tell the other brokers, whose hubs call
// applyChange.
func (e *Engine) queueChanged(queue string, deleted bool) {
	e.lim.forget(queue)
	e.enc.forget(queue)
	e.qtimes.forget(queue)
	if deleted {
		e.parts.forgetQueue(queue)
		e.subs.forgetIf(func(k string) bool { return strings.HasPrefix(k, queue+"\x00") })
	}
}

// announce updates this broker's caches for c and tells the other brokers.
func (e *Engine) announce(c notify.Change) {
	e.applyChange(c)
	e.hub.AnnounceChange(c)
}

// applyChange updates the caches for a change made here or announced by another broker. After a lost
// notification (ChangesLost) every cached option and subscription is read again; partition ids are
// kept, since a push that meets a deleted one looks it up again anyway (pushStored).
func (e *Engine) applyChange(c notify.Change) {
	switch c.Kind {
	case notify.QueueConfigured, notify.QueueDeleted:
		e.queueChanged(c.Name, c.Kind == notify.QueueDeleted)
	case notify.GroupDeleted:
		e.subs.forgetIf(func(k string) bool { return strings.HasSuffix(k, "\x00"+c.Name) })
	case notify.ChangesLost:
		e.lim.clear()
		e.enc.clear()
		e.qtimes.clear()
		e.subs.clear()
	}
}
