package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/jsonscan"
)

// comparePushDecoders checks the push route's own reader against the general path on one body: when
// the reader takes the body, the general path must take it too and give the same items.
func comparePushDecoders(b []byte) (fast bool, err error) {
	got, ok := fastPushItems(b, "sub", 0)
	if !ok {
		return false, nil
	}
	want, werr := parsePushBody(b, "sub")
	if werr != nil {
		return true, fmt.Errorf("fast reader took %q, the general path refuses it: %v", b, werr)
	}
	if !reflect.DeepEqual(got, want) {
		return true, fmt.Errorf("body %q: fast reader gives %#v, the general path %#v", b, got, want)
	}
	return true, nil
}

// compareSinglePass checks the reader's single pass against what it replaces, guardBody and then the
// reader by grammar alone: both take exactly the same bodies and read the same raw items from them.
func compareSinglePass(b []byte) error {
	got, ok := scanPushBody(b, nil, 0)
	ref := pushScan{Scanner: jsonscan.Scanner{B: b}, unguarded: true}
	want, wantOK := ref.body(nil)
	guard := guardBody(b)
	if wantOK = wantOK && guard == nil; ok != wantOK {
		return fmt.Errorf("body %q: the single pass takes it: %v; guardBody (%v) and the reader by grammar: %v", b, ok, guard, wantOK)
	}
	if ok && !reflect.DeepEqual(got, want) {
		return fmt.Errorf("body %q: the single pass reads %q, guardBody and the reader by grammar %q", b, got, want)
	}
	return nil
}

// comparePushEncoders checks the push answer's writer against json.Marshal.
func comparePushEncoders(res []engine.PushResult) error {
	want, err := json.Marshal(res)
	if err != nil {
		return err
	}
	got, ok := engine.PushResults(res).AppendJSON(nil)
	if !ok {
		return nil
	}
	if string(got) != string(want) {
		return fmt.Errorf("writer gives\n%s\njson.Marshal\n%s", got, want)
	}
	return nil
}

// pushResultsOf makes push results of every shape the engine answers, with text from s in every field.
func pushResultsOf(s string) []engine.PushResult {
	return []engine.PushResult{
		{Index: 0, TransactionID: s, Status: engine.StatusQueued, MessageID: s, PartitionID: s, TraceID: json.RawMessage("null"), QueueName: s},
		{Index: 1, TransactionID: s, Status: engine.StatusQueued, MessageID: "m", PartitionID: "p", TraceID: s, QueueName: s},
		{Index: 22, TransactionID: s, Status: engine.StatusDuplicate, MessageID: s, QueueName: s},
		{Index: 333, TransactionID: s, Status: engine.StatusFailed, QueueName: s, Queue: s, Partition: s, Error: s},
		{Index: 4, TransactionID: "", Status: engine.StatusBuffered, QueueName: ""},
	}
}

func TestFastPushReaderMatchesTheGeneralPath(t *testing.T) {
	const pid = "0190d7a2-0000-7000-8000-000000000000"
	taken := []string{
		`{"items":[{"queue":"q","partition":"p","payload":{"a":1},"transactionId":"t1"}]}`,
		`{"items":[{"queue":"q","payload":"x"},{"queue":"q","payload":[1,2.5e-3,true,false,null,{"k":"v"}]}]}`,
		` { "items" : [ { "queue" : "q" , "payload" : { "a" : [ ] , "b" : { } } , "transactionId" : "t" } ] } ` + "\n",
		`{"other":{"x":[1,{"y":"\u00e9"}]},"items":[{"queue":"q","traceId":"` + pid + `","extra":"\n"}],"more":-0.5E+3}`,
		`{"items":[{"queue":"q","transactionId":"a\"b\\c"},{"queue":"q","transactionId":"\u00e9t\u00e9"},{"queue":"q","transactionId":"plain"}]}`,
		`{"items":[{"queue":"q","transactionId":null,"partition":null,"traceId":null,"payload":null}]}`,
		`{"items":[{"queue":"q1","partition":"a"},{"queue":"q1","partition":"a"},{"queue":"q2","partition":"b"},{"queue":"q1","partition":"a"}]}`,
		`{"items":[{"queue":"q","queue":"r","payload":1,"payload":"two"}]}`,
		`{"items":[{"queue":"héllo","partition":"wörld","transactionId":"✓","payload":"ünï"}]}`,
		`{"items":[{"queue":"q","traceId":"` + strings.ToUpper(pid) + `"}]}`,
	}
	for _, b := range taken {
		fast, err := comparePushDecoders([]byte(b))
		require.NoError(t, err)
		require.True(t, fast, "the fast reader should take %s", b)
	}
	// Bodies the reader must leave to the general path (which words their errors, or reads a shape the
	// reader does not): none may come out different.
	left := []string{
		``, `null`, `[]`, `{}`, `{"items":null}`, `{"items":[]}`, `{"items":{}}`, `{"items":[null]}`, `{"items":[1]}`,
		`{"Items":[{"queue":"q"}]}`, `{"items":[{"Queue":"q"}]}`, `{"items":[{"queue":"q","QUEUE":"r"}]}`,
		`{"items":[{"queue":"q","trace\u0049d":"x"}]}`, `{"items":[{"queue":"q"}],"items":[{"partition":"p"}]}`,
		`{"items":[{"queue":"q"}]} x`, `{"items":[{"queue":"q"}]`, `{"items":[{"queue":"q",}]}`, `{"items":[{"queue":"q"},]}`,
		`{"items":[{"queue":1}]}`, `{"items":[{"queue":""}]}`, `{"items":[{"partition":"p"}]}`, `{"items":[{"queue":"q","partition":2}]}`,
		`{"items":[{"queue":"q","transactionId":7}]}`, `{"items":[{"queue":"q","traceId":"nope"}]}`, `{"items":[{"queue":"q","traceId":3}]}`,
		`{"items":[{"queue":"q","payload":01}]}`, `{"items":[{"queue":"q","payload":1.}]}`, `{"items":[{"queue":"q","payload":tru}]}`,
		`{"items":[{"queue":"q","payload":"\x"}]}`, `{"items":[{"queue":"q","payload":"` + "\t" + `"}]}`, `{"items":[{"queue":"q","payload":"\u12"}]}`,
		`{"items":[{"queue":"q","Kelvin\u212a":1}]}`, `{"items":[{"queue":"q","ſ":1}]}`, "\ufeff" + `{"items":[{"queue":"q"}]}`,
		`{"items":[{"queue":"q","payload":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}]}`,
	}
	left = append(left, guardRefuses...)
	for _, b := range left {
		fast, err := comparePushDecoders([]byte(b))
		require.NoError(t, err)
		require.False(t, fast, "the fast reader should leave %s to the general path", b)
	}
}

// guardRefuses are push bodies the grammar allows and guardBody refuses, one per rule and place.
var guardRefuses = func() []string {
	long := `"` + strings.Repeat("x", jsonguard.MaxName+1) + `"`
	var bodies []string
	for _, v := range []string{`"bad` + "\xff" + `utf8"`, `"a\u0000b"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `1e999999`,
		`0e-500`, strings.Repeat("1", jsonguard.MaxNumberText+1), `{"k` + "\xff" + `":1}`, `{"k\u0000":1}`} {
		bodies = append(bodies, `{"items":[{"queue":"q","payload":`+v+`}]}`, `{"items":[{"queue":"q","extra":[`+v+`]}]}`,
			`{"other":{"x":`+v+`},"items":[{"queue":"q"}]}`)
	}
	for _, f := range []string{"queue", "partition", "transactionId", "traceId"} {
		bodies = append(bodies, `{"items":[{"queue":"q","`+f+`":`+long+`}]}`)
	}
	return append(bodies,
		`{"items":[{"queue":"q","status":`+long+`}]}`, `{"items":[{"queue":"q","traceNames":["a",`+long+`]}]}`,
		`{"queue":`+long+`,"items":[{"queue":"q"}]}`, `{"items":[{"queue":"q"}],"x":{"partition":`+long+`}}`,
		`{"items":[{"queue":"q","payload":`+strings.Repeat("[", jsonscan.MaxDepth-2)+strings.Repeat("]", jsonscan.MaxDepth-2)+`}]}`,
		`{"x":`+strings.Repeat("[", jsonscan.MaxDepth)+strings.Repeat("]", jsonscan.MaxDepth)+`,"items":[{"queue":"q"}]}`)
}()

// TestSinglePassMatchesGuardAndReader: the reader's single pass takes a body exactly when guardBody
// and the reader by grammar alone both do (FuzzPushBody checks the same on every body it sends).
func TestSinglePassMatchesGuardAndReader(t *testing.T) {
	long := `"` + strings.Repeat("x", jsonguard.MaxName-2) + `\u00e9"` // longer than MaxName raw, not decoded
	bodies := append([]string{
		`{"items":[{"queue":"q","payload":{"queue":"` + strings.Repeat("x", 300) + `"}}]}`,
		`{"items":[{"queue":"q","payload":` + strings.Repeat("[", jsonscan.MaxDepth-3) + strings.Repeat("]", jsonscan.MaxDepth-3) + `}]}`,
		`{"x":` + strings.Repeat("[", jsonscan.MaxDepth-1) + strings.Repeat("]", jsonscan.MaxDepth-1) + `,"items":[{"queue":"q"}]}`,
		`{"items":[{"queue":"q","transactionId":` + long + `,"partition":"\ud83d\ude00","payload":[1e60,-1.5e-50,0.000]}]}`,
		`{"items":[{"queue":"q","payload":"\ud83d\ude00 é"}],"status":"x"}`,
	}, guardRefuses...)
	for _, b := range bodies {
		require.NoError(t, compareSinglePass([]byte(b)))
	}
	for _, b := range bodies[:5] {
		_, ok := scanPushBody([]byte(b), nil, 0)
		require.True(t, ok, "the single pass should take %s", b)
	}
	for _, b := range guardRefuses {
		require.Error(t, guardBody([]byte(b)), "guardBody should refuse %s", b)
	}
}

// TestFastPushReaderSharesTheBody: payloads point into the body and the transactionIds share one
// string, which is the point of the reader; queue names repeat without a new string each.
func TestFastPushReaderSharesTheBody(t *testing.T) {
	b := []byte(`{"items":[{"queue":"q","payload":{"n":1},"transactionId":"a"},{"queue":"q","payload":"x","transactionId":"bb"}]}`)
	items, ok := fastPushItems(b, "", 0)
	require.True(t, ok)
	require.Len(t, items, 2)
	require.Equal(t, `{"n":1}`, string(items[0].Payload.JSON()))
	require.Equal(t, "a", items[0].TransactionID)
	require.Equal(t, "bb", items[1].TransactionID)
	b[strings.Index(string(b), `{"n"`)+5] = '2'
	require.Equal(t, `{"n":2}`, string(items[0].Payload.JSON()), "the payload aliases the body")
	require.Equal(t, "q", items[1].Queue)
	require.Nil(t, items[0].TraceID)
}

func TestPushAnswerWriterMatchesMarshal(t *testing.T) {
	for _, s := range []string{"", "plain-id_1.2", uuid.NewString(), `quote"back\slash`, "<tag>&amp;", "tab\tnl\n\x00\x1f\x7f",
		"héllo ✓", "line\u2028sep\u2029", "bad\xffutf8", strings.Repeat("x", 300)} {
		require.NoError(t, comparePushEncoders(pushResultsOf(s)), "%q", s)
	}
	require.NoError(t, comparePushEncoders([]engine.PushResult{}))
	// Shapes the writer leaves to json.Marshal.
	for _, tr := range []any{json.RawMessage(`{"a":1}`), 5, map[string]int{"a": 1}} {
		_, ok := engine.PushResults{{TraceID: tr}}.AppendJSON(nil)
		require.False(t, ok)
	}
	// Through writeJSON (and its recycled buffers), twice, and the nil slice json.Marshal writes as null.
	for _, res := range [][]engine.PushResult{pushResultsOf("a<b"), pushResultsOf("ok"), pushResultsOf("ok")[:1], nil,
		{{TraceID: 5}}} {
		want, err := json.Marshal(res)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		writeJSON(rec, http.StatusCreated, engine.PushResults(res))
		require.Equal(t, http.StatusCreated, rec.Code)
		require.Equal(t, string(want), rec.Body.String())
		require.Equal(t, strconv.Itoa(len(want)), rec.Header().Get("Content-Length"))
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
}

// FuzzPushReader compares the push route's reader with guardBody, the reader by grammar alone and
// the general path, without a broker, so it runs many more bodies a second than FuzzPushBody (which
// checks the same on every body it sends). Not in `make fuzz-ci`: its seeds run with the tests.
func FuzzPushReader(f *testing.F) {
	for _, s := range append([]string{
		`{"items":[{"queue":"q","partition":"p","payload":{"a":[1,-2.5e3,"é",null]},"transactionId":"t1","traceId":null}]}`,
		`{"x":{"queue":"` + strings.Repeat("y", jsonguard.MaxName) + `"},"items":[{"queue":"q","status":"s","payload":"\ud83d\ude00"}]}`,
	}, guardRefuses...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := comparePushDecoders(b); err != nil {
			t.Fatal(err)
		}
		if err := compareSinglePass(b); err != nil {
			t.Fatal(err)
		}
	})
}
