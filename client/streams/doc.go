// Package streams is Queen's stream processor: a fat client that pops a source queue, runs operators
// (map, filter, flatMap, keyBy, windows with reduce/aggregate, a gate) in this process, and commits
// every cycle — state changes, sink pushes and the source acknowledgement — through the broker's
// /streams/v1 routes in one PostgreSQL transaction.
//
// A source partition is the unit of state ownership: its lease makes the runner holding it the only
// writer of that partition's state, so state rows are keyed (query, source partition, key) and no
// cross-worker locking is needed. Delivery is at-least-once with idempotent state commits: a crash
// before the commit leaves the messages leased, and after the lease expires they are processed
// again from the last committed state, so aggregates are neither lost nor counted twice. Side
// effects run by Foreach happen before the commit and may repeat.
//
// The wire contract (routes, state key formats, config hash) is shared with the JavaScript and
// Python runtimes; a query registered by one can be resumed by another with the same chain.
package streams
