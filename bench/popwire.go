package main

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/queen-go/queen/internal/jsonscan"
)

// The consumers' side of the wire, read and written by hand like the producers' (pushwire.go): in the
// fan-out scenarios the harness shares the host's two cores with the broker and PostgreSQL, and
// encoding/json's reflection over pop answers and ack bodies was a quarter of its CPU, taken from the
// system it measures. Whatever these readers are not sure of goes to encoding/json.

// scanPopMessages reads the messages of a pop answer into msgs (reused). ok=false: the answer is not one
// it reads with certainty.
func scanPopMessages(b []byte, msgs []popMessage) ([]popMessage, bool) {
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('{') {
		return nil, false
	}
	s.WS()
	seen := false
	for done := s.Eat('}'); !done; {
		key, ok := s.Key()
		if !ok {
			return nil, false
		}
		if string(key) == `"messages"` {
			if seen {
				return nil, false // encoding/json keeps the last one: rare enough to leave to it
			}
			seen = true
			if msgs, ok = scanMessageArray(&s, msgs); !ok {
				return nil, false
			}
		} else if _, ok := s.Value(); !ok {
			return nil, false
		}
		if done, ok = s.Next('}'); !ok {
			return nil, false
		}
	}
	return msgs, s.End()
}

func scanMessageArray(s *jsonscan.Scanner, msgs []popMessage) ([]popMessage, bool) {
	if !s.Eat('[') {
		return nil, false
	}
	s.WS()
	if s.Eat(']') {
		return msgs, true
	}
	for {
		if !s.Eat('{') {
			return nil, false
		}
		s.WS()
		var m popMessage
		for done := s.Eat('}'); !done; {
			key, ok := s.Key()
			if !ok {
				return nil, false
			}
			v, ok := s.Value()
			if !ok {
				return nil, false
			}
			var dst *string
			switch string(key) {
			case `"id"`:
				dst = &m.ID
			case `"transactionId"`:
				dst = &m.TransactionID
			case `"partitionId"`:
				dst = &m.PartitionID
			case `"leaseId"`:
				dst = &m.LeaseID
			case `"consumerGroup"`:
				dst = &m.ConsumerGroup
			case `"partition"`:
				dst = &m.Partition
			case `"data"`:
				m.Data = json.RawMessage(v)
			}
			if dst != nil && !plainString(v, dst) {
				return nil, false
			}
			if done, ok = s.Next('}'); !ok {
				return nil, false
			}
		}
		msgs = append(msgs, m)
		done, ok := s.Next(']')
		if !ok {
			return nil, false
		}
		if done {
			return msgs, true
		}
	}
}

// plainString stores a JSON string without escapes (or null, which leaves dst alone, as encoding/json
// does) in dst; anything else is left to encoding/json.
func plainString(v []byte, dst *string) bool {
	switch {
	case string(v) == "null":
		return true
	case len(v) < 2 || v[0] != '"':
		return false
	}
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' || c >= utf8.RuneSelf {
			return false // escapes and non-ASCII (encoding/json replaces invalid UTF-8) go the long way
		}
	}
	*dst = string(body)
	return true
}

// scanAckResults reads an ack batch answer into res (reused).
func scanAckResults(b []byte, res []ackResult) ([]ackResult, bool) {
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('[') {
		return nil, false
	}
	s.WS()
	if s.Eat(']') {
		return res, s.End()
	}
	for {
		if !s.Eat('{') {
			return nil, false
		}
		s.WS()
		var r ackResult
		for done := s.Eat('}'); !done; {
			key, ok := s.Key()
			if !ok {
				return nil, false
			}
			v, ok := s.Value()
			if !ok {
				return nil, false
			}
			switch string(key) {
			case `"success"`:
				if r.Success, ok = jsonBool(v); !ok {
					return nil, false
				}
			case `"noop"`:
				if r.Noop, ok = jsonBool(v); !ok {
					return nil, false
				}
			case `"transactionId"`:
				if !plainString(v, &r.TxID) {
					return nil, false
				}
			case `"error"`:
				if string(v) != "null" {
					if json.Unmarshal(v, &r.Error) != nil {
						return nil, false
					}
				}
			}
			if done, ok = s.Next('}'); !ok {
				return nil, false
			}
		}
		res = append(res, r)
		done, ok := s.Next(']')
		if !ok {
			return nil, false
		}
		if done {
			return res, s.End()
		}
	}
}

func jsonBool(v []byte) (val, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false", "null":
		return false, true
	}
	return false, false
}

// appendAckBody writes the body of POST /api/v1/ack/batch for acks as json.Marshal writes
// {"acknowledgments": acks, "consumerGroup": group} (the key left out when group is empty).
func appendAckBody(dst []byte, group string, acks []ackItem) []byte {
	dst = append(dst, `{"acknowledgments":[`...)
	for i, a := range acks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"transactionId":`...)
		dst = appendJSONString(dst, a.TransactionID)
		dst = append(dst, `,"partitionId":`...)
		dst = appendJSONString(dst, a.PartitionID)
		if a.LeaseID != "" {
			dst = append(dst, `,"leaseId":`...)
			dst = appendJSONString(dst, a.LeaseID)
		}
		dst = append(dst, `,"status":`...)
		dst = appendJSONString(dst, a.Status)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if group != "" {
		dst = append(dst, `,"consumerGroup":`...)
		dst = appendJSONString(dst, group)
	}
	return append(dst, '}')
}

// appendJSONString appends s as json.Marshal writes it: printable ASCII other than the characters it
// escapes is copied, anything else goes through json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
