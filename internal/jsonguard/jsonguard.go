// Package jsonguard checks JSON text against the limits the broker accepts, so that input PostgreSQL
// would refuse (or blow up) is turned away at the edge with the offending field named, instead of
// failing deep in a statement. The rules (docs/decisions.md, "Input limits"):
//
//   - strings (keys and values) are valid UTF-8, hold no NUL character (raw or \u0000) and no lone
//     UTF-16 surrogate escape: jsonb and text columns refuse all three;
//   - a number's source text is at most MaxNumberText characters and its plain decimal form (how jsonb
//     stores and returns it: 1e3 comes back as 1000) at most MaxNumberPlain characters, so a few bytes
//     of input never become megabytes of output;
//   - nesting is at most jsonscan.MaxDepth arrays/objects deep;
//   - identifier fields (Rules.Names, e.g. queue, partition, transactionId) are strings of at most
//     MaxName bytes, except inside opaque fields (Rules.Opaque, e.g. payload) that hold user data.
package jsonguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queen-go/queen/internal/jsonscan"
)

// Limits of the rules above (the depth is the scanner's own, jsonscan.MaxDepth).
const (
	MaxNumberText  = 64
	MaxNumberPlain = 64
	MaxName        = 255
)

// Error is a rule violation at a field. Path is the field in JSONPath-like form (items[0].payload.a);
// empty for the document itself.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// NameProblem says what is wrong with an identifier or other short text (a queue, partition,
// transactionId, path or query value), "" when nothing: the same limits as Rules.Names.
func NameProblem(v string) string {
	switch {
	case !utf8.ValidString(v):
		return "is not valid UTF-8"
	case strings.IndexByte(v, 0) >= 0:
		return "contains a NUL character"
	case len(v) > MaxName:
		return fmt.Sprintf("longer than %d bytes", MaxName)
	}
	return ""
}

// SyntaxError means the text is not JSON at all; callers usually let their decoder word the message.
type SyntaxError struct{ Offset int }

func (e *SyntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d", e.Offset) }

// Rules say which object keys are identifiers and which hold opaque user data.
type Rules struct {
	Names  map[string]bool // string values under these keys are limited to MaxName bytes
	Opaque map[string]bool // no name rule below these keys
}

// API is the rule set of the broker's request bodies.
var API = Rules{
	Names: set("queue", "partition", "transactionId", "partitionId", "leaseId", "consumerGroup", "namespace",
		"task", "traceId", "traceName", "traceNames", "status", "type", "eventType", "group", "subscriptionMode",
		"subscriptionFrom", "timestamp", "workerId"),
	Opaque: set("payload", "data", "error"),
}

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// Check validates a whole document under rules. It returns nil, an *Error or a *SyntaxError.
func Check(b []byte, rules Rules) error {
	return CheckAt(b, rules, "")
}

// CheckAt is Check for a value found at path (used in error texts), e.g. one item's payload.
func CheckAt(b []byte, rules Rules, path string) error {
	s := scanner{Scanner: jsonscan.Scanner{B: b}, rules: rules, root: path}
	s.WS()
	if err := s.value(0, false); err != nil {
		return err
	}
	if !s.End() {
		return &SyntaxError{Offset: s.I}
	}
	return nil
}

// Kind is how the rules treat a value by the key it sits under.
type Kind uint8

const (
	Plain  Kind = iota // the rules apply as usual
	Name               // an identifier: a string value is limited to MaxName bytes
	Opaque             // user data: no name rule anywhere below
)

// KindOf says how the rules treat the value of a member with the raw key text key.
func (r Rules) KindOf(key []byte) Kind {
	switch {
	case r.Opaque[string(key)]:
		return Opaque
	case r.Names[string(key)]:
		return Name
	}
	return Plain
}

// Accept is Check for one value inside a larger text that the caller reads itself (the push route's
// body reader): the value starting at b[i] (no whitespace before it), nested in depth open arrays
// and objects and of the given kind, is scanned and checked exactly as Check does at that place.
// It returns where the value ends; ok=false for a syntax error or a rule violation alike, without
// wording either, so a caller that must answer with the error runs Check on the whole text.
func Accept(b []byte, i, depth int, rules Rules, kind Kind) (end int, ok bool) {
	if i < len(b) && b[i] == '"' {
		// The common value, a string of printable ASCII without escapes, meets every rule but the
		// name length: it is checked here, without setting the scanner up. Any other string is left
		// to the scanner, from its start.
		for j := i + 1; j < len(b); j++ {
			c := b[j]
			if c == '"' {
				if kind == Name && j-i-1 > MaxName {
					break
				}
				return j + 1, true
			}
			if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
				break
			}
		}
	}
	s := scanner{Scanner: jsonscan.Scanner{B: b, I: i}, rules: rules, quiet: true}
	if kind == Opaque {
		s.rules = Rules{}
	}
	err := s.value(depth, kind == Name)
	return s.I, err == nil
}

type seg struct {
	key []byte // raw key text (without quotes); nil for an array index
	idx int
}

// scanner applies the rules to the text its embedded jsonscan.Scanner reads: the grammar is the
// jsonscan's, the rules are checked on the pieces it returns.
type scanner struct {
	jsonscan.Scanner
	rules Rules
	root  string
	path  []seg
	quiet bool // only accept or reject (Accept): no path is kept and no error worded
}

// errRejected is every error of a quiet scanner.
var errRejected = errors.New("rejected")

func (s *scanner) fail(reason string) error {
	if s.quiet {
		return errRejected
	}
	var sb strings.Builder
	sb.WriteString(s.root)
	for _, p := range s.path {
		if p.key == nil {
			fmt.Fprintf(&sb, "[%d]", p.idx)
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(printable(p.key))
	}
	return &Error{Path: sb.String(), Reason: reason}
}

// printable makes a raw key safe to echo: decoded when possible, cut to a readable length.
func printable(raw []byte) string {
	var k string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k) != nil || !utf8.ValidString(k) {
		k = strconv.QuoteToASCII(string(raw))
	}
	k = strings.ReplaceAll(k, "\x00", `\u0000`)
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	return k
}

func (s *scanner) syntax() error {
	if s.quiet {
		return errRejected
	}
	return &SyntaxError{Offset: s.I}
}

// push and pop keep the path of the value being scanned, for the error texts.
func (s *scanner) push(p seg) {
	if !s.quiet {
		s.path = append(s.path, p)
	}
}

func (s *scanner) pop() {
	if !s.quiet {
		s.path = s.path[:len(s.path)-1]
	}
}

// value scans one value; name tells that it sits under an identifier key.
func (s *scanner) value(depth int, name bool) error {
	if s.I >= len(s.B) {
		return s.syntax()
	}
	switch c := s.B[s.I]; {
	case c == '{' || c == '[':
		if !jsonscan.Opens(depth) {
			return s.fail(fmt.Sprintf("nested deeper than %d levels", jsonscan.MaxDepth))
		}
		if c == '{' {
			return s.object(depth + 1)
		}
		return s.array(depth+1, name)
	case c == '"':
		lit, err := s.str()
		if err != nil {
			return err
		}
		if name && len(lit)-2 > MaxName {
			var v string
			if json.Unmarshal(lit, &v) == nil && len(v) > MaxName {
				return s.fail(fmt.Sprintf("longer than %d bytes", MaxName))
			}
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	// A literal, or not JSON.
	if _, ok := s.Value(); !ok {
		return s.syntax()
	}
	return nil
}

func (s *scanner) object(depth int) error {
	s.I++ // {
	s.WS()
	if s.Eat('}') {
		return nil
	}
	for {
		s.WS()
		if s.I >= len(s.B) || s.B[s.I] != '"' {
			return s.syntax()
		}
		lit, err := s.str()
		if err != nil {
			return err
		}
		key := lit[1 : len(lit)-1]
		s.WS()
		if !s.Eat(':') {
			return s.syntax()
		}
		s.WS()
		s.push(seg{key: key})
		if kind := s.rules.KindOf(key); kind == Opaque {
			saved := s.rules
			s.rules = Rules{}
			err = s.value(depth, false)
			s.rules = saved
		} else {
			err = s.value(depth, kind == Name)
		}
		if err != nil {
			return err
		}
		s.pop()
		if done, err := s.after('}'); done || err != nil {
			return err
		}
	}
}

func (s *scanner) array(depth int, name bool) error {
	s.I++ // [
	s.WS()
	if s.Eat(']') {
		return nil
	}
	for n := 0; ; n++ {
		s.WS()
		s.push(seg{idx: n})
		if err := s.value(depth, name); err != nil {
			return err
		}
		s.pop()
		if done, err := s.after(']'); done || err != nil {
			return err
		}
	}
}

// after reads what follows an element of an array or object: a comma (more to come) or the closing
// bracket (done).
func (s *scanner) after(closing byte) (done bool, err error) {
	done, ok := s.Next(closing)
	if !ok {
		return false, s.syntax()
	}
	return done, nil
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// str scans a string literal starting at its opening quote and returns it with its quotes. The
// grammar is jsonscan's; the rules are checked on what it read, in text order, so the first problem
// in the text is the one reported, a rule's or the grammar's.
func (s *scanner) str() ([]byte, error) {
	start := s.I
	lit, plain, ok := s.Quoted()
	if ok && plain {
		return lit, nil
	}
	end := s.I // the literal's end, or where it stops being one
	if reason := stringProblem(s.B[start+1 : end]); reason != "" {
		return nil, s.fail(reason)
	}
	if !ok {
		if end < len(s.B) && s.B[end] == 0 {
			return nil, s.fail("contains a NUL character")
		}
		return nil, s.syntax()
	}
	return lit, nil
}

// stringProblem says what rule the text of a string literal breaks, "" when none: b is the text
// between its quotes, or the part of it before where the literal stopped being one; its escapes are
// whole and valid either way.
func stringProblem(b []byte) string {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && b[i+1] == 'u':
			r := hex4(b[i+2:])
			i += 6
			switch {
			case r == 0:
				return `contains a NUL character (\u0000)`
			case r >= 0xDC00 && r <= 0xDFFF:
				return "contains a lone UTF-16 surrogate escape"
			case r >= 0xD800 && r <= 0xDBFF:
				// Anything but a low surrogate's escape next (the text breaking off included) leaves
				// the high one alone.
				if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
					return "contains a lone UTF-16 surrogate escape"
				}
				if lo := hex4(b[i+2:]); lo < 0xDC00 || lo > 0xDFFF {
					return "contains a lone UTF-16 surrogate escape"
				}
				i += 6
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return "is not valid UTF-8"
			}
			i += n
		}
	}
	return ""
}

// number scans a number literal and applies the size rules.
func (s *scanner) number() error {
	text, ok := s.Number()
	if !ok {
		return s.syntax()
	}
	if len(text) > MaxNumberText {
		return s.fail(fmt.Sprintf("number longer than %d characters", MaxNumberText))
	}
	// The grammar is met: digits, then maybe a fraction, then maybe an exponent.
	text = bytes.TrimPrefix(text, []byte{'-'})
	var intPart, frac, expText []byte
	intPart = text
	if i := bytes.IndexAny(text, "eE"); i >= 0 {
		intPart, expText = text[:i], text[i+1:]
	}
	if i := bytes.IndexByte(intPart, '.'); i >= 0 {
		intPart, frac = intPart[:i], intPart[i+1:]
	}
	if plainLen(intPart, frac, expText) > MaxNumberPlain {
		return s.fail(fmt.Sprintf("number too large: its plain decimal form exceeds %d characters", MaxNumberPlain))
	}
	return nil
}

// plainLen is the length of the number written without exponent, as PostgreSQL's numeric prints it:
// integer digits (at least one), then a point and the fraction digits its scale keeps.
func plainLen(intPart, frac, expText []byte) int {
	exp := 0
	if len(expText) > 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(string(expText), "+"))
		if err != nil || e > 10_000 || e < -10_000 {
			return MaxNumberPlain + 1
		}
		exp = e
	}
	lead := 0 // leading zeros of the digits intPart+frac
	for lead < len(intPart)+len(frac) {
		c := byte(0)
		if lead < len(intPart) {
			c = intPart[lead]
		} else {
			c = frac[lead-len(intPart)]
		}
		if c != '0' {
			break
		}
		lead++
	}
	point := len(intPart) + exp // decimal point position within all
	intDigits := max(point-lead, 1)
	scale := max(len(frac)-exp, 0)
	n := 1 + intDigits // sign
	if scale > 0 {
		n += 1 + scale
	}
	return n
}

// Payload is a message's payload that met the rules: NewPayload and AcceptPayload are the only ways
// to a non-empty one, so whoever holds one (the engine) has nothing left to check and no way to skip
// the check. The zero Payload is no payload (JSON null).
type Payload struct{ b []byte }

// NewPayload checks b, one JSON value, under the rules of user data (CheckAt with no name rules, at
// depth 0). It returns nil, an *Error or a *SyntaxError, as Check does; path names b in them. An empty
// b is no payload.
func NewPayload(b []byte, path string) (Payload, error) {
	if len(b) == 0 {
		return Payload{}, nil
	}
	if err := CheckAt(b, Rules{}, path); err != nil {
		return Payload{}, err
	}
	return Payload{b: b}, nil
}

// AcceptPayload is Accept for a payload inside a larger text: the value at b[i], nested in depth
// arrays and objects, checked as user data in the same pass that finds where it ends.
func AcceptPayload(b []byte, i, depth int) (_ Payload, end int, ok bool) {
	end, ok = Accept(b, i, depth, Rules{}, Opaque)
	if !ok {
		return Payload{}, end, false
	}
	return Payload{b: b[i:end:end]}, end, true
}

// JSON is the payload's text; nil for no payload.
func (p Payload) JSON() json.RawMessage { return p.b }

// MarshalJSON writes the payload as a json.RawMessage holding it is written.
func (p Payload) MarshalJSON() ([]byte, error) { return p.JSON().MarshalJSON() }
