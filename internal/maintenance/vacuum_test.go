package maintenance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestLineLevels: one page is root and leaf; 256 leaves under one root; a third level past that.
func TestLineLevels(t *testing.T) {
	for pages, levels := range map[int64]int{0: 1, 1: 1, 2: 1, 3: 2, 6: 2, 257: 2, 258: 3, 2462: 3, 65537: 3, 65538: 4} {
		require.Equal(t, levels, lineLevels(pages), "%d pages", pages)
	}
}

// TestWalkExcess reads the pops' walk from two samples of the line index's counters (figures of
// fanout-g10 and of partitions-100000's window).
func TestWalkExcess(t *testing.T) {
	at := func(scans, entries, pages, indexPages int64) store.PendingLine {
		return store.PendingLine{Scans: scans, Entries: entries, Pages: pages, IndexPages: indexPages}
	}
	// A short line: every descent reads the two levels, whatever the dead rows.
	require.InDelta(t, 0, walkExcess(at(1000, 1000, 4000, 6), at(2593, 2593, 10372, 6)), 1e-9)
	// Pops stepping over 2 000 pages of dead entries each, diluted by neither the inserts nor the
	// other steps: counted per step.
	require.InDelta(t, 100, walkExcess(at(0, 0, 0, 2462), at(20000, 100000, 3*120000+2000000, 2462)), 1e-9)
	// No step of a walk, or counters reset: nothing walked.
	require.Zero(t, walkExcess(at(10, 10, 40, 6), at(10, 500, 1020, 6)))
	require.Zero(t, walkExcess(at(10, 10, 40, 6), at(5, 5, 20, 6)))
}
