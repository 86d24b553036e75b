package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Parked long-polls are woken by events, never by re-running their pop on a short timer. A push, an
// ack that ends a lease, a seek announce at once (notify.Hub.Announce). What becomes claimable by the
// passing of time alone is announced when it comes due, by the broker that knows the instant: the one
// that handed out the lease (cancelled when the lease is acked here, moved when it is extended here),
// the one that recorded the retry delay, the one that accepted a message into a queue with
// delayedProcessing or windowBuffer. The announcement goes to this broker's parked pops and, through
// the coalesced NOTIFY, to the other brokers'. Each parked pop still re-checks after a jittered
// Options.RecheckInterval, the safety net for what a crashed broker could not announce.

// queueTimesTTL bounds how long this broker trusts a queue's cached time settings. A stale value only
// moves a wake-up: one too early finds nothing and the safety re-check follows.
const queueTimesTTL = 5 * time.Second

// queueTimes are the settings of a queue that decide when things become claimable.
type queueTimes struct {
	lease, retryDelay, delayed, window time.Duration
}

// withQueueTimes calls then with the queue's time settings: at once when cached, else once they are
// read, in the background, so that neither a pop nor a push waits for the lookup. A queue that cannot
// be read schedules nothing (its pops re-check at the safety interval).
func (e *Engine) withQueueTimes(queue string, then func(queueTimes)) {
	if t, ok := e.qtimes.get(queue); ok {
		then(t)
		return
	}
	e.qtMu.Lock()
	waiting, inFlight := e.qtWaiting[queue]
	e.qtWaiting[queue] = append(waiting, then)
	e.qtMu.Unlock()
	if inFlight {
		return // the lookup under way calls then too
	}
	go func() {
		t, err := e.readQueueTimes(queue)
		e.qtMu.Lock()
		thens := e.qtWaiting[queue]
		delete(e.qtWaiting, queue)
		e.qtMu.Unlock()
		if err != nil {
			return
		}
		e.qtimes.put(queue, t)
		for _, f := range thens {
			f(t)
		}
	}()
}

func (e *Engine) readQueueTimes(queue string) (queueTimes, error) {
	// Not the request's context: the lookup serves whatever the queue schedules in the meantime too.
	ctx, cancel := context.WithTimeout(context.Background(), e.opt.OperationTimeout)
	defer cancel()
	q, err := e.st.Queues().QueueByName(ctx, queue)
	if err != nil {
		return queueTimes{}, err
	}
	// The pop statement reads a lease time of 0 as 60 s (pop.sql).
	t := queueTimes{lease: 60 * time.Second, retryDelay: time.Duration(q.RetryDelay) * time.Millisecond,
		delayed: time.Duration(q.DelayedProcessing) * time.Second, window: time.Duration(q.WindowBuffer) * time.Second}
	if q.LeaseTime > 0 {
		t.lease = time.Duration(q.LeaseTime) * time.Second
	}
	return t, nil
}

// leaseHandedOut schedules the announcement of a lease's partitions for when it runs out unacked. The
// instant is taken after the claim committed, so it is never before the expiry the database recorded.
func (e *Engine) leaseHandedOut(queue string, lease uuid.UUID, partitions []string) {
	at := time.Now()
	e.withQueueTimes(queue, func(t queueTimes) {
		e.hub.AnnounceAt(queue, partitions, at.Add(t.lease), lease.String())
	})
}

// leaseAcked takes back what a lease's expiry would have announced, per partition whose lease ended,
// and schedules the announcement of a partition put in a retry delay for when the delay ends.
func (e *Engine) leaseAcked(items []AckItem, res []AckResult) {
	for i, r := range res {
		if i >= len(items) || !r.Success || !r.LeaseReleased || r.QueueName == nil || r.PartitionName == nil {
			continue
		}
		if items[i].LeaseID != "" {
			e.hub.Cancel(items[i].LeaseID, *r.PartitionName)
		}
		if items[i].Status == AckFailed && !r.DLQ {
			queue, part, at := *r.QueueName, []string{*r.PartitionName}, time.Now()
			e.withQueueTimes(queue, func(t queueTimes) {
				if t.retryDelay > 0 {
					e.hub.AnnounceAt(queue, part, at.Add(t.retryDelay), "")
				}
			})
		}
	}
}

// pushedLater schedules the announcement of pushed partitions that are not claimable at once: those of
// a queue with delayedProcessing (the messages become visible) or windowBuffer (the partition becomes
// claimable once no push came for that long).
func (e *Engine) pushedLater(queue string, partitions []string) {
	at := time.Now()
	e.withQueueTimes(queue, func(t queueTimes) {
		if t.delayed > 0 {
			e.hub.AnnounceAt(queue, partitions, at.Add(t.delayed), "")
		}
		if t.window > 0 {
			e.hub.AnnounceAt(queue, partitions, at.Add(t.window), "")
		}
	})
}
