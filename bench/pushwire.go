package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The producers' side of the push route without encoding/json: the harness shares the two cores with
// the broker and PostgreSQL it measures, so every microsecond it spends per message is one the broker
// does not get. pushwire_test.go checks both against encoding/json.

// pushWriter writes push bodies of one producer: one queue, one payload, transactionIds
// "<prefix>-<seq>".
type pushWriter struct {
	head    []byte // `{"queue":<queue>,"partition":`
	payload []byte // `,"payload":<payload>,"transactionId":"<prefix>-`
	parts   map[string][]byte
}

func newPushWriter(queue string, payload json.RawMessage, prefix string) (*pushWriter, error) {
	if !json.Valid(payload) {
		return nil, fmt.Errorf("payload %q is not JSON", payload)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, payload); err != nil {
		return nil, err
	}
	q, _ := json.Marshal(queue)
	p, _ := json.Marshal(prefix + "-")
	w := &pushWriter{parts: map[string][]byte{}}
	w.head = append(append([]byte(`{"queue":`), q...), `,"partition":`...)
	w.payload = append(append(append([]byte(`,"payload":`), compact.Bytes()...), `,"transactionId":`...), p[:len(p)-1]...)
	return w, nil
}

// body appends the body of n items to partition part, seqs first..first+n-1, to dst.
func (w *pushWriter) body(dst []byte, part string, first, n int) []byte {
	pj := w.parts[part]
	if pj == nil {
		pj, _ = json.Marshal(part)
		w.parts[part] = pj
	}
	dst = append(dst, `{"items":[`...)
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, w.head...)
		dst = append(dst, pj...)
		dst = append(dst, w.payload...)
		dst = strconv.AppendInt(dst, int64(first+i), 10)
		dst = append(dst, `"}`...)
	}
	return append(dst, `]}`...)
}

// scanPushStatuses reads the status (and the error text of an item not queued) of each result of a
// push answer into res. ok=false: the answer is not one it reads with certainty (the caller decodes
// it with encoding/json).
func scanPushStatuses(b []byte, res []pushResult) ([]pushResult, bool) {
	s := jsonScan{b: b}
	s.ws()
	if !s.eat('[') {
		return nil, false
	}
	s.ws()
	if s.eat(']') {
		s.ws()
		return res, s.i == len(s.b)
	}
	for {
		s.ws()
		if !s.eat('{') {
			return nil, false
		}
		var r pushResult
		var status []byte
		s.ws()
		if !s.eat('}') {
			for {
				s.ws()
				key, ok := s.str()
				if !ok {
					return nil, false
				}
				s.ws()
				if !s.eat(':') {
					return nil, false
				}
				s.ws()
				v, ok := s.value(0)
				if !ok {
					return nil, false
				}
				switch string(key) {
				case `"status"`:
					status = v
				case `"error"`:
					if string(v) != "null" && (v[0] != '"' || json.Unmarshal(v, &r.Error) != nil) {
						return nil, false
					}
				}
				s.ws()
				if s.eat('}') {
					break
				}
				if !s.eat(',') {
					return nil, false
				}
			}
		}
		switch {
		case string(status) == `"queued"`:
			r.Status = "queued"
		case status == nil || status[0] != '"':
			return nil, false // no status, or one encoding/json reads another way: leave it to it
		default:
			if json.Unmarshal(status, &r.Status) != nil {
				return nil, false
			}
		}
		res = append(res, r)
		s.ws()
		if s.eat(']') {
			s.ws()
			return res, s.i == len(s.b)
		}
		if !s.eat(',') {
			return nil, false
		}
	}
}

// jsonScan reads JSON text with RFC 8259's grammar; it keeps nothing but its position.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jsonScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string literal and returns it with its quotes.
func (s *jsonScan) str() ([]byte, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start:s.i], true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false
					}
				}
				s.i += 6
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

func (s *jsonScan) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// value reads any value and returns its text.
func (s *jsonScan) value(depth int) ([]byte, bool) {
	if s.i >= len(s.b) || depth > 64 {
		return nil, false
	}
	start := s.i
	ok := true
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok = s.str()
	case c == '{' || c == '[':
		closing := byte(']')
		if c == '{' {
			closing = '}'
		}
		s.i++
		s.ws()
		if !s.eat(closing) {
			for ok {
				if c == '{' {
					if _, ok = s.str(); !ok {
						break
					}
					s.ws()
					if ok = s.eat(':'); !ok {
						break
					}
					s.ws()
				}
				if _, ok = s.value(depth + 1); !ok {
					break
				}
				s.ws()
				if s.eat(closing) {
					break
				}
				ok = s.eat(',')
				s.ws()
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		s.eat('-')
		intStart := s.i
		n := s.digits()
		ok = n > 0 && (n == 1 || s.b[intStart] != '0')
		if ok && s.eat('.') {
			ok = s.digits() > 0
		}
		if ok && (s.eat('e') || s.eat('E')) {
			if !s.eat('+') {
				s.eat('-')
			}
			ok = s.digits() > 0
		}
	case c == 't':
		ok = s.word("true")
	case c == 'f':
		ok = s.word("false")
	case c == 'n':
		ok = s.word("null")
	default:
		ok = false
	}
	if !ok {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *jsonScan) word(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}
