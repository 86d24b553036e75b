package store

// The store's statements of the admin and background domains are reached through a value per domain
// (st.Groups().SeekQueue, st.Jobs().RefreshQueueStats…), as the engine's are: Store itself keeps the
// connections, the hot paths (push, pop, ack, leases, wake-ups) and the queue configuration they read.
// Each is the Store under another name; it holds no state of its own.

// Queues are the queues' configuration, listings, exact counts and deletion (queues.go); the reads the
// hot paths make of a queue's settings stay on Store.
type Queues struct{ s *Store }

// Groups are the consumer groups' subscriptions, positions and views (groups.go).
type Groups struct{ s *Store }

// DeadLetters are the dead-letter queue's reads and actions (dlq.go).
type DeadLetters struct{ s *Store }

// Jobs are the background jobs' statements: statistics, retention, eviction, vacuum and analyze.
type Jobs struct{ s *Store }

// Traces are the message traces (traces.go).
type Traces struct{ s *Store }

// Streams are the stream processor's registry and state (streams.go; the cycle runs in a Tx).
type Streams struct{ s *Store }

// Messages are the messages at rest: listing, one message with its consumers, deletion (messages.go).
type Messages struct{ s *Store }

// Analytics are the operation series, broker samples, PostgreSQL statistics and the status overview.
type Analytics struct{ s *Store }

func (s *Store) Queues() Queues           { return Queues{s} }
func (s *Store) Groups() Groups           { return Groups{s} }
func (s *Store) DeadLetters() DeadLetters { return DeadLetters{s} }
func (s *Store) Jobs() Jobs               { return Jobs{s} }
func (s *Store) Traces() Traces           { return Traces{s} }
func (s *Store) Streams() Streams         { return Streams{s} }
func (s *Store) Messages() Messages       { return Messages{s} }
func (s *Store) Analytics() Analytics     { return Analytics{s} }
