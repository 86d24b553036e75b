package httpapi_test

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
)

// TestPopAnswerIsWhatMarshalWrites: the pop answer on the wire, from a plain queue (payloads as
// PostgreSQL's jsonb prints them) and an encrypted one (payloads as the client sent them, whitespace
// and all), is byte for byte what json.Marshal writes for the answer it decodes to: compact, with
// <, >, &, U+2028 and U+2029 escaped. The ack answer too.
func TestPopAnswerIsWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	key := hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	a := newAPI(t, setup(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key}).rb.URL)
	configure(t, a, map[string]any{"queue": "wire-sealed", "namespace": "billing", "task": "invoice", "options": map[string]any{"encryptionEnabled": true}})
	payloads := []string{
		`{ "a" : [ 1 , 2.50 , -1e3 , true , null ] ,` + "\n\t" + `"b" : { "c" : "<b>&amp;</b>" } }`,
		`"line` + "\u2028" + `sep` + "\u2029" + ` \u2028 \u003c é ✓ 😀 \n \" \\"`,
		`[ ]`, `{ }`, `0`, `null`, `"<>&"`, `{"k<>&": [{"deep": [[["x"]]]}]}`,
	}
	for _, q := range []string{"wire-plain", "wire-sealed"} {
		items := make([]string, len(payloads))
		for i, p := range payloads {
			items[i] = `{"queue":"` + q + `","partition":"p<&>","transactionId":"tx<` + string(rune('a'+i)) + `>","payload":` + p + `}`
		}
		st, body := a.do("POST", "/api/v1/push", `{"items":[`+strings.Join(items, ",")+`]}`)
		require.Equal(t, http.StatusCreated, st, string(body))

		st, body = a.do("GET", "/api/v1/pop/queue/"+q+"?batch=20&consumerGroup="+url.QueryEscape("g<&>"), nil)
		require.Equal(t, http.StatusOK, st, string(body))
		var res engine.PopResult
		require.NoError(t, json.Unmarshal(body, &res))
		want, err := json.Marshal(&res)
		require.NoError(t, err)
		require.Equal(t, string(want), string(body), q)
		require.Len(t, res.Messages, len(payloads))
		acks := make([]map[string]any, len(res.Messages))
		for i, m := range res.Messages {
			require.JSONEq(t, payloads[i], string(m.Data), "%s message %d", q, i)
			acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID}
		}
		require.Contains(t, string(body), `"partition":"p\u003c\u0026\u003e"`)

		st, body = a.do("POST", "/api/v1/ack/batch", map[string]any{"consumerGroup": "g<&>", "acknowledgments": acks})
		require.Equal(t, http.StatusOK, st, string(body))
		var ack []engine.AckResult
		require.NoError(t, json.Unmarshal(body, &ack))
		want, err = json.Marshal(ack)
		require.NoError(t, err)
		require.Equal(t, string(want), string(body), q)
		for _, r := range ack {
			require.True(t, r.Success, "%s", body)
		}
	}
}
