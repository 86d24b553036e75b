package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/queen-go/queen/internal/jsonscan"
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
	s := jsonscan.Scanner{B: b}
	s.WS()
	ok := s.Eat('[') && s.Elements(func() bool {
		var r pushResult
		var status []byte
		ok := s.Eat('{') && s.Members(func(key []byte) bool {
			f, ok := jsonscan.Known(key, "status", "error")
			v, ok2 := s.Value()
			switch {
			case !ok || !ok2:
				return false
			case f == 0:
				status = v
			case f == 1:
				return string(v) == "null" || v[0] == '"' && json.Unmarshal(v, &r.Error) == nil
			}
			return true
		})
		switch {
		case !ok:
			return false
		case string(status) == `"queued"`:
			r.Status = "queued"
		case status == nil || status[0] != '"':
			return false // no status, or one encoding/json reads another way: leave it to it
		case json.Unmarshal(status, &r.Status) != nil:
			return false
		}
		res = append(res, r)
		return true
	})
	if !ok || !s.End() {
		return nil, false
	}
	return res, true
}
