package jsonguard

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	long := strings.Repeat("x", MaxName+1)
	cases := []struct {
		name, doc, path, reason string // reason "" = accepted; "syntax" = a SyntaxError
	}{
		{"plain", `{"items":[{"queue":"q","payload":{"a":[1,2.5,-3e2,true,null,"é😀"]}}]}`, "", ""},
		{"escaped pair", `{"payload":"\ud83d\ude00"}`, "", ""},
		{"nul escape", `{"items":[{"payload":{"a":"x\u0000y"}}]}`, "items[0].payload.a", "NUL"},
		{"nul in key", `{"payload":{"a\u0000":1}}`, "payload", "NUL"},
		{"raw nul", "{\"queue\":\"a\x00\"}", "queue", "NUL"},
		{"invalid utf8", "{\"partition\":\"\xff\"}", "partition", "UTF-8"},
		{"utf8 surrogate bytes", "{\"q\":\"\xed\xa0\x80\"}", "q", "UTF-8"},
		{"lone high", `{"payload":["\ud800"]}`, "payload[0]", "surrogate"},
		{"lone high then text", `{"payload":"\ud800abc"}`, "payload", "surrogate"},
		{"lone low", `{"payload":"\udc00"}`, "payload", "surrogate"},
		{"huge exponent", `{"payload":{"n":1e999999}}`, "payload.n", "number too large"},
		{"huge negative exponent", `{"payload":{"n":1e-130000}}`, "payload.n", "number too large"},
		{"exponent overflow", `{"payload":1e99999999999999999999999}`, "payload", "number too large"},
		{"zero with scale", `{"payload":0e-500}`, "payload", "number too large"},
		{"long literal", `{"payload":` + strings.Repeat("1", MaxNumberText+1) + `}`, "payload", "longer than"},
		{"fits", `{"payload":[1e60,1.5e-50,123456789012345678901234567890]}`, "", ""},
		{"long transactionId", `{"transactionId":"` + long + `"}`, "transactionId", "longer than 255"},
		{"long name in array", `{"traceNames":["a","` + long + `"]}`, "traceNames[1]", "longer than 255"},
		{"long string in payload", `{"payload":{"queue":"` + long + `"}}`, "", ""},
		{"deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), strings.Repeat("[0]", MaxDepth), "nested deeper"},
		{"not json", `{"a":}`, "", "syntax"},
		{"trailing", `{} x`, "", "syntax"},
		{"leading zero", `[01]`, "", "syntax"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.doc), API)
			var ge *Error
			var se *SyntaxError
			switch {
			case c.reason == "":
				if err != nil {
					t.Fatalf("want accepted, got %v", err)
				}
				if !json.Valid([]byte(c.doc)) {
					t.Fatalf("accepted a document encoding/json refuses")
				}
			case c.reason == "syntax":
				if !errors.As(err, &se) {
					t.Fatalf("want a syntax error, got %v", err)
				}
			default:
				if !errors.As(err, &ge) {
					t.Fatalf("want a rule violation, got %v", err)
				}
				if ge.Path != c.path || !strings.Contains(ge.Reason, c.reason) {
					t.Fatalf("got path %q reason %q, want %q / %q", ge.Path, ge.Reason, c.path, c.reason)
				}
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}]}`, `"\ud800"`, `1e5`, `{"payload":"\u0000"}`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b, API)
		var se *SyntaxError
		if errors.As(err, &se) {
			return
		}
		// What the guard accepts is JSON that encoding/json accepts too.
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}
