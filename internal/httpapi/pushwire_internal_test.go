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
)

// comparePushDecoders checks the push route's own reader against the general path on one body: when
// the reader takes the body, the general path must take it too and give the same items.
func comparePushDecoders(b []byte) (fast bool, err error) {
	got, ok := fastPushItems(b, "sub")
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

// comparePushEncoders checks the push answer's writer against json.Marshal.
func comparePushEncoders(res []engine.PushResult) error {
	want, err := json.Marshal(res)
	if err != nil {
		return err
	}
	got, ok := appendPushResults(nil, res)
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
		`{"items":[{"queue":"q","payload":"bad` + "\xff" + `utf8"}]}`,
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
	for _, b := range left {
		fast, err := comparePushDecoders([]byte(b))
		require.NoError(t, err)
		require.False(t, fast, "the fast reader should leave %s to the general path", b)
	}
}

// TestFastPushReaderSharesTheBody: payloads point into the body and the transactionIds share one
// string, which is the point of the reader; queue names repeat without a new string each.
func TestFastPushReaderSharesTheBody(t *testing.T) {
	b := []byte(`{"items":[{"queue":"q","payload":{"n":1},"transactionId":"a"},{"queue":"q","payload":"x","transactionId":"bb"}]}`)
	items, ok := fastPushItems(b, "")
	require.True(t, ok)
	require.Len(t, items, 2)
	require.Equal(t, `{"n":1}`, string(items[0].Payload))
	require.Equal(t, "a", items[0].TransactionID)
	require.Equal(t, "bb", items[1].TransactionID)
	b[strings.Index(string(b), `{"n"`)+5] = '2'
	require.Equal(t, `{"n":2}`, string(items[0].Payload), "the payload aliases the body")
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
		_, ok := appendPushResults(nil, []engine.PushResult{{TraceID: tr}})
		require.False(t, ok)
	}
	// Through writeJSON (and its recycled buffers), twice, and the nil slice json.Marshal writes as null.
	for _, res := range [][]engine.PushResult{pushResultsOf("a<b"), pushResultsOf("ok"), pushResultsOf("ok")[:1], nil,
		{{TraceID: 5}}} {
		want, err := json.Marshal(res)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		writeJSON(rec, http.StatusCreated, res)
		require.Equal(t, http.StatusCreated, rec.Code)
		require.Equal(t, string(want), rec.Body.String())
		require.Equal(t, strconv.Itoa(len(want)), rec.Header().Get("Content-Length"))
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
}
