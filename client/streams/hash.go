package streams

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// field is one key of a config-hash object, kept in declaration order.
type field struct {
	k string
	v any
}

// ConfigHash is the fingerprint of the operator chain the broker compares on registration: SHA-256
// (lowercase hex) of a compact JSON array with one object per operator, "kind" first and then the
// operator's structural settings in declaration order. Functions are never hashed. The form is
// shared with the JavaScript and Python runtimes, so the same chain hashes alike in all three.
func (s *Stream) ConfigHash() string {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, o := range s.ops {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeObject(&buf, o.hashFields())
	}
	buf.WriteByte(']')
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func (o operator) hashFields() []field {
	switch o.kind {
	case kWindow:
		w := o.win
		fs := []field{{"kind", "window-" + w.kind}}
		switch w.kind {
		case tumbling:
			fs = append(fs, field{"seconds", w.seconds})
		case sliding:
			fs = append(fs, field{"size", w.size}, field{"slide", w.slide})
		case session:
			fs = append(fs, field{"gap", w.gap})
		case cron:
			fs = append(fs, field{"every", w.every})
		}
		return append(fs, field{"gracePeriod", w.grace}, field{"idleFlushMs", w.idleFlushMs},
			field{"eventTime", w.eventTime != nil}, field{"allowedLateness", w.lateness}, field{"onLate", w.onLate})
	case kReduce:
		return []field{{"kind", "reduce"}, {"hasInitial", o.red.hasInitial}}
	case kAggregate:
		return []field{{"kind", "aggregate"}, {"fields", o.red.fields}}
	case kSink:
		return []field{{"kind", "sink"}, {"queue", o.sink.queue}}
	}
	return []field{{"kind", string(o.kind)}}
}

// writeObject writes fields as a compact JSON object without HTML escaping, as JavaScript's
// JSON.stringify does.
func writeObject(buf *bytes.Buffer, fs []field) {
	buf.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeJSON(buf, f.k)
		buf.WriteByte(':')
		writeJSON(buf, f.v)
	}
	buf.WriteByte('}')
}

func writeJSON(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)           // strings, numbers, bools and string slices always encode
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}
