// Package jsonguard checks JSON text against the limits the broker accepts, so that input PostgreSQL
// would refuse (or blow up) is turned away at the edge with the offending field named, instead of
// failing deep in a statement. The rules (docs/decisions.md, "Input limits"):
//
//   - strings (keys and values) are valid UTF-8, hold no NUL character (raw or \u0000) and no lone
//     UTF-16 surrogate escape: jsonb and text columns refuse all three;
//   - a number's source text is at most MaxNumberText characters and its plain decimal form (how jsonb
//     stores and returns it: 1e3 comes back as 1000) at most MaxNumberPlain characters, so a few bytes
//     of input never become megabytes of output;
//   - nesting is at most MaxDepth arrays/objects deep;
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
)

// Limits of the rules above.
const (
	MaxDepth       = 100
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
	s := scanner{b: b, rules: rules, root: path}
	s.ws()
	if err := s.value(0, false); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return &SyntaxError{Offset: s.i}
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
	s := scanner{b: b, i: i, rules: rules, quiet: true}
	if kind == Opaque {
		s.rules = Rules{}
	}
	err := s.value(depth, kind == Name)
	return s.i, err == nil
}

type seg struct {
	key []byte // raw key text (without quotes); nil for an array index
	idx int
}

type scanner struct {
	b     []byte
	i     int
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

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) syntax() error {
	if s.quiet {
		return errRejected
	}
	return &SyntaxError{Offset: s.i}
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
	if s.i >= len(s.b) {
		return s.syntax()
	}
	switch c := s.b[s.i]; {
	case c == '{':
		if depth >= MaxDepth {
			return s.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
		}
		return s.object(depth + 1)
	case c == '[':
		if depth >= MaxDepth {
			return s.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
		}
		return s.array(depth+1, name)
	case c == '"':
		start := s.i
		if err := s.str(); err != nil {
			return err
		}
		if name && s.i-start-2 > MaxName {
			var v string
			if json.Unmarshal(s.b[start:s.i], &v) == nil && len(v) > MaxName {
				return s.fail(fmt.Sprintf("longer than %d bytes", MaxName))
			}
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.syntax()
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return s.syntax()
	}
	s.i += len(word)
	return nil
}

func (s *scanner) object(depth int) error {
	s.i++ // {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.syntax()
		}
		start := s.i
		if err := s.str(); err != nil {
			return err
		}
		key := s.b[start+1 : s.i-1]
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.syntax()
		}
		s.i++
		s.ws()
		s.push(seg{key: key})
		var err error
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
	s.i++ // [
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.ws()
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
	s.ws()
	if s.i >= len(s.b) {
		return false, s.syntax()
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return false, s.syntax()
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// str scans a string literal starting at its opening quote.
func (s *scanner) str() error {
	s.i++ // "
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return s.syntax()
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				r, ok := hex4(s.b[s.i+2:])
				if !ok {
					return s.syntax()
				}
				s.i += 6
				switch {
				case r == 0:
					return s.fail(`contains a NUL character (\u0000)`)
				case r >= 0xDC00 && r <= 0xDFFF:
					return s.fail("contains a lone UTF-16 surrogate escape")
				case r >= 0xD800 && r <= 0xDBFF:
					lo, ok := rune(0), false
					if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
						lo, ok = hex4(s.b[s.i+2:])
					}
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return s.fail("contains a lone UTF-16 surrogate escape")
					}
					s.i += 6
				}
			default:
				return s.syntax()
			}
		case c < 0x20:
			if c == 0 {
				return s.fail("contains a NUL character")
			}
			return s.syntax()
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return s.fail("is not valid UTF-8")
			}
			s.i += n
		}
	}
	return s.syntax()
}

// number scans a number literal and applies the size rules.
func (s *scanner) number() error {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	intStart := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	nInt := digits()
	if nInt == 0 || nInt > 1 && s.b[intStart] == '0' {
		return s.syntax()
	}
	intPart := s.b[intStart:s.i]
	var frac []byte
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		fs := s.i
		if digits() == 0 {
			return s.syntax()
		}
		frac = s.b[fs:s.i]
	}
	var expText []byte
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		es := s.i
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.syntax()
		}
		expText = s.b[es:s.i]
	}
	if s.i-start > MaxNumberText {
		return s.fail(fmt.Sprintf("number longer than %d characters", MaxNumberText))
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
