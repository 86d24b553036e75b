package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/jsonscan"
)

// The push route runs once per pushed batch and its JSON work once per pushed message, which made the
// reflective encoding/json the largest part of the broker's CPU per message. This file holds the push
// route's own reader of the body (the answer writes itself: engine.PushResults). It takes only what it
// can read exactly as encoding/json does and hands everything else back to it: the reader gives up
// (ok=false) on any body it is not certain to read the same way, the general path then decodes it and
// words any error. Tests compare it with encoding/json (pushwire_internal_test.go, and FuzzPushBody on
// every input).

// The reader also applies the input limits (jsonguard's rules, which guardBody applies to every other
// body) in the same pass: it gives up on any body they refuse, and the general path then runs guardBody,
// which words the refusal. So a push body is scanned once, not once by the guard, once by the reader
// and once more per payload: the payloads it reads are made by jsonguard.AcceptPayload in that pass.

// pushScan reads one push body.
type pushScan struct {
	jsonscan.Scanner
	// unguarded: values are read by grammar alone, as the reader did before the rules were folded in.
	// Only the tests use it, as the reference the single pass is compared with (guardBody, then this).
	unguarded bool
	// limit is the most entries an array of the body may hold (0: any number): the reader gives up
	// past it, before it has spent memory on the rest, and the general path answers 413 (batchcap.go).
	limit int
	// payload is the last value read as user data (jsonguard.Opaque), made a payload as it was checked.
	payload jsonguard.Payload
}

// full reports whether an array of n entries may take no more.
func (s *pushScan) full(n int) bool { return s.limit > 0 && n >= s.limit }

// Depths (arrays and objects open around a value) of the body's values, as jsonguard counts them.
const (
	bodyMemberDepth = 1 // the value of a member of the body's object
	itemMemberDepth = 3 // {"items":[{"queue": here
)

// itemFields are the fields of an item the reader keeps, and itemKinds how the rules treat them.
var (
	itemFields = [...]string{"queue", "partition", "payload", "transactionId", "traceId"}
	itemKinds  [len(itemFields)]jsonguard.Kind
)

func init() {
	for i, f := range itemFields {
		itemKinds[i] = jsonguard.API.KindOf([]byte(f))
	}
}

// value reads the value that starts here, at depth and of kind, refusing it when jsonguard's rules do.
func (s *pushScan) value(depth int, kind jsonguard.Kind) ([]byte, bool) {
	if s.unguarded {
		v, ok := s.Value()
		if ok && kind == jsonguard.Opaque {
			s.payload, _ = jsonguard.NewPayload(v, "") // the reference reader of the tests only
		}
		return v, ok
	}
	start := s.I
	if kind == jsonguard.Opaque {
		p, end, ok := jsonguard.AcceptPayload(s.B, s.I, depth)
		if !ok {
			return nil, false
		}
		s.I, s.payload = end, p
		return s.B[start:end], true
	}
	end, ok := jsonguard.Accept(s.B, s.I, depth, jsonguard.API, kind)
	if !ok {
		return nil, false
	}
	s.I = end
	return s.B[start:end], true
}

// rawItems recycles the raw items of the reader: they only live while fastPushItems converts them.
var rawItems = sync.Pool{New: func() any { return new([]rawPushItem) }}

// scanPushBody reads {"items":[{...},...]} into raw items whose fields alias b, appended to items.
// ok=false: the body is not one the reader is sure of (including every body the general path or
// guardBody refuses, and one of more than limit items when limit > 0).
func scanPushBody(b []byte, items []rawPushItem, limit int) ([]rawPushItem, bool) {
	s := pushScan{Scanner: jsonscan.Scanner{B: b}, limit: limit}
	return s.body(items)
}

// body reads the whole body (see scanPushBody).
func (s *pushScan) body(items []rawPushItem) ([]rawPushItem, bool) {
	s.WS()
	if !s.Eat('{') {
		return nil, false
	}
	s.WS()
	if s.Eat('}') {
		return nil, false // no items: the general path words it
	}
	seen := false
	ok := s.Members(func(k []byte) bool {
		switch idx, ok := jsonscan.Known(k, "items"); {
		case !ok:
			return false
		case idx == 0:
			if seen {
				return false // encoding/json merges a repeated array into the first: leave it to it
			}
			seen = true
			items, ok = s.items(items)
			return ok
		}
		_, ok := s.value(bodyMemberDepth, jsonguard.API.KindOf(k))
		return ok
	})
	if !ok || !s.End() || !seen {
		return nil, false
	}
	return items, true
}

// items reads the items array, appending to items; every element must be an object.
func (s *pushScan) items(items []rawPushItem) ([]rawPushItem, bool) {
	ok := s.objects(func() bool {
		if s.full(len(items)) {
			return false
		}
		items = append(items, rawPushItem{})
		return s.item(&items[len(items)-1])
	})
	return items, ok
}

// item reads one item object after its opening brace.
func (s *pushScan) item(it *rawPushItem) bool {
	// A function literal, not the method value it.field, whose receiver escape analysis sends to the heap.
	return s.fields(itemMemberDepth, itemFields[:], itemKinds[:], func(i int) *json.RawMessage {
		if i == 2 {
			it.payload = s.payload // the value just read; fields stores its text next
		}
		return it.field(i)
	})
}

// field is where itemFields[i] goes.
func (it *rawPushItem) field(i int) *json.RawMessage {
	switch i {
	case 0:
		return &it.Queue
	case 1:
		return &it.Partition
	case 2:
		return &it.Payload
	case 3:
		return &it.TransactionID
	}
	return &it.TraceID
}

// The readers of the push and ack bodies walk their objects and arrays with these.

// fields reads an object's members after its opening brace: the value of names[i] (of kinds[i]) goes
// to field(i), any other is scanned under the rules and dropped; all sit at depth. A repeated field
// keeps its last value, as with encoding/json.
func (s *pushScan) fields(depth int, names []string, kinds []jsonguard.Kind, field func(i int) *json.RawMessage) bool {
	return s.Members(func(k []byte) bool {
		idx, ok := jsonscan.Known(k, names...)
		if !ok {
			return false
		}
		kind := jsonguard.API.KindOf(k)
		if idx >= 0 {
			kind = kinds[idx]
		}
		v, ok := s.value(depth, kind)
		if ok && idx >= 0 {
			*field(idx) = v
		}
		return ok
	})
}

// objects reads an array whose every element is an object, calling object after each opening brace.
func (s *pushScan) objects(object func() bool) bool {
	return s.Eat('[') && s.Elements(func() bool { return s.Eat('{') && object() })
}

// recycle puts the reader's slice back in pool: kept, or the pooled one when the reader gave up (what
// it appended is in that array, or in a dropped one). It is cleared, so that the pool holds no
// pointer into a body; a rare huge batch is not kept.
func recycle[T any](pool *sync.Pool, pooled *[]T, kept []T) {
	if kept == nil {
		kept = *pooled
	}
	if cap(kept) <= 4096 {
		clear(kept[:cap(kept)])
		*pooled = kept[:0]
		pool.Put(pooled)
	}
}

// fastPushItems is the push body read by scanPushBody and checked as pushItemsFrom checks it. ok=false:
// the general path must read this body (it gives the same items, or the error to answer).
func fastPushItems(b []byte, producerSub string, limit int) ([]engine.PushItem, bool) {
	pooled := rawItems.Get().(*[]rawPushItem)
	raw, ok := scanPushBody(b, (*pooled)[:0], limit)
	defer func() { recycle(&rawItems, pooled, raw) }()
	if !ok || len(raw) == 0 {
		return nil, false
	}
	// The transactionIds, usually all different, share one allocation; queue and partition names
	// usually repeat from item to item and are converted once per run of equal names.
	n := 0
	for i := range raw {
		n += len(raw[i].TransactionID)
	}
	var ids strings.Builder
	ids.Grow(n)
	for i := range raw {
		if lit := raw[i].TransactionID; len(lit) >= 2 && lit[0] == '"' {
			ids.Write(lit[1 : len(lit)-1])
		}
	}
	all := ids.String()
	off := 0
	items := make([]engine.PushItem, len(raw))
	var q, p internedString
	for i := range raw {
		it := &raw[i]
		item := &items[i]
		var ok bool
		if item.Queue, ok = q.of(it.Queue); !ok || item.Queue == "" {
			return nil, false
		}
		if item.Partition, ok = p.of(it.Partition); !ok {
			return nil, false
		}
		if lit := it.TransactionID; len(lit) >= 2 && lit[0] == '"' {
			end := off + len(lit) - 2
			if isPlainString(lit) {
				item.TransactionID = all[off:end]
			} else if item.TransactionID, ok = optString(lit); !ok {
				return nil, false
			}
			off = end
		} else if item.TransactionID, ok = optString(lit); !ok {
			return nil, false
		}
		if lit := it.TraceID; isPlainString(lit) && len(lit) == 38 {
			id, err := uuid.ParseBytes(lit[1:37]) // what parseUUID does, without the string
			if err != nil {
				return nil, false
			}
			item.TraceID = &id
		} else if tr, ok := optString(lit); !ok {
			return nil, false
		} else if tr != "" {
			id, ok := parseUUID(tr)
			if !ok {
				return nil, false
			}
			item.TraceID = &id
		}
		item.Payload, item.ProducerSub = it.payload, producerSub
	}
	return items, true
}

// internedString converts a string field, reusing the previous conversion when the raw text repeats.
type internedString struct {
	raw []byte
	s   string
	set bool
}

func (c *internedString) of(raw json.RawMessage) (string, bool) {
	if c.set && bytes.Equal(raw, c.raw) {
		return c.s, true
	}
	s, ok := optString(raw)
	if !ok {
		return "", false
	}
	c.raw, c.s, c.set = raw, s, true
	return s, true
}
