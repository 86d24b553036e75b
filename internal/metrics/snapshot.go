package metrics

import (
	"time"

	"github.com/queen-go/queen/internal/maintenance"
)

// SetStats feeds a stats-loop snapshot into the per-queue gauges; it is the loop's OnSnapshot.
func (m *Metrics) SetStats(s maintenance.StatsSnapshot) {
	gs := make([]QueueGauge, len(s.Queues))
	for i, q := range s.Queues {
		g := QueueGauge{Queue: q.Name, Pending: q.Pending, Processing: q.Processing, DeadLetters: s.DLQ[q.Name]}
		if q.OldestPendingAt != nil {
			g.LagSeconds = max(s.At.Sub(*q.OldestPendingAt), time.Duration(0)).Seconds()
		}
		gs[i] = g
	}
	m.SetQueueGauges(s.At, gs)
}
