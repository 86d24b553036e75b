// Package jsonscan reads JSON text piece by piece with the grammar of RFC 8259 (what encoding/json
// accepts), keeping nothing but its position. It is the one JSON scanner of the broker: the input
// limits (jsonguard) apply their rules on top of it, and the hand-written readers and writers of hot
// paths (the push and ack bodies, the answers of push, pop and ack, the load generator's readers) pick
// out or copy what they need with it and hand anything they are not sure of to encoding/json.
package jsonscan

import "strings"

// MaxDepth is how many arrays and objects may be open around a value: the input limit of every body
// (docs/decisions.md, "Input limits"), and how deep Value and AppendCompact follow a text before they
// give up. A container opened inside MaxDepth others is refused, empty or not.
const MaxDepth = 100

// Scanner reads B from I on. A method that fails leaves I somewhere inside the text: callers give up
// on the whole text then.
type Scanner struct {
	B []byte
	I int
}

// WS skips whitespace.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Eat consumes c if it is next.
func (s *Scanner) Eat(c byte) bool {
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.WS()
	return s.I == len(s.B)
}

// Str reads a string literal and returns it with its quotes; escaped: it holds a backslash.
func (s *Scanner) Str() (lit []byte, escaped, ok bool) {
	lit, escaped, _, ok = s.str()
	return lit, escaped, ok
}

// Quoted reads a string literal as Str does; plain: it holds neither a backslash nor a byte outside
// ASCII, so no rule about escapes or UTF-8 can concern it. On failure I is where the literal stops
// being one (at a control character, a bad escape, or the end of the text).
func (s *Scanner) Quoted() (lit []byte, plain, ok bool) {
	lit, escaped, wide, ok := s.str()
	return lit, !escaped && !wide, ok
}

func (s *Scanner) str() (lit []byte, escaped, wide, ok bool) {
	start := s.I
	if !s.Eat('"') {
		return nil, false, false, false
	}
	for s.I < len(s.B) {
		switch c := s.B[s.I]; {
		case c == '"':
			s.I++
			return s.B[start:s.I], escaped, wide, true
		case c == '\\':
			escaped = true
			if s.I+1 >= len(s.B) {
				return nil, false, false, false
			}
			switch s.B[s.I+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.I += 2
			case 'u':
				if s.I+6 > len(s.B) {
					return nil, false, false, false
				}
				for _, h := range s.B[s.I+2 : s.I+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false, false, false
					}
				}
				s.I += 6
			default:
				return nil, false, false, false
			}
		case c < 0x20:
			return nil, false, false, false
		default:
			wide = wide || c >= 0x80
			s.I++ // any other byte, as encoding/json's scanner (invalid UTF-8 included)
		}
	}
	return nil, false, false, false
}

func (s *Scanner) digits() int {
	n := 0
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' {
		s.I++
		n++
	}
	return n
}

// Number reads a number literal and returns its text.
func (s *Scanner) Number() ([]byte, bool) {
	start := s.I
	if !s.number() {
		return nil, false
	}
	return s.B[start:s.I], true
}

func (s *Scanner) number() bool {
	s.Eat('-')
	start := s.I
	if n := s.digits(); n == 0 || n > 1 && s.B[start] == '0' {
		return false
	}
	if s.Eat('.') && s.digits() == 0 {
		return false
	}
	if s.Eat('e') || s.Eat('E') {
		if !s.Eat('+') {
			s.Eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *Scanner) word(w string) bool {
	if len(s.B)-s.I < len(w) || string(s.B[s.I:s.I+len(w)]) != w {
		return false
	}
	s.I += len(w)
	return true
}

// Value reads any value that starts at I and returns its text.
func (s *Scanner) Value() ([]byte, bool) { return s.value(0) }

// Opens reports whether a container may open at depth (arrays and objects already open around it).
func Opens(depth int) bool { return depth < MaxDepth }

func (s *Scanner) value(depth int) ([]byte, bool) {
	if s.I >= len(s.B) || (s.B[s.I] == '{' || s.B[s.I] == '[') && !Opens(depth) {
		return nil, false
	}
	start := s.I
	ok := false
	switch c := s.B[s.I]; {
	case c == '"':
		_, _, ok = s.Str()
	case c == '{':
		ok = s.container(depth, '}', true)
	case c == '[':
		ok = s.container(depth, ']', false)
	case c == '-' || c >= '0' && c <= '9':
		ok = s.number()
	case c == 't':
		ok = s.word("true")
	case c == 'f':
		ok = s.word("false")
	case c == 'n':
		ok = s.word("null")
	}
	if !ok {
		return nil, false
	}
	return s.B[start:s.I], true
}

func (s *Scanner) container(depth int, closing byte, keys bool) bool {
	s.I++
	s.WS()
	if s.Eat(closing) {
		return true
	}
	for {
		if keys {
			if _, ok := s.Key(); !ok {
				return false
			}
		}
		if _, ok := s.value(depth + 1); !ok {
			return false
		}
		if done, ok := s.Next(closing); done || !ok {
			return ok
		}
	}
}

// Key reads an object key, the colon after it and the whitespace around; the key keeps its quotes.
func (s *Scanner) Key() ([]byte, bool) {
	k, _, ok := s.Str()
	if !ok {
		return nil, false
	}
	s.WS()
	if !s.Eat(':') {
		return nil, false
	}
	s.WS()
	return k, true
}

// Next reads what follows a member or element: a comma and whitespace (more to come) or, after
// whitespace, the closing bracket (done).
func (s *Scanner) Next(closing byte) (done, ok bool) {
	s.WS()
	switch {
	case s.Eat(','):
		s.WS()
		return false, true
	case s.Eat(closing):
		return true, true
	}
	return false, false
}

// The hand-written readers walk objects and arrays with what follows, and compare keys byte for byte.

// PlainKey reads an object key and the colon after it, and returns the key without its quotes, only
// when it can be compared byte for byte: encoding/json matches field names case-insensitively (with
// Unicode folding) and unescapes keys, so a key with an escape or a non-ASCII byte fails (as does any
// control character, which the grammar refuses), and the reader gives up on the text.
func (s *Scanner) PlainKey() ([]byte, bool) {
	if !s.Eat('"') {
		return nil, false
	}
	start := s.I
	for ; s.I < len(s.B); s.I++ {
		if c := s.B[s.I]; c == '"' {
			break
		} else if c < 0x20 || c >= 0x80 || c == '\\' {
			return nil, false
		}
	}
	if s.I == len(s.B) {
		return nil, false
	}
	k := s.B[start:s.I]
	s.I++
	s.WS()
	if !s.Eat(':') {
		return nil, false
	}
	s.WS()
	return k, true
}

// Known finds a key read by PlainKey among names: its index, or -1. ok=false when it differs from one
// of them only in case (encoding/json would take it for that field: the reader gives up).
func Known(k []byte, names ...string) (idx int, ok bool) {
	for i, n := range names {
		if string(k) == n {
			return i, true
		}
	}
	for _, n := range names {
		if strings.EqualFold(string(k), n) {
			return -1, false
		}
	}
	return -1, true
}

// Members reads an object's members after its opening brace; value reads the value of the member whose
// key (see PlainKey) it is given. false from either gives up.
func (s *Scanner) Members(value func(k []byte) bool) bool {
	return s.list('}', func() bool {
		k, ok := s.PlainKey()
		return ok && value(k)
	})
}

// Elements reads an array's elements after its opening bracket, one per call of elem.
func (s *Scanner) Elements(elem func() bool) bool { return s.list(']', elem) }

// list reads comma-separated items up to and including end, one per call of item, after the opening
// bracket or brace.
func (s *Scanner) list(end byte, item func() bool) bool {
	s.WS()
	if s.Eat(end) {
		return true
	}
	for {
		if !item() {
			return false
		}
		done, ok := s.Next(end)
		if !ok {
			return false
		}
		if done {
			return true
		}
	}
}
