package views

import (
	"context"
	"encoding/json"
	"time"

	"github.com/queen-go/queen/internal/engine"
)

// PostgresStatsReport is /api/v1/analytics/postgres-stats: the database's health for the dashboard's
// System page. Each per-table section is the same rows seen through its own columns.
type PostgresStatsReport struct {
	Timestamp        string            `json:"timestamp"`
	Database         json.RawMessage   `json:"database"`
	DatabaseCache    json.RawMessage   `json:"databaseCache"`
	TableCache       []map[string]any  `json:"tableCache"`
	IndexCache       []map[string]any  `json:"indexCache"`
	CacheSummary     map[string]any    `json:"cacheSummary"`
	DeadTuples       []map[string]any  `json:"deadTuples"`
	HotUpdates       []map[string]any  `json:"hotUpdates"`
	AutovacuumStatus []map[string]any  `json:"autovacuumStatus"`
	TableSizes       []map[string]any  `json:"tableSizes"`
	ActiveQueries    json.RawMessage   `json:"activeQueries"`
	BufferConfig     json.RawMessage   `json:"bufferConfig"`
	BufferUsage      []json.RawMessage `json:"bufferUsage"` // needs the pg_buffercache extension, which the broker does not install
}

// PostgresStats reads pg_stat_* for the broker's schema.
func (v *Views) PostgresStats(ctx context.Context) (*PostgresStatsReport, error) {
	m, err := v.st.Analytics().PostgresStats(ctx)
	if err != nil {
		return nil, engine.OpFailed("postgres stats", err)
	}
	var tables, tableCache, indexCache []map[string]any
	for _, x := range []struct {
		key string
		dst *[]map[string]any
	}{{"tables", &tables}, {"tableCache", &tableCache}, {"indexCache", &indexCache}} {
		if err := json.Unmarshal(m[x.key], x.dst); err != nil {
			return nil, engine.OpFailed("postgres stats", err)
		}
	}
	pick := func(cols ...string) []map[string]any {
		out := make([]map[string]any, len(tables))
		for i, t := range tables {
			row := map[string]any{"table": t["table"]}
			for _, c := range cols {
				row[c] = t[c]
			}
			out[i] = row
		}
		return out
	}
	var hit, read float64
	for _, t := range tableCache {
		h, _ := t["heapHit"].(float64)
		rd, _ := t["heapRead"].(float64)
		hit, read = hit+h, read+rd
	}
	var hitRatio any
	if hit+read > 0 {
		hitRatio = round2(100 * hit / (hit + read))
	}
	return &PostgresStatsReport{Timestamp: engine.ISOMillis(time.Now()), Database: m["database"], DatabaseCache: m["database"],
		TableCache: tableCache, IndexCache: indexCache,
		CacheSummary:     map[string]any{"heapHit": hit, "heapRead": read, "heapHitRatio": hitRatio},
		DeadTuples:       pick("liveTuples", "deadTuples", "deadRatio"),
		HotUpdates:       pick("updates", "hotUpdates", "hotRatio"),
		AutovacuumStatus: pick("lastVacuum", "lastAutovacuum", "lastAutoanalyze", "autovacuumCount"),
		TableSizes:       pick("totalBytes", "totalSize", "tableSize", "indexSize"),
		ActiveQueries:    m["activeQueries"], BufferConfig: m["bufferConfig"], BufferUsage: []json.RawMessage{}}, nil
}
