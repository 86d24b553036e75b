package engine

import (
	"errors"
	"fmt"

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

// validatePushItems applies the input limits to pushes whatever their way in (HTTP, transaction, spool
// replay), so that an item is refused before it is spooled exactly when it would be refused directly:
// a spooled item is one PostgreSQL will take.
func validatePushItems(items []PushItem) error {
	for i := range items {
		if err := validatePushItem(&items[i], "items", i); err != nil {
			return err
		}
	}
	return nil
}

// validatePushItem checks one push; array and i name it in the error ("items[3]", "operations[0]"; i < 0:
// array alone names it). The name is only put together for an error: this runs once per pushed message.
func validatePushItem(it *PushItem, array string, i int) error {
	at := func() string {
		if i < 0 {
			return array
		}
		return fmt.Sprintf("%s[%d]", array, i)
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
