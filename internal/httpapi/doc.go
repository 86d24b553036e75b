// Package httpapi is the broker's HTTP transport: the route table, request decoding and validation,
// and the single mapping from errors to status codes and the {"error": ...} envelope. Queue semantics
// live in the engine; this package only translates.
package httpapi
