package engine

import (
	"errors"
	"fmt"

	"github.com/queen-go/queen/internal/store"
)

// InvalidError is bad input: the request is refused as a whole and nothing was applied.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Invalid is an InvalidError worded by format and args.
func Invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// OpError is a failed operation; Op names it for the "<op> failed: <detail>" envelope.
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + " failed: " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// Errors callers branch on; they wrap the store's so the HTTP layer needs only this package.
var (
	ErrUnavailable = store.ErrUnavailable
	ErrReadOnly    = store.ErrReadOnly // with ErrUnavailable: only a standby is reachable (failover under way)
	ErrPool        = store.ErrPool
	ErrNotFound    = store.ErrNotFound
)

// OpFailedOr is OpFailed, except that the store's ErrNotFound becomes a NotFoundError with the
// contract's text for the thing addressed.
func OpFailedOr(op string, err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(format, args...)
	}
	return OpFailed(op, err)
}

// OpFailed wraps a store error of operation op as every engine answer does (the read models' too);
// the pool's exhaustion passes through unchanged.
func OpFailed(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrPool) {
		return err
	}
	return &OpError{Op: op, Err: err}
}

// Rejection texts of the acknowledgement contract.
const (
	RejectLease        = "invalid or expired lease"
	RejectCommitted    = "already committed: the cursor moved past this message before this ack"
	RejectUnresolvable = "unresolvable: transaction not in the ack window (hash purged or never pushed); if leased, the message redelivers"
	// RejectNotDelivered answers an ack for a message ahead of the group's cursor that was never delivered
	// to it: under a lease, beyond what that lease delivered; without one, beyond anything popped.
	RejectNotDelivered = "not delivered: this message was not delivered under this lease; only delivered messages can be acknowledged"
)

// NotFoundError names something addressed that does not exist (HTTP 404).
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

func notFound(format string, args ...any) error {
	return &NotFoundError{Msg: fmt.Sprintf(format, args...)}
}
