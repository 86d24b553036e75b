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

// NewAnalyze builds the loop that, every interval, analyzes the tables the hot statements read once
// their rows have outgrown their statistics (store.AnalyzeOutgrown): a generic plan built from the
// statistics of an emptied table is then replaced within seconds, instead of at autoanalyze's next
// round.
func NewAnalyze(st *store.Store, log *slog.Logger, interval time.Duration) *Loop {
	return NewLoop("analyze", interval, log, func(ctx context.Context) error {
		names, err := st.AnalyzeOutgrown(ctx, analyzeMinRows, analyzeGrowth)
		if len(names) > 0 {
			log.DebugContext(ctx, "analyzed tables that outgrew their statistics", slog.Any("tables", names))
		}
		return err
	})
}
