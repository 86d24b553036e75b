package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/queen-go/queen/internal/jsonscan"
)

// A request's memory grows with its number of items as well as with its bytes: each pushed item, each
// acknowledgment, each transaction operation costs several hundred bytes of decoded structure however
// small its text, so a body of a million tiny items would cost far more than the body budget counts.
// Push, ack batch and transaction bodies are therefore refused with 413 past Options.MaxBatchItems
// (QUEEN_MAX_BATCH_ITEMS) entries, counted on the raw text before anything is decoded.

// DefaultMaxBatchItems is the cap when Options gives none (QUEEN_MAX_BATCH_ITEMS's default).
const DefaultMaxBatchItems = 10_000

// maxBatchItems is the cap the server applies.
func (s *Server) maxBatchItems() int {
	if s.opt.MaxBatchItems > 0 {
		return s.opt.MaxBatchItems
	}
	return DefaultMaxBatchItems
}

// tooManyItems is the 413 of a body over the cap: what it holds, and the limit with its variable.
func tooManyItems(n int, what string, limit int) error {
	return &apiError{kind: kindTooLarge, msg: fmt.Sprintf(
		"batch of %d %s exceeds QUEEN_MAX_BATCH_ITEMS (%d): send at most %d per request", n, what, limit, limit)}
}

// checkBatchSize refuses, with tooManyItems, a body whose array field holds more than limit entries.
// With nested set, an element that is an object with a nested array counts as that array's entries (a
// transaction's push operation counts its items). The count is read from the text alone, without
// allocating; a body that is not JSON is left to the decoder to word.
func checkBatchSize(b []byte, field, nested, what string, limit int) error {
	if n := countBatch(b, field, nested); n > limit {
		return tooManyItems(n, what, limit)
	}
	return nil
}

// countBatch counts the entries of the body's array member field (every member encoding/json would
// take for it: keys match case-insensitively, escaped or not, and repeats add up).
func countBatch(b []byte, field, nested string) int {
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('{') {
		return 0
	}
	n := 0
	members(&s, func(k []byte) bool {
		if !keyIs(k, field) || s.I >= len(s.B) || s.B[s.I] != '[' {
			_, ok := s.Value()
			return ok
		}
		return elements(&s, func() bool {
			if nested != "" && s.I < len(s.B) && s.B[s.I] == '{' {
				m := 0
				s.I++
				ok := members(&s, func(k []byte) bool {
					if keyIs(k, nested) && s.I < len(s.B) && s.B[s.I] == '[' {
						return elements(&s, func() bool { m++; _, ok := s.Value(); return ok })
					}
					_, ok := s.Value()
					return ok
				})
				n += max(m, 1)
				return ok
			}
			n++
			_, ok := s.Value()
			return ok
		})
	})
	return n
}

// members reads an object's members after its opening brace; value reads the value of key k (with its
// quotes). It stops at the first thing that is not JSON.
func members(s *jsonscan.Scanner, value func(k []byte) bool) bool {
	s.WS()
	if s.Eat('}') {
		return true
	}
	for {
		k, ok := s.Key()
		if !ok || !value(k) {
			return false
		}
		if done, ok := s.Next('}'); done || !ok {
			return ok
		}
	}
}

// elements reads an array from its opening bracket, calling elem at each element.
func elements(s *jsonscan.Scanner, elem func() bool) bool {
	if !s.Eat('[') {
		return false
	}
	return s.Elements(elem)
}

// keyIs reports whether the key literal k names field as encoding/json matches names.
func keyIs(k []byte, field string) bool {
	if len(k) < 2 {
		return false
	}
	if strings.IndexByte(string(k), '\\') < 0 {
		return strings.EqualFold(string(k[1:len(k)-1]), field)
	}
	var name string
	return json.Unmarshal(k, &name) == nil && strings.EqualFold(name, field)
}
