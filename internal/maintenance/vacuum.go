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

// vacuumMinWalk is how many pages past the index's levels the steps of the pops' walks must have read
// on average since the previous check for vacuumMinDead dead rows to be vacuumed: below that the pops
// do not walk them, and a vacuum would cost more than it saves (it updates the table's pg_class row,
// after which every statement that reads the table is planned again on every connection, 1.5-16 ms
// each for Pop). See walkExcess.
const vacuumMinWalk = 1.0

// vacuumMinDeadAnyWalk is the most dead rows left unvacuumed while no pop walks past them: a vacuum of
// a large table under load takes seconds, and waiting for the walk to show its dead entries (the pops
// of partitions-100000's setup spread them over 100 steps each) let 70 000 of them reach the measured
// window instead of 9 500. In a short line it makes one vacuum of every ten.
const vacuumMinDeadAnyWalk = 20000

// vacuumDuty bounds the share of its time the vacuum job spends vacuuming: a vacuum that cannot remove
// its dead rows (an old snapshot holds them) would otherwise be retried back to back. Not less: a
// vacuum under load takes seconds (it waits for the pops' pins on each index page it cleans), and a
// tighter bound then left 90 000 dead rows in the line through a whole 10 s window at 100 000
// partitions.
const vacuumDuty = 0.5

// vacuumJob is the vacuum loop's state: the previous sample of pending_partitions' counters.
type vacuumJob struct {
	st   *store.Store
	log  *slog.Logger
	prev store.PendingLine
	have bool // prev was taken since the job's last vacuum
}

// NewVacuum builds the loop that, every interval, vacuums pending_partitions once it holds at least as
// many dead rows as live ones (store.VacuumPending), and at least vacuumMinDead of them if wildcard pops
// walk past them (walkExcess), vacuumMinDeadAnyWalk otherwise: within seconds of a large queue's
// backlog being consumed, or of a few thousand claims of a long line, instead of at autovacuum's next
// round.
func NewVacuum(st *store.Store, log *slog.Logger, interval time.Duration) *Loop {
	j := &vacuumJob{st: st, log: log}
	return NewLoop("vacuum", interval, log, j.pass).BoundDuty(vacuumDuty)
}

func (j *vacuumJob) pass(ctx context.Context) error {
	cur, ok, err := j.st.Jobs().PendingLineSample(ctx)
	if err != nil || !ok {
		return err
	}
	prev, have := j.prev, j.have
	j.prev, j.have = cur, true
	if !have {
		return nil
	}
	walk := walkExcess(prev, cur)
	minDead := int64(vacuumMinDead)
	if walk < vacuumMinWalk {
		minDead = vacuumMinDeadAnyWalk
	}
	began := time.Now()
	vacuumed, err := j.st.Jobs().VacuumPending(ctx, minDead)
	if err != nil || !vacuumed {
		return err
	}
	j.log.DebugContext(ctx, "vacuumed pending_partitions", slog.Float64("walkExcess", walk), slog.Duration("took", time.Since(began)))
	// The vacuum's own reads of the index would count as walked pages in the next difference.
	j.have = false
	return nil
}

// walkExcess is the average number of pages a step of the pops' walks read since prev beyond what the
// descents of the line index read anyway: the dead entries the walks stepped over. Every scan (a step of
// a pop's walk) and every entry added descends the index's levels once; the pages past those are
// counted per scan, not per descent, so that the inserts of a burst of pushes (which walk nothing) do
// not hide a walk. Counters that went back (statistics reset) or no scan at all give 0.
//
// Dead rows alone (store.VacuumPending's test) are no sign of a walk: in a line that fits in one or two
// index pages (a fan-out over few partitions) each claim's dead entry is dropped from its page by the
// next insert that would split it, and only the heap keeps the row, which no walk reads. In fanout-g10
// the descents read 2.0 pages each (the index's two levels) with 2 000 dead rows or none, while a
// vacuum every few seconds made each hot connection plan Pop again (30-52 plans per 15 s window instead
// of 10). A long line is walked past its dead entries: a page that only held entries since moved to the
// back gets no insert, so no page-level cleanup, until a vacuum.
func walkExcess(prev, cur store.PendingLine) float64 {
	scans, entries, pages := cur.Scans-prev.Scans, cur.Entries-prev.Entries, cur.Pages-prev.Pages
	if scans <= 0 || entries < 0 || pages < 0 {
		return 0
	}
	return float64(pages-int64(lineLevels(cur.IndexPages))*(scans+entries)) / float64(scans)
}

// lineLevels estimates the levels of a B-tree index of pages pages (its metapage included), which is
// what a descent reads when it walks nothing. It assumes 256 downlinks per page above the leaves; the
// line index's pivot keys (a uuid, a group name, a time and the partition id's 16 bytes: migration
// 0017) fit fewer, so the estimate errs low, which makes vacuums come sooner, as they came before the
// walk was measured.
func lineLevels(pages int64) int {
	levels := 1
	for n := pages - 1; n > 1; n = (n + 255) / 256 {
		levels++
	}
	return levels
}
