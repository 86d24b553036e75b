package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// PostgresStats reads the database's health figures (pg_stat_* views, scoped to the broker's schema),
// one JSON value per section, keyed as the dashboard expects.
func (a Analytics) PostgresStats(ctx context.Context) (map[string]json.RawMessage, error) {
	s := a.s
	out := map[string]json.RawMessage{}
	for key, name := range map[string]string{
		"database": "PgDatabase", "tableCache": "PgTableCache", "indexCache": "PgIndexCache",
		"tables": "PgTables", "activeQueries": "PgActivity", "bufferConfig": "PgSettings",
	} {
		var v []byte
		if err := s.pool.QueryRow(ctx, q(name)).Scan(&v); err != nil {
			return nil, fmt.Errorf("store: postgres stats %s: %w", key, interpret(err))
		}
		out[key] = v
	}
	return out, nil
}
