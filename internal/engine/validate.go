package engine

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/store"
)

// InputRejected reports whether PostgreSQL refused a statement because of a value in it (SQLSTATE
// class 22, data exception, or 54, a program limit such as an index row too large): bad input that
// the edge rules missed, not a broker failure.
func InputRejected(err error) bool {
	var pe *store.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	return pe.Code[:2] == "22" || pe.Code[:2] == "54"
}

// validatePushItems applies NormalizePushItem to the items of a push.
func validatePushItems(items []PushItem) error {
	for i := range items {
		if err := NormalizePushItem(&items[i], pushArray, i); err != nil {
			return err
		}
	}
	return nil
}

// pushArray names a push's items, whose missing queue keeps the original's bare message.
const pushArray = "items"

// NormalizePushItem applies the rules of a pushed item whatever its way in (a push, a transaction's
// operation, a stream cycle's push_items, a spool replay), so that no way in stores what another
// refuses, and an item is refused before it is spooled exactly when it would be refused directly: the
// queue is required; an item naming no partition goes to Default, one without a transactionId gets a
// fresh one (minted: it needs no duplicate probe); every name is text PostgreSQL takes, at most 255
// bytes (jsonguard.NameProblem). array and i name the item in errors
// ("operations[0]"; i < 0: array alone); the name is only put together for an error, as this runs once
// per pushed message.
func NormalizePushItem(it *PushItem, array string, i int) error {
	at := func() string {
		if i < 0 {
			return array
		}
		return fmt.Sprintf("%s[%d]", array, i)
	}
	if it.Queue == "" {
		if array == pushArray {
			return Invalid("queue is required")
		}
		return Invalid("%s: queue is required", at())
	}
	if it.Partition == "" {
		it.Partition = DefaultPartition
	}
	if it.TransactionID == "" {
		it.TransactionID = uuid.Must(uuid.NewV7()).String()
		it.minted = true
	}
	for _, f := range [...]struct{ name, v string }{{"queue", it.Queue}, {"partition", it.Partition}, {"transactionId", it.TransactionID}} {
		if p := jsonguard.NameProblem(f.v); p != "" {
			return Invalid("bad body: %s.%s %s", at(), f.name, p)
		}
	}
	return nil // the payload was checked when it was made (jsonguard.Payload)
}

// payloadOf makes a payload that comes from outside a request (a spool record) through the one
// validating constructor; at names it in the error ("spooled item").
func payloadOf(b []byte, at string) (jsonguard.Payload, error) {
	p, err := jsonguard.NewPayload(b, at+".payload")
	var ge *jsonguard.Error
	switch {
	case errors.As(err, &ge):
		return p, Invalid("bad body: %s", ge.Error())
	case err != nil:
		return p, Invalid("bad body: %s.payload is not valid JSON", at)
	}
	return p, nil
}
