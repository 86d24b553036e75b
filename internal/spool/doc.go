// Package spool is the durable on-disk push spool behind FILE_BUFFER_DIR.
//
// When PostgreSQL is unreachable the broker appends pushes to a Spool and
// answers 201 "buffered" only after Append returned nil, i.e. after the
// records are on stable storage. A background loop later calls Replay, which
// hands the records back oldest first, in exactly the order the Append calls
// returned, so they can be written into PostgreSQL. Replay is at-least-once:
// a crash may re-deliver the batch that was in flight, which the broker
// tolerates because pushes are deduplicated by transactionId. Nothing that
// was acknowledged by Append is ever dropped on purpose.
//
// # File format
//
// The spool directory holds segment files named
// spool-<20-digit zero-padded sequence>.log. Sequences only grow, so the
// lexical order of the names is the append order. A segment is a plain
// concatenation of frames:
//
//	[4-byte little-endian payload length][4-byte little-endian CRC32-C of payload][payload]
//
// Payloads are opaque, non-empty and at most Options.MaxRecordBytes long.
// Empty payloads are rejected because a zero-filled tail (which some file
// systems leave behind after a crash) would otherwise decode as an endless
// run of valid empty records: CRC32-C of nothing is 0.
//
// A reader stops at the first frame that is incomplete, has a zero or absurd
// length, or fails its checksum (a "torn tail"). Everything before that frame
// is replayed; the rest of that segment is ignored and logged at warn level.
// That rule is only safe because nothing is ever appended after a tear: a
// freshly opened Spool never appends to a segment left by a previous process,
// and a segment whose write or fsync failed is abandoned.
//
// Replay progress is kept in spool.ckpt, a 20-byte file holding the sequence
// and byte offset up to which records were acknowledged by the replay
// callback, protected by its own CRC32-C. It is rewritten atomically (write
// to spool.ckpt.tmp, fsync, rename). Segments with a lower sequence than the
// checkpoint are fully consumed; fully consumed segments are deleted.
//
// # Durability
//
// Append writes all frames of a call with one write to the active segment
// and fsyncs the file before returning. Concurrent Appends are group
// committed: while one goroutine is writing and syncing, the others queue up
// and the next one writes and fsyncs all queued calls at once. If the write
// or fsync fails, the segment is truncated back to its last synced offset (so
// the failed frames cannot turn up as valid records later), synced again and
// abandoned; the next Append starts a new segment, because after a failed
// fsync the kernel's view of the file can no longer be trusted.
//
// Every creation, rename or removal of a file is followed by an fsync of the
// directory; without it the directory entry of a freshly created segment or
// checkpoint could vanish in a crash even though the file data was synced.
//
// # Replay and the active segment
//
// Replay never reads the segment that Append is writing to. When a Replay
// starts and the active segment holds records, it is sealed (closed) and the
// next Append lazily creates a new segment. Replay therefore only reads
// immutable files, cannot race with a write or a rollback truncation, and can
// delete each segment as soon as it is consumed. The price is a few small
// segments when replay runs while pushes keep arriving, which only happens
// during the short window around an outage.
//
// Only one process may use a spool directory at a time.
package spool
