// Package store is the broker's only door to PostgreSQL: it owns the connection pool, applies the
// embedded schema migrations, runs the named queries of queries/*.sql and translates driver errors into
// the package's own error values, so that no other package of the broker talks to the driver (the
// engine only borrows pgtype's nullable value types in the store's row structs).
package store
