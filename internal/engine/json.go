package engine

import (
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/jsonscan"
)

// The API's shapes of instants and nullable values: RFC 3339 in UTC with milliseconds, absent is null.

// ISOMillis is the API's instant format.
func ISOMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// OptUUID is an optional id as text: nil stays null.
func OptUUID(u *uuid.UUID) *string {
	if u == nil {
		return nil
	}
	s := u.String()
	return &s
}

// OptTime is an optional instant in the API's format: nil stays null.
func OptTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ISOMillis(*t)
	return &s
}

// appendOptString writes a *string field of a hand-written encoder: null when nil.
func appendOptString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return jsonscan.AppendString(dst, *s)
}

// nonEmpty is s, or nil (NULL) when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
