package maintenance

import (
	"context"
	"log/slog"
	"time"
)

// Replayer is the engine's side of the spool replay: one pass, and the channel on which a spooled push
// asks for a pass at once.
type Replayer interface {
	ReplaySpool(ctx context.Context) error
	SpoolWake() <-chan struct{}
}

// NewSpoolReplay builds the loop that inserts the pushes spooled to disk during an outage (or push
// maintenance) into PostgreSQL, every interval and whenever a push is spooled.
func NewSpoolReplay(r Replayer, log *slog.Logger, interval time.Duration) *Loop {
	return NewLoop("spool replay", interval, log, r.ReplaySpool).WakeOn(r.SpoolWake())
}
