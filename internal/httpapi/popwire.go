package httpapi

import (
	"net/http"
	"strconv"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonscan"
)

// A pop answer is written once per delivered batch and carries every message's payload, so with
// several consumer groups json.Marshal of it was a large part of the broker's CPU per delivery:
// reflection over every field, and a pass of its byte-at-a-time scanner over every payload
// (json.RawMessage is validated, compacted and HTML-escaped on the way out). This file writes the
// answer by hand, byte for byte as json.Marshal does, in one pass over each payload; any value it is
// not sure to write the same way (a payload deeper than jsonscan.MaxDepth, or not JSON at all, which
// json.Marshal refuses) makes it give up, and writeJSON then uses json.Marshal. Tests compare it with
// json.Marshal (popwire_internal_test.go, and FuzzPushBody on every body it sends).

// writeAnswer answers status with what appendTo writes into a recycled buffer; false: appendTo gave
// up and nothing was written.
func writeAnswer(w http.ResponseWriter, status int, appendTo func(dst []byte) ([]byte, bool)) bool {
	buf := answers.Get().(*[]byte)
	b, ok := appendTo((*buf)[:0])
	if !ok {
		answers.Put(buf)
		return false
	}
	writeBody(w, status, b)
	if cap(b) <= 1<<20 {
		*buf = b[:0]
		answers.Put(buf)
	}
	return true
}

// appendPopResult writes res as json.Marshal does; ok=false when it holds a value it does not write
// itself.
func appendPopResult(dst []byte, res *engine.PopResult) ([]byte, bool) {
	dst = append(dst, `{"success":`...)
	dst = strconv.AppendBool(dst, res.Success)
	dst = append(dst, `,"queue":`...)
	dst = appendJSONString(dst, res.Queue)
	dst = append(dst, `,"partition":`...)
	dst = appendJSONString(dst, res.Partition)
	dst = append(dst, `,"partitionId":`...)
	dst = appendJSONString(dst, res.PartitionID)
	dst = append(dst, `,"leaseId":`...)
	dst = appendJSONString(dst, res.LeaseID)
	dst = append(dst, `,"consumerGroup":`...)
	dst = appendJSONString(dst, res.ConsumerGroup)
	dst = append(dst, `,"partitionsClaimed":`...)
	dst = strconv.AppendInt(dst, int64(res.PartitionsClaimed), 10)
	dst = append(dst, `,"messages":`...)
	if res.Messages == nil {
		return append(dst, "null}"...), true
	}
	dst = append(dst, '[')
	for i := range res.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendMessage(dst, &res.Messages[i]); !ok {
			return nil, false
		}
	}
	return append(dst, "]}"...), true
}

func appendMessage(dst []byte, m *engine.Message) ([]byte, bool) {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, m.ID)
	dst = append(dst, `,"transactionId":`...)
	dst = appendJSONString(dst, m.TransactionID)
	dst = append(dst, `,"traceId":`...)
	dst = appendOptString(dst, m.TraceID)
	dst = append(dst, `,"data":`...)
	switch {
	case m.Data == nil:
		dst = append(dst, "null"...) // what RawMessage.MarshalJSON answers for nil
	default:
		var ok bool
		if dst, ok = appendCompactJSON(dst, m.Data); !ok {
			return nil, false
		}
	}
	dst = append(dst, `,"producerSub":`...)
	dst = appendOptString(dst, m.ProducerSub)
	dst = append(dst, `,"createdAt":`...)
	dst = appendJSONString(dst, m.CreatedAt)
	dst = append(dst, `,"partitionId":`...)
	dst = appendJSONString(dst, m.PartitionID)
	dst = append(dst, `,"partition":`...)
	dst = appendJSONString(dst, m.Partition)
	dst = append(dst, `,"leaseId":`...)
	dst = appendJSONString(dst, m.LeaseID)
	dst = append(dst, `,"consumerGroup":`...)
	dst = appendJSONString(dst, m.ConsumerGroup)
	dst = append(dst, `,"queue":`...)
	dst = appendJSONString(dst, m.Queue)
	dst = append(dst, `,"retryCount":`...)
	dst = strconv.AppendInt(dst, int64(m.RetryCount), 10)
	return append(dst, '}'), true
}

// appendOptString writes a *string field: null when nil.
func appendOptString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, *s)
}

// appendCompactJSON writes the JSON text src as json.Marshal writes a json.RawMessage holding it:
// without whitespace between tokens, with <, > and & escaped as \u003c, \u003e, \u0026 and the line
// and paragraph separators U+2028 and U+2029 as \u2028 and \u2029 wherever they appear (only inside
// strings, in valid JSON); everything else, escapes and any invalid UTF-8 in strings included, is
// copied as it is. ok=false: src is not one JSON value (json.Marshal fails on it) or nests deeper
// than jsonscan.MaxDepth (json.Marshal is left to write it).
func appendCompactJSON(dst, src []byte) ([]byte, bool) {
	c := compactor{Scanner: jsonscan.Scanner{B: src}, dst: dst}
	c.WS()
	if !c.value(0) || !c.End() {
		return nil, false
	}
	return c.dst, true
}

// compactor copies a JSON text token by token into dst, checking its grammar on the way.
type compactor struct {
	jsonscan.Scanner
	dst []byte
}

func (c *compactor) value(depth int) bool {
	if c.I >= len(c.B) || depth > jsonscan.MaxDepth {
		return false
	}
	switch c.B[c.I] {
	case '"':
		return c.str()
	case '{':
		return c.container(depth, '}', true)
	case '[':
		return c.container(depth, ']', false)
	}
	// A number or a literal: no whitespace and nothing to escape inside.
	v, ok := c.Value()
	c.dst = append(c.dst, v...)
	return ok
}

// container copies an object (keys: true) or an array from its opening bracket on.
func (c *compactor) container(depth int, closing byte, keys bool) bool {
	c.dst = append(c.dst, c.B[c.I])
	c.I++
	c.WS()
	if c.Eat(closing) {
		c.dst = append(c.dst, closing)
		return true
	}
	for {
		if keys {
			if !c.str() {
				return false
			}
			c.WS()
			if !c.Eat(':') {
				return false
			}
			c.WS()
			c.dst = append(c.dst, ':')
		}
		if !c.value(depth + 1) {
			return false
		}
		done, ok := c.Next(closing)
		if !ok {
			return false
		}
		if done {
			c.dst = append(c.dst, closing)
			return true
		}
		c.dst = append(c.dst, ',')
	}
}

// str copies a string literal, escaping what json.Marshal escapes in a raw value.
func (c *compactor) str() bool {
	lit, _, ok := c.Str()
	if !ok {
		return false
	}
	start := 0
	for i, b := range lit {
		if !htmlUnsafe[b] {
			continue
		}
		switch {
		case b != 0xE2:
			c.dst = append(c.dst, lit[start:i]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			start = i + 1
		case i+2 < len(lit) && lit[i+1] == 0x80 && lit[i+2]&^1 == 0xA8: // U+2028 or U+2029
			c.dst = append(c.dst, lit[start:i]...)
			c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[lit[i+2]&0xF])
			start = i + 3
		}
	}
	c.dst = append(c.dst, lit[start:]...)
	return true
}

const hexDigits = "0123456789abcdef"

// htmlUnsafe marks the bytes str looks at: <, > and &, and the first byte of U+2028 and U+2029.
var htmlUnsafe = func() (t [256]bool) {
	for _, b := range []byte{'<', '>', '&', 0xE2} {
		t[b] = true
	}
	return t
}()
