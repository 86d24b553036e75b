// Package views answers the read routes of the admin API and the dashboard from the store: queue,
// namespace and task totals, the status summary, the analytics series, the broker samples, PostgreSQL's
// statistics, and the browsing of messages and traces at rest (with the two writes on those rows that
// no queue semantics touch: deleting one message, recording a trace event). It holds no state of its
// own: what it needs of the queue engine (the plaintext of encrypted payloads) comes through Payloads,
// and its errors are the engine's, so the HTTP layer maps both packages with one table.
package views

import (
	"context"
	"encoding/json"
	"math"

	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
)

// Payloads turns a stored payload into what the API shows; the engine implements it, since it holds
// the encryption key and knows which queues are encrypted.
type Payloads interface {
	DecryptPayload(stored []byte, encrypted bool) (json.RawMessage, error)
}

// Views answers the read models. It is safe for concurrent use.
type Views struct {
	st       *store.Store
	replica  *store.Replica // nil: none (DATABASE_READ_URL)
	spool    *spool.Spool   // nil: no disk spool (Buffers says so)
	payloads Payloads
}

// New builds the read models over st, reading from replica (may be nil) while it is fresh enough; sp
// may be nil.
func New(st *store.Store, replica *store.Replica, sp *spool.Spool, p Payloads) *Views {
	return &Views{st: st, replica: replica, spool: sp, payloads: p}
}

// read runs fn on the store the pure reads go to: the read replica while it serves, else the primary.
// A read the replica fails by its own fault (store.ReplicaFault: it went away, or cancelled the read
// for a recovery conflict) runs again on the primary at once, and the reads stay there until the next
// probe finds the replica serving, so a replica going away fails no request. fn may wrap the store's
// errors. The writes (deleting a message, recording a trace) and what must describe the primary itself
// (its statistics, whether it answers) use st directly.
func (v *Views) read(ctx context.Context, fn func(st *store.Store) error) error {
	if v.replica == nil {
		return fn(v.st)
	}
	st := v.replica.Reads()
	err := fn(st)
	if err != nil && st != v.st && store.ReplicaFault(err) {
		v.replica.Failed(ctx, err)
		err = fn(v.st)
	}
	return err
}

// ReadReplicaStatus is the read replica's state as /health shows it: Status is one of store's Replica*
// statuses, LagSeconds the lag its last probe measured (nil when it measured none).
type ReadReplicaStatus struct {
	Status     string   `json:"status"`
	LagSeconds *float64 `json:"lagSeconds"`
}

// ReadReplica reports the read replica's state; nil when none is configured.
func (v *Views) ReadReplica() *ReadReplicaStatus {
	if v.replica == nil {
		return nil
	}
	st := v.replica.State()
	out := &ReadReplicaStatus{Status: st.Status}
	if st.LagMeasured() {
		lag := math.Round(st.Lag.Seconds()*1000) / 1000
		out.LagSeconds = &lag
	}
	return out
}
