// Package engine implements the queue semantics on top of the store: push with idempotency and
// cross-request batching, pop with partition leases and long-polling, acknowledgements with their
// rejection rules, and queue configuration. It knows nothing about HTTP.
//
// Locks: waiters.mu and partitionCache.mu are leaves; no code path holds one while taking another.
package engine
