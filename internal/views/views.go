// Package views answers the read routes of the admin API and the dashboard from the store: queue,
// namespace and task totals, the status summary, the analytics series, the broker samples, PostgreSQL's
// statistics, and the browsing of messages and traces at rest (with the two writes on those rows that
// no queue semantics touch: deleting one message, recording a trace event). It holds no state of its
// own: what it needs of the queue engine (the plaintext of encrypted payloads) comes through Payloads,
// and its errors are the engine's, so the HTTP layer maps both packages with one table.
package views

import (
	"encoding/json"

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
	spool    *spool.Spool // nil: no disk spool (Buffers says so)
	payloads Payloads
}

// New builds the read models over st; sp may be nil.
func New(st *store.Store, sp *spool.Spool, p Payloads) *Views {
	return &Views{st: st, spool: sp, payloads: p}
}
