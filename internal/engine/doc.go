// Package engine implements the queue semantics on top of the store: push with idempotency and
// cross-request batching, pop with partition leases and long-polling, acknowledgements with their
// rejection rules, queue configuration, consumer groups, dead letters and the maintenance switches.
// The read models (status, analytics, queue and message browsing, traces) are package views, which
// uses this package's errors and its payload decryption. It knows nothing about HTTP, and the
// driver's types stay in the store.
//
// # Locks
//
// The engine's mutexes, each named by the field it guards (docs/locking.md collects every package):
//
//   - Modes.mu: held across the read of the maintenance flags (one round-trip, bounded by
//     one second), so that concurrent callers wait for that one read instead of each making their own.
//     While holding it the engine takes no other engine lock; the read takes a pool connection.
//   - notify.Hub's locks (its waiters' mu and its own), queueCounters.mu and the ttlCache mutexes (parts, subs, lim, enc) are
//     leaves: no code path holds one of them while taking any other lock, and none is held across a
//     database call or a channel send that can block.
//
// So the only order is Modes.mu → pgxpool (inside store). The spool's mutex is taken inside
// the spool only, never while an engine lock is held.
package engine
