package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkValue: a text the scanner reads whole as one value is one encoding/json accepts, and every
// text encoding/json accepts (nested at most MaxDepth deep) the scanner reads whole.
func checkValue(t *testing.T, b []byte) {
	s := Scanner{B: b}
	s.WS()
	v, ok := s.Value()
	whole := ok && s.End()
	if whole && !json.Valid(b) {
		t.Fatalf("scanner reads %q whole, encoding/json refuses it", b)
	}
	if !whole && json.Valid(b) && depth(b) <= MaxDepth {
		t.Fatalf("encoding/json accepts %q, the scanner does not (read %q)", b, v)
	}
}

// depth is how deeply b nests (counting brackets outside strings).
func depth(b []byte) int {
	d, most, in := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '[' || c == '{'):
			d++
			most = max(most, d)
		case !in && (c == ']' || c == '}'):
			d--
		}
	}
	return most
}

var seeds = []string{
	`null`, `true`, `false`, `0`, `-0`, `-0.5e+10`, `1E3`, `12.50`, `""`, `"a\"b\\c\/\b\f\n\r\t\u00e9"`, "\"raw \xff bytes\"",
	`[]`, `{}`, ` [ 1 , { "a" : [ null ] } , "x" ] `, `{"a":1,"a":2}`, `{"items":[{"queue":"q","payload":{"n":[1,2]}}]}`,
	`01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`, `"` + "\t" + `"`, `"open`, `[1,]`, `{"a":1,}`,
	`{"a" 1}`, `{1:2}`, `[1 2]`, `[`, `]`, `{"a":1}}`, `1 2`, "\ufeff1", strings.Repeat("[", 129) + strings.Repeat("]", 129),
	strings.Repeat("[", 128) + strings.Repeat("]", 128),
}

func TestValueAcceptsWhatEncodingJSONAccepts(t *testing.T) {
	for _, b := range seeds {
		checkValue(t, []byte(b))
	}
	s := Scanner{B: []byte(`{"k" : "v", "n":1}`)}
	s.Eat('{')
	k, ok := s.Key()
	if !ok || string(k) != `"k"` {
		t.Fatalf("key %q %v", k, ok)
	}
	if v, ok := s.Value(); !ok || string(v) != `"v"` {
		t.Fatalf("value %q %v", v, ok)
	}
	if done, ok := s.Next('}'); done || !ok {
		t.Fatal("a comma follows")
	}
	s.Key()
	s.Value()
	if done, ok := s.Next('}'); !done || !ok || !s.End() {
		t.Fatal("the object ends")
	}
}

// FuzzValue runs its seeds with the package's tests (it is not one of the CI fuzz targets).
func FuzzValue(f *testing.F) {
	for _, b := range seeds {
		f.Add([]byte(b))
	}
	f.Fuzz(checkValue)
}
