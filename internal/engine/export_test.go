package engine

import "context"

// DisableAckOne makes e acknowledge every batch through the full path (Store.Ack and ackDecider), so
// that tests can compare it with the one-statement path on the same acks. Call it before Start.
func DisableAckOne(e *Engine) { e.ackOne.off = true }

// AckOneCounts reports how many ack batches the one-statement path applied, and how many it tried and
// handed on to the full path.
func AckOneCounts(e *Engine) (applied, declined int64) {
	return e.ackOne.applied.Load(), e.ackOne.declined.Load()
}

// AckLeaseCount reports how many ack batches the whole-lease statement applied (counted in
// AckOneCounts' applied too).
func AckLeaseCount(e *Engine) int64 { return e.ackOne.leases.Load() }

// AckMerged applies several ack requests as the coalescer does when they arrive together: one batch,
// results split per request.
func AckMerged(ctx context.Context, e *Engine, reqs [][]AckItem) ([][]AckResult, error) {
	for _, r := range reqs {
		for i := range r {
			if err := normalizeAck(&r[i]); err != nil {
				return nil, err
			}
		}
	}
	return e.ackBatch(ctx, reqs)
}
