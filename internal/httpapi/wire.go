package httpapi

import (
	"time"

	"github.com/google/uuid"
)

const msLayout = "2006-01-02T15:04:05.000Z"

func ts(t time.Time) string { return t.UTC().Format(msLayout) }

func tsOrNil(valid bool, t time.Time) any {
	if !valid {
		return nil
	}
	return ts(t)
}

func textOrNil(valid bool, s string) any {
	if !valid {
		return nil
	}
	return s
}

func uuidOrNil(valid bool, b [16]byte) any {
	if !valid {
		return nil
	}
	return uuid.UUID(b).String()
}
