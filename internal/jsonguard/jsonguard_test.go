package jsonguard

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/queen-go/queen/internal/jsonscan"
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
		{"deep", strings.Repeat("[", jsonscan.MaxDepth+1) + strings.Repeat("]", jsonscan.MaxDepth+1), strings.Repeat("[0]", jsonscan.MaxDepth), "nested deeper"},
		{"not json", `{"a":}`, "", "syntax"},
		{"trailing", `{} x`, "", "syntax"},
		{"leading zero", `[01]`, "", "syntax"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.doc), API)
			if acceptsWhole([]byte(c.doc)) != (err == nil) {
				t.Fatalf("Accept and Check disagree: Check says %v", err)
			}
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
		if acceptsWhole(b) != (err == nil) {
			t.Fatalf("Accept and Check disagree on %q: Check says %v", b, err)
		}
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

// acceptsWhole is Check(b, API) == nil by way of Accept.
func acceptsWhole(b []byte) bool {
	s := jsonscan.Scanner{B: b}
	s.WS()
	end, ok := Accept(b, s.I, 0, API, Plain)
	s.I = end
	return ok && s.End()
}

// TestAcceptInContext: Accept applies the rules as Check does at the value's place in a larger text:
// its depth and the kind of its key.
func TestAcceptInContext(t *testing.T) {
	long := `"` + strings.Repeat("x", MaxName+1) + `"`
	doc := []byte(`{"payload":{"queue":` + long + `},"queue":` + long + `}`)
	at := func(sub string) int { return strings.Index(string(doc), sub) }
	if end, ok := Accept(doc, at(`{"queue"`), 1, API, Opaque); !ok || doc[end] != ',' {
		t.Fatalf("opaque value refused or misread: %v %d", ok, end)
	}
	if _, ok := Accept(doc, at(`{"queue"`), 1, API, Plain); ok {
		t.Fatal("a long name under a plain key accepted")
	}
	if _, ok := Accept(doc, strings.LastIndex(string(doc), long), 1, API, Name); ok {
		t.Fatal("a long name accepted")
	}
	if _, ok := Accept(doc, strings.LastIndex(string(doc), long), 1, API, Plain); !ok {
		t.Fatal("a long string under a plain key refused")
	}
	deep := []byte(strings.Repeat("[", 10) + strings.Repeat("]", 10))
	if _, ok := Accept(deep, 0, jsonscan.MaxDepth-10, API, Plain); !ok {
		t.Fatal("refused at the deepest allowed place")
	}
	if _, ok := Accept(deep, 0, jsonscan.MaxDepth-9, API, Plain); ok {
		t.Fatal("accepted one level too deep")
	}
	if API.KindOf([]byte("payload")) != Opaque || API.KindOf([]byte("queue")) != Name || API.KindOf([]byte("x")) != Plain {
		t.Fatal("KindOf")
	}
}
