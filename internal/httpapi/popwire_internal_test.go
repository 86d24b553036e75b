package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonscan"
)

// comparePopEncoders checks the pop answer's writer against json.Marshal: where json.Marshal fails the
// writer must give up too, and where it writes the answer it must write the same bytes. taken: the
// writer wrote it.
func comparePopEncoders(res *engine.PopResult) (taken bool, err error) {
	want, werr := json.Marshal(res)
	got, ok := res.AppendJSON(nil)
	switch {
	case werr != nil && ok:
		return true, fmt.Errorf("json.Marshal fails (%v), the writer gives\n%s", werr, got)
	case ok && string(got) != string(want):
		return true, fmt.Errorf("writer gives\n%s\njson.Marshal\n%s", got, want)
	}
	return ok, nil
}

// popResultOf makes a pop answer of every shape the engine answers, with text s in every string
// field and data as one message's payload.
func popResultOf(s string, data []byte) *engine.PopResult {
	id := uuid.NewString()
	return &engine.PopResult{
		Success: true, Queue: s, Partition: s, PartitionID: id, LeaseID: s, ConsumerGroup: s, PartitionsClaimed: 3,
		Messages: []engine.Message{
			{ID: s, TransactionID: s, TraceID: &s, Data: data, ProducerSub: &s, CreatedAt: s, PartitionID: s, Partition: s,
				LeaseID: s, ConsumerGroup: s, Queue: s, RetryCount: -7},
			{ID: id, TransactionID: "t", Data: json.RawMessage(`{"n":1}`), CreatedAt: "2026-12-03T10:00:00.000000Z",
				PartitionID: id, Partition: "", RetryCount: 2147483647},
			{Data: nil}, // nil data is null
		},
	}
}

// payloads are JSON texts of every shape a payload comes back in: PostgreSQL's jsonb output (a space
// after every colon and comma), a decrypted payload as the client pushed it (any whitespace), and
// strings with everything json.Marshal escapes or leaves alone in a raw value.
var payloads = []string{
	`{"a": 1, "b": [1, 2.5, -0.001, 1e+30, true, false, null], "c": {"d": "e"}, "f": []}`,
	` { "a" : [ ] , "b" : { } , "c" : "x" } ` + "\n\t\r",
	`"<script>alert('x') && y</script>"`, `{"<k>": "&amp;"}`,
	`"line` + "\u2028" + `sep` + "\u2029" + `end"`, `"\u2028 escaped already \u003c"`, "\"\xe2\x80\"", "\"\xe2\x80\xaa\"",
	`"héllo wörld ✓ 😀"`, `"\u00e9\n\t\"\\\/\b\f\r"`, "\"bad\xffutf8\xc3\"", `"\ud800 lone surrogate escape"`,
	`0`, `-12`, `3.25E-7`, `true`, `null`, `""`, `[]`, `{}`,
	`{"encrypted": "q0vYb3+/=", "iv": "AAECAwQFBgcICQoL", "authTag": "3q2+7w=="}`,
	`[[[[[[[[[[{"deep": [[["x"]]]}]]]]]]]]]]`,
	strings.Repeat("[", jsonscan.MaxDepth+1) + strings.Repeat("]", jsonscan.MaxDepth+1),
	// Not JSON: json.Marshal fails, and so must the writer.
	``, ` `, `{`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `tru`, `01`, `1.`, `1 2`, `"a`, "\"\x01\"", `"\x"`, `{1:2}`, `<`, `nul`,
}

func TestPopAnswerWriterMatchesMarshal(t *testing.T) {
	for _, s := range []string{"", "plain-id_1.2", uuid.NewString(), `quote"back\slash`, "<tag>&amp;", "tab\tnl\n\x00\x1f\x7f",
		"héllo ✓", "line\u2028sep\u2029", "bad\xffutf8", strings.Repeat("x", 300)} {
		for _, p := range payloads {
			_, err := comparePopEncoders(popResultOf(s, []byte(p)))
			require.NoError(t, err, "text %q payload %q", s, p)
		}
	}
	// The writer writes every valid payload up to jsonscan.MaxDepth itself.
	for _, p := range payloads[:22] {
		taken, err := comparePopEncoders(popResultOf("x", []byte(p)))
		require.NoError(t, err)
		require.True(t, taken, "the writer should write %q", p)
	}
	for _, res := range []*engine.PopResult{{}, {Messages: []engine.Message{}}, {Messages: []engine.Message{{Data: json.RawMessage{}}}}} {
		_, err := comparePopEncoders(res)
		require.NoError(t, err)
	}
	// Through writeJSON (and its recycled buffers), twice; then answers json.Marshal writes or refuses.
	for _, res := range []*engine.PopResult{popResultOf("a<b", []byte(payloads[0])), popResultOf("ok", []byte(payloads[1])),
		popResultOf("ok", []byte(payloads[1])), popResultOf("deep", []byte(payloads[22])), nil} {
		want, err := json.Marshal(res)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		writeJSON(rec, http.StatusOK, res)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, string(want), rec.Body.String())
		require.Equal(t, strconv.Itoa(len(want)), rec.Header().Get("Content-Length"))
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, popResultOf("x", []byte(`{"a":`)))
	require.Equal(t, http.StatusInternalServerError, rec.Code, "a payload that is not JSON fails as json.Marshal fails")
	require.Equal(t, `{"error":"encode response failed"}`, rec.Body.String())
}

// FuzzPopWriter compares the pop answer's writer with json.Marshal on arbitrary payloads and texts,
// without a broker. Not in `make fuzz-ci`: its seeds run with the tests, and FuzzPushBody makes the
// same comparison on every body it sends.
func FuzzPopWriter(f *testing.F) {
	for _, p := range payloads {
		f.Add([]byte(p), "x<y>&z\u2028")
	}
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		if _, err := comparePopEncoders(popResultOf(s, data)); err != nil {
			t.Fatal(err)
		}
	})
}
