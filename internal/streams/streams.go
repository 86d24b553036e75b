// Package streams is the broker side of the fat-client stream processor (client/streams): operators run
// in the client; the broker keeps a registry of queries, a key/value state per (query, source
// partition), and commits each processing cycle (state changes, sink pushes, source ack) in one
// PostgreSQL transaction through the engine's push rules.
package streams

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/store"
)

// Service answers the /streams/v1 routes.
type Service struct {
	st  *store.Store
	eng *engine.Engine
}

// New serves streams over st; cycles push and ack through eng.
func New(st *store.Store, eng *engine.Engine) *Service { return &Service{st: st, eng: eng} }

// Query registers a stream query (POST /streams/v1/queries).
type Query = store.StreamQuery

// Registration answers a registration. Conflict is set (and nothing changed) when the stored
// config hash differs and no reset was asked for.
type Registration struct {
	Success    bool   `json:"success"`
	QueryID    string `json:"query_id"`
	Name       string `json:"name"`
	ConfigHash string `json:"config_hash,omitempty"`
	Fresh      bool   `json:"fresh"`
	Reset      bool   `json:"reset"`
	Error      string `json:"error,omitempty"`
	Conflict   bool   `json:"-"`
}

// Register inserts the query or compares its config hash with the stored one. reset wipes
// the state only when the hash changed: an unchanged chain keeps its state whatever reset says.
func (s *Service) Register(ctx context.Context, q Query) (*Registration, error) {
	if err := validate(q); err != nil {
		return nil, err
	}
	r, err := s.st.Streams().RegisterStreamQuery(ctx, q)
	if err != nil {
		return nil, engine.OpFailed("register stream query", err)
	}
	out := &Registration{Success: !r.Mismatch, QueryID: r.ID.String(), Name: q.Name, Fresh: r.Fresh, Reset: r.Reset}
	if r.Mismatch {
		out.Conflict = true
		out.Error = fmt.Sprintf("config_hash mismatch: operator chain changed for queryId '%s'. Pass reset:true to wipe existing state, or use a new queryId.", q.Name)
		return out, nil
	}
	out.ConfigHash = q.ConfigHash
	return out, nil
}

// StateQuery reads state rows of one shard (POST /streams/v1/state/get).
type StateQuery = store.StateFilter

// StateTimeFormat is how updated_at is written on the wire: microseconds, like PostgreSQL stores it,
// so a value read back as a state op's expectation compares exactly.
const StateTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// StateRow is one state row on the wire.
type StateRow struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt string          `json:"updated_at"`
}

// State returns the matching state rows ordered by key; missing keys are simply absent.
func (s *Service) State(ctx context.Context, f StateQuery) ([]StateRow, error) {
	rows, err := s.st.Streams().StreamState(ctx, f)
	if err != nil {
		return nil, engine.OpFailed("state get", err)
	}
	out := make([]StateRow, len(rows))
	for i, r := range rows {
		out[i] = StateRow{Key: r.Key, Value: r.Value, UpdatedAt: r.UpdatedAt.UTC().Format(StateTimeFormat)}
	}
	return out, nil
}

// StateOp is one state change of a cycle as sent: Type "upsert" or "delete" ("" when absent or null).
// Expect is an optional optimistic check (an extension of the original contract, docs/streams.md):
// nil = none; Absent = the key must not exist; otherwise the row's updated_at must be UpdatedAt.
type StateOp struct {
	Type   string
	Key    string
	Value  json.RawMessage
	Expect *StateExpect
}

// StateExpect is what the writer read of a key before changing it.
type StateExpect struct {
	Absent    bool
	UpdatedAt time.Time
}

// CycleAck acknowledges the source up to and including one message.
type CycleAck struct {
	TransactionID string
	LeaseID       string // "": not checked
	Status        string // "": completed
	Count         int    // 0: 1
	Error         string
}

// CycleRequest is one atomic cycle commit (POST /streams/v1/cycle).
type CycleRequest struct {
	QueryID, PartitionID string // parsed here, so a malformed id is a reported failure, not a 400
	ConsumerGroup        string // "": queue mode
	// CycleID is the client's idempotency key (an extension of the original contract): "" = none.
	// A cycle whose id the shard already recorded committed before and applies nothing.
	CycleID      string
	ReleaseLease bool
	StateOps     []StateOp
	PushItems    []engine.PushItem
	Invalid      string // part of the body could not be read: the cycle fails with this text
	Ack          *CycleAck
}

// CycleAckResult reports what the cycle's ack did.
type CycleAckResult struct {
	Success       bool `json:"success"`
	Count         int  `json:"count"`
	LeaseReleased bool `json:"lease_released"`
	DLQ           bool `json:"dlq"`
}

// CycleResult answers a cycle. Success false means everything of the cycle was rolled back; it is
// still a completed call (HTTP 200). Infrastructure failures are returned as errors instead.
type CycleResult struct {
	Success         bool                `json:"success"`
	Error           string              `json:"error,omitempty"`
	QueryID         string              `json:"query_id"`
	PartitionID     string              `json:"partition_id"`
	QueueName       *string             `json:"queueName"`
	StateOpsApplied int                 `json:"state_ops_applied"`
	PushResults     []engine.PushResult `json:"push_results"`
	AckResult       *CycleAckResult     `json:"ack_result"`
	// Duplicate: the cycle_id was committed before; this call applied nothing.
	Duplicate bool `json:"duplicate,omitempty"`
}

// CycleIDRetention is how long a recorded cycle id keeps refusing its repeats: longer than any client
// keeps retrying one cycle (the runtimes give up after 4 attempts of at most 30 s each).
const CycleIDRetention = 15 * time.Minute

// CycleBodyRetention is how long an ack-less cycle sent without a cycle_id is recognised by its body.
// Shorter: a later flush that is not a retry but happens to carry the same body (the same window
// closed again with the same value) waits this long before it applies.
const CycleBodyRetention = 3 * time.Minute

// RejectSourceLeased refuses a cycle without an ack (an idle flush) while the source partition is
// leased to the group: the lease holder has read the shard's state and will commit changes computed
// from it, so a flush committed meanwhile would be overwritten or emitted twice.
const RejectSourceLeased = "source partition is leased: a cycle without an ack waits until the lease is released"

// cycleFailure rolls a cycle back and is reported in the body, never as an HTTP error.
type cycleFailure struct{ msg string }

func (f *cycleFailure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &cycleFailure{msg: fmt.Sprintf(format, args...)} }

// Cycle commits one processing cycle of a stream shard in a single transaction: shard lock, state ops
// in order, the ack of the source (lease checked), the sink pushes through the push path's rules.
// Any business failure (bad id, unknown op, missing message, stale lease, a statement rejected by
// PostgreSQL) rolls everything back and answers Success false. Only infrastructure failures are
// errors, and retrying them is safe: every cycle applies at most once (docs/streams.md, Guarantees).
//   - A cycle with an ack moved the cursor past its message when it committed: a repeat is refused.
//   - A cycle without an ack (an idle flush) is refused while the source partition is leased, so it
//     never commits between a runner's read of the state and that runner's cycle; it holds the
//     consumer row until it commits, so the next pop reads what it left; and each of its deletes must
//     find its row, so a flush of windows another cycle closed is refused.
//   - A repeat of a committed cycle with the same cycle_id, or without an ack and id with the same
//     body, applies nothing and says so (Duplicate).
func (s *Service) Cycle(ctx context.Context, req CycleRequest) (*CycleResult, error) {
	res := &CycleResult{QueryID: req.QueryID, PartitionID: req.PartitionID, PushResults: []engine.PushResult{}}
	err := s.cycle(ctx, req, res)
	var cf *cycleFailure
	var refused *engine.PushRefused
	var pe *store.PgError
	var sc *store.StateConflictError
	switch {
	case err == nil:
		res.Success = true
		return res, nil
	case errors.As(err, &cf):
		return failed(res, cf.msg), nil
	case errors.As(err, &refused):
		return failed(res, fmt.Sprintf("push_items[%d]: %s", refused.Index, refused.Why)), nil
	case errors.As(err, &sc):
		return failed(res, sc.Error()), nil
	case errors.As(err, &pe) && !transientPg(pe.Code):
		// A statement-level failure is the cycle's own fault; the connection and the pool are fine.
		// Its text names tables and constraints, so the answer says what it means instead.
		if pe.Code == "23503" {
			return failed(res, fmt.Sprintf("query_id %s is not registered", req.QueryID)), nil
		}
		return failed(res, "a value was refused by the database"), nil
	}
	return nil, engine.OpFailed("cycle", err)
}

// cycleIdentity is what a repeat of req is recognised by, and for how long: its cycle_id, or for a
// cycle without an ack and without one (an original runtime's idle flush) a fingerprint of its
// body. Such a cycle has no cursor to refuse its repeat, and its deletes alone cannot tell a retry
// from a first attempt once a window of the same key was opened again in between.
func cycleIdentity(req CycleRequest) (string, time.Duration) {
	switch {
	case req.CycleID != "":
		return req.CycleID, CycleIDRetention
	case req.Ack != nil:
		return "", 0
	}
	b, err := json.Marshal(struct {
		Group  string
		Ops    []StateOp
		Pushes []engine.PushItem
	}{req.ConsumerGroup, req.StateOps, req.PushItems})
	if err != nil {
		return "", 0 // not reached: the parts were decoded from JSON
	}
	sum := sha256.Sum256(b)
	return "body:" + hex.EncodeToString(sum[:]), CycleBodyRetention
}

func failed(res *CycleResult, msg string) *CycleResult {
	res.Success, res.Error = false, msg
	res.StateOpsApplied, res.PushResults, res.AckResult = 0, []engine.PushResult{}, nil
	return res
}

func parseCycleUUID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		// PostgreSQL's own wording, which is what clients of the original see.
		return uuid.Nil, fail("invalid input syntax for type uuid: %q", s)
	}
	return id, nil
}

func (s *Service) cycle(ctx context.Context, req CycleRequest, res *CycleResult) error {
	qid, err := parseCycleUUID(req.QueryID)
	if err != nil {
		return err
	}
	pid, err := parseCycleUUID(req.PartitionID)
	if err != nil {
		return err
	}
	if req.Invalid != "" {
		return fail("%s", req.Invalid)
	}
	group := cmp.Or(req.ConsumerGroup, engine.QueueMode)
	ops := make([]store.StateOp, len(req.StateOps))
	for i, op := range req.StateOps {
		switch op.Type {
		case "upsert":
			v := op.Value
			if len(v) == 0 || string(v) == "null" {
				v = json.RawMessage("{}")
			}
			ops[i] = store.StateOp{Key: op.Key, Value: v}
		case "delete":
			ops[i] = store.StateOp{Key: op.Key, Delete: true}
		case "":
			return fail("Unknown state_op type: null")
		default:
			return fail("Unknown state_op type: %s", op.Type)
		}
		if op.Expect != nil {
			ops[i].Check, ops[i].ExpectAbsent, ops[i].ExpectUpdatedAt = true, op.Expect.Absent, op.Expect.UpdatedAt
		}
		// Without an ack nothing else tells a repeat from a first attempt: a runtime deletes only rows
		// it read, so a delete that finds none was computed from state another cycle has changed.
		ops[i].MustExist = req.Ack == nil

	}
	pushes := make([]engine.PushItem, len(req.PushItems))
	for i, p := range req.PushItems {
		if err := engine.NormalizePushItem(&p, "push_items", i); err != nil {
			return fail("%s", err.Error())
		}
		pushes[i] = p
	}
	var ack *CycleAck
	if req.Ack != nil {
		a := *req.Ack
		if a.TransactionID == "" {
			return fail("ack.transactionId is required")
		}
		a.Status = cmp.Or(a.Status, engine.AckCompleted)
		switch a.Status {
		case engine.AckCompleted, engine.AckSuccess, engine.AckFailed, engine.AckDLQ:
		default:
			return fail("Unknown ack.status: %s", a.Status)
		}
		if a.Count <= 0 {
			a.Count = 1
		}
		ack = &a
	}

	// Partitions are created (and maxSize checked) before the transaction, as for every push; their
	// ids are UUIDv7 minted in emit order, so sink order equals emit order.
	return s.eng.InPushTx(ctx, pushes, func(tx *engine.PushTx) error {
		queue, err := tx.StreamSourceQueue(ctx, pid)
		if err != nil {
			return err
		}
		res.QueueName = nil
		if queue != "" {
			res.QueueName = &queue
		}
		if err := tx.LockStreamShard(ctx, qid, pid); err != nil {
			return err
		}
		if id, keep := cycleIdentity(req); id != "" {
			fresh, err := tx.RecordStreamCycle(ctx, qid, pid, id, keep)
			if err != nil {
				return err
			}
			if !fresh {
				res.Duplicate = true
				return engine.ErrRollback // nothing was written
			}
		}
		if ack == nil {
			leased, err := tx.StreamSourceLeased(ctx, pid, group)
			if err != nil {
				return err
			}
			if leased {
				return fail("%s", RejectSourceLeased)
			}
		}
		if err := tx.ApplyStateOps(ctx, qid, pid, ops); err != nil {
			return err
		}
		var ackRes *CycleAckResult
		if ack != nil {
			target := store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: pid, Group: group}, TransactionID: ack.TransactionID}
			d := cycleAckDecision(*ack, target.ConsumerKey, req.ReleaseLease)
			if err := tx.Ack(ctx, []store.AckTarget{target}, d.decide); err != nil {
				return err
			}
			ackRes = &d.result
			if ackRes.LeaseReleased && queue != "" {
				tx.WakeOnCommit(queue)
			}
		}
		pushRes, err := tx.InsertPushes(ctx)
		if err != nil {
			return err
		}
		res.StateOpsApplied, res.PushResults, res.AckResult = len(ops), pushRes, ackRes
		return nil
	})
}

// cycleAck decides the cycle's ack inside the transaction, on the locked consumer row.
type cycleAck struct {
	ack     CycleAck
	key     store.ConsumerKey
	release bool
	result  CycleAckResult
}

func cycleAckDecision(a CycleAck, key store.ConsumerKey, release bool) *cycleAck {
	return &cycleAck{ack: a, key: key, release: release}
}

// decide applies the streams ack rules, which differ from /api/v1/ack on purpose:
//   - the ack is cumulative (the cursor moves to the message, Kafka-style) and credits Count;
//   - the lease is released only when asked (release_lease), whatever is left of the batch, so that a
//     gate can ack a prefix and keep the tail leased for in-order redelivery;
//   - a message at or behind the cursor is refused rather than treated as a harmless repeat: a cycle
//     is state ops + sink pushes + ack, and a repeated cycle must not apply the first two again;
//   - failed and dlq both dead-letter the message and move past it (the stream reported it).
func (c *cycleAck) decide(states map[store.ConsumerKey]*store.ConsumerState, msgs []store.ResolvedMessage) (store.AckEffects, error) {
	m := msgs[0]
	st := states[c.key]
	if !m.Found || st == nil {
		return store.AckEffects{}, fail("Message not found")
	}
	if c.ack.LeaseID != "" && !(st.LeaseLive && st.LeaseID != nil && st.LeaseID.String() == c.ack.LeaseID) {
		return store.AckEffects{}, fail("Invalid or expired lease")
	}
	if m.Seq <= st.Cursor && !m.Redelivery {
		return store.AckEffects{}, fail("%s", engine.RejectCommitted)
	}
	var eff store.AckEffects
	u := store.ConsumerUpdate{ConsumerKey: c.key, Cursor: st.Cursor}
	if m.Redelivery {
		eff.Redelivered = append(eff.Redelivered, store.Redelivered{ConsumerKey: c.key, Seq: m.Seq})
	} else {
		u.Cursor = m.Seq
	}
	c.result = CycleAckResult{Success: true, Count: c.ack.Count}
	switch c.ack.Status {
	case engine.AckCompleted, engine.AckSuccess:
		u.Consumed = int32(min(c.ack.Count, 1<<30))
		u.Release = c.release
	default:
		eff.DeadLetters = append(eff.DeadLetters, store.DeadLetter{ConsumerKey: c.key, Seq: m.Seq,
			Error: cmp.Or(c.ack.Error, "Streaming cycle reported failure")})
		u.Release = true
		c.result.DLQ = true
	}
	c.result.LeaseReleased = u.Release
	eff.Updates = append(eff.Updates, u)
	return eff, nil
}

// transientPg tells the statement failures that say nothing about the request itself (a deadlock,
// a serialisation conflict, a timeout, resource exhaustion): they are answered 500 so the client
// retries, rather than success:false which would make it wait for the lease to expire.
func transientPg(code string) bool {
	return len(code) >= 2 && (code[:2] == "40" || code[:2] == "53" || code[:2] == "57")
}

// validate applies the name limits of every identifier (jsonguard.NameProblem: the same 255 bytes as
// queues and partitions) to a stream query's names, which the route's body rules do not know as names.
func validate(q Query) error {
	for _, f := range [...]struct{ name, v string }{{"name", q.Name}, {"source_queue", q.SourceQueue}, {"sink_queue", q.SinkQueue}} {
		if p := jsonguard.NameProblem(f.v); p != "" {
			return engine.Invalid("bad body: %s %s", f.name, p)
		}
	}
	return nil
}
