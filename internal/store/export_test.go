package store

import "github.com/jackc/pgx/v5/pgxpool"

// Queries exposes the named queries to the external tests.
var Queries = queries

// PoolOf exposes a store's pool to the external tests.
func PoolOf(s *Store) *pgxpool.Pool { return s.pool }
