package engine

import (
	"context"

	"github.com/queen-go/queen/internal/store"
)

// Overview reads the live lease and dead-letter summaries.
func (e *Engine) Overview(ctx context.Context) (store.LeaseSummary, store.DLQSummary, error) {
	l, d, err := e.st.Overview(ctx)
	return l, d, opErr("overview", err)
}
