package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// vacuumMinDead is the fewest dead rows for which the vacuum job vacuums pending_partitions: a pop
// walks past at most about 20 index pages of them, and each vacuum makes every connection re-plan the
// statements that read the table.
const vacuumMinDead = 2000

// vacuumDuty bounds the share of its time the vacuum job spends vacuuming: a vacuum that cannot remove
// its dead rows (an old snapshot holds them) would otherwise be retried back to back. Not less: a
// vacuum under load takes seconds (it waits for the pops' pins on each index page it cleans), and a
// tighter bound then left 90 000 dead rows in the line through a whole 10 s window at 100 000
// partitions.
const vacuumDuty = 0.5

// NewVacuum builds the loop that, every interval, vacuums pending_partitions once it holds at least as
// many dead rows as live ones (store.VacuumPending): within seconds of a large queue's deletion, of its
// backlog being consumed, or of a few thousand claims, instead of at autovacuum's next round.
func NewVacuum(st *store.Store, log *slog.Logger, interval time.Duration) *Loop {
	return NewLoop("vacuum", interval, log, func(ctx context.Context) error {
		_, err := st.VacuumPending(ctx, vacuumMinDead)
		return err
	}).BoundDuty(vacuumDuty)
}
