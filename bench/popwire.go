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
	seen := false
	ok := s.Eat('{') && s.Members(func(key []byte) bool {
		f, ok := jsonscan.Known(key, "messages")
		if !ok {
			return false
		}
		if f < 0 {
			_, ok := s.Value()
			return ok
		}
		if seen || !s.Eat('[') {
			return false // a second "messages" (encoding/json keeps the last one) or not an array
		}
		seen = true
		return s.Elements(func() bool {
			var m popMessage
			ok := s.Eat('{') && s.Members(func(key []byte) bool {
				f, ok := jsonscan.Known(key, "id", "transactionId", "partitionId", "leaseId", "consumerGroup", "partition", "data")
				v, ok2 := s.Value()
				switch {
				case !ok || !ok2:
					return false
				case f == 6:
					m.Data = json.RawMessage(v)
				case f >= 0:
					return plainString(v, []*string{&m.ID, &m.TransactionID, &m.PartitionID, &m.LeaseID, &m.ConsumerGroup, &m.Partition}[f])
				}
				return true
			})
			msgs = append(msgs, m)
			return ok
		})
	})
	if !ok || !s.End() {
		return nil, false
	}
	return msgs, true
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
	ok := s.Eat('[') && s.Elements(func() bool {
		var r ackResult
		ok := s.Eat('{') && s.Members(func(key []byte) bool {
			f, ok := jsonscan.Known(key, "success", "noop", "transactionId", "error")
			v, ok2 := s.Value()
			if !ok || !ok2 {
				return false
			}
			switch f {
			case 0:
				r.Success, ok = jsonBool(v)
			case 1:
				r.Noop, ok = jsonBool(v)
			case 2:
				ok = plainString(v, &r.TxID)
			case 3:
				ok = string(v) == "null" || json.Unmarshal(v, &r.Error) == nil
			}
			return ok
		})
		res = append(res, r)
		return ok
	})
	if !ok || !s.End() {
		return nil, false
	}
	return res, true
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
