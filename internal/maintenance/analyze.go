package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// analyzeMinRows is the fewest live rows for which a table is analyzed ahead of autovacuum: below
// that, a scan of the whole table or of an index costs little whatever the plan.
const analyzeMinRows = 1000

// analyzeGrowth is how many times the rows its statistics counted a table must hold to be analyzed:
// each ANALYZE makes every connection plan the statements that read the table again (1.5-16 ms each
// for Pop), so a growing table is analyzed a few times per order of magnitude, not continuously.
const analyzeGrowth = 4

// analyzeSettled is the row count of a table's statistics from which the job leaves the table to
// autoanalyze. The plans it replaces are those built from the statistics of an empty or nearly empty
// table; the hot statements are written so that, past that, their plans keep to the key lookups
// whatever the counts (the plan tests). Later analyzes of a growing table only cost: in fanout-g10 the
// job analyzed messages two or three times a window, each ANALYZE 200-290 ms of PostgreSQL and a new
// plan of the Pop statement, 10 ms, on each of a dozen connections.
const analyzeSettled = 10_000

// NewAnalyze builds the loop that, every interval, analyzes the tables the hot statements read once
// their rows have outgrown their statistics (store.AnalyzeOutgrown): a generic plan built from the
// statistics of an emptied table is then replaced within seconds, instead of at autoanalyze's next
// round.
func NewAnalyze(st *store.Store, log *slog.Logger, interval time.Duration) *Loop {
	return NewLoop("analyze", interval, log, func(ctx context.Context) error {
		names, err := st.Jobs().AnalyzeOutgrown(ctx, analyzeMinRows, analyzeGrowth, analyzeSettled)
		if len(names) > 0 {
			log.DebugContext(ctx, "analyzed tables that outgrew their statistics", slog.Any("tables", names))
		}
		return err
	})
}
