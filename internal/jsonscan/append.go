package jsonscan

import "encoding/json"

// The hand-written encoders (the answers of push, pop and ack, the load generator's bodies) write
// their strings and raw values with these, byte for byte as json.Marshal writes them, and leave to
// json.Marshal anything these are not sure of.

// AppendString writes s as a JSON string the way json.Marshal does: printable ASCII other than the
// quote, the backslash and the three characters it escapes for HTML is copied; any other string is
// left to json.Marshal itself.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !copiedAsIs[s[i]] {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// copiedAsIs marks the bytes AppendString copies as they are (one table look-up per byte: the
// answers' strings are most of their bytes).
var copiedAsIs = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendCompact writes the JSON text src as json.Marshal writes a json.RawMessage holding it:
// without whitespace between tokens, with <, > and & escaped as \u003c, \u003e, \u0026 and the line
// and paragraph separators U+2028 and U+2029 as \u2028 and \u2029 wherever they appear (only inside
// strings, in valid JSON); everything else, escapes and any invalid UTF-8 in strings included, is
// copied as it is, in one pass. ok=false: src is not one JSON value (json.Marshal fails on it) or
// nests deeper than MaxDepth (json.Marshal is left to write it).
func AppendCompact(dst, src []byte) ([]byte, bool) {
	c := compactor{Scanner: Scanner{B: src}, dst: dst}
	c.WS()
	if !c.value(0) || !c.End() {
		return nil, false
	}
	return c.dst, true
}

// compactor copies a JSON text token by token into dst, checking its grammar on the way.
type compactor struct {
	Scanner
	dst []byte
}

func (c *compactor) value(depth int) bool {
	if c.I >= len(c.B) {
		return false
	}
	switch c.B[c.I] {
	case '"':
		return c.str()
	case '{':
		return Opens(depth) && c.container(depth, '}', true)
	case '[':
		return Opens(depth) && c.container(depth, ']', false)
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
