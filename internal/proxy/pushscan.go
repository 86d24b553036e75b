package proxy

import "github.com/queen-go/queen/internal/jsonscan"

// scanPush reads a push body ({"items": [...]}) without encoding/json, which took a tenth of the
// proxy's CPU at batch 10 (reflection and a copy of every payload). ok=false when the text holds
// anything it cannot read exactly as encoding/json would (an escaped or non-ASCII queue or partition
// name, a key differing only in case, a null where an object or string goes): parsePush then hands
// the body to encoding/json, which also decides what is invalid.
func scanPush(body []byte) (pb *pushBody, ok bool) {
	s := jsonscan.Scanner{B: body}
	s.WS()
	if !s.Eat('{') {
		return nil, false
	}
	// Room for the items of a usual batch up front, rather than growing through 1, 2, 4, 8 and 16.
	pb = &pushBody{Items: make([]pushItem, 0, 16)}
	seen := false
	ok = s.Members(func(k []byte) bool {
		idx, ok := jsonscan.Known(k, "items")
		switch {
		case !ok:
			return false
		case idx < 0:
			_, ok = s.Value()
			return ok
		}
		if seen || !s.Eat('[') {
			return false // a second "items" decodes into the first's elements: leave that to encoding/json
		}
		seen = true
		var prev pushItem
		return s.Elements(func() bool {
			it, ok := scanItem(&s, prev)
			pb.Items = append(pb.Items, it)
			prev = it
			return ok
		})
	})
	if !ok || !s.End() {
		return nil, false
	}
	return pb, true
}

// scanItem reads one item; prev (the previous item, zero for the first) lends its queue and partition
// strings when they are the same text, as they mostly are within a push.
func scanItem(s *jsonscan.Scanner, prev pushItem) (it pushItem, ok bool) {
	if !s.Eat('{') {
		return it, false
	}
	var seen [4]bool
	ok = s.Members(func(k []byte) bool {
		idx, ok := jsonscan.Known(k, "queue", "partition", "payload", "data")
		if ok && idx >= 0 {
			if seen[idx] {
				return false
			}
			seen[idx] = true
		}
		switch {
		case !ok:
			return false
		case idx == 0 || idx == 1:
			lit, plain, ok := s.Quoted()
			if !ok || !plain {
				return false
			}
			name := lit[1 : len(lit)-1]
			if idx == 0 {
				it.Queue = reuse(name, prev.Queue)
			} else {
				it.Partition = reuse(name, prev.Partition)
			}
			return true
		}
		v, ok := s.Value()
		switch idx {
		case 2:
			it.Payload = v
		case 3:
			it.Data = v
		}
		return ok
	})
	return it, ok
}

// reuse is name as a string: prev when that holds the same text, else a copy.
func reuse(name []byte, prev string) string {
	if prev == string(name) { // compared without a copy
		return prev
	}
	return string(name)
}
