package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/queen-go/queen/internal/httpapi"
	"github.com/queen-go/queen/internal/testenv"
)

// The fuzz targets drive the real broker (real handler, real PostgreSQL) through a real listener with
// arbitrary request bodies and query strings. Whatever the input, the answer is never a 5xx and the
// broker never panics (a panic would surface as a 500 from the recovery middleware). Seeds live in
// testdata/fuzz/<target>; `make fuzz` runs each target for FUZZTIME, `make fuzz-ci` for 20 s.

// fuzzBroker starts one broker per fuzz worker process.
func fuzzBroker(f *testing.F) (string, *http.Client) {
	b := testenv.StartBroker(f, map[string]string{"DEFAULT_TIMEOUT": "0"})
	return b.URL, &http.Client{Timeout: 10 * time.Second}
}

func requireNo5xx(t *testing.T, hc *http.Client, method, u string, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, bytes.NewReader(body))
	if err != nil {
		return // not a request a client can send
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", method, u, err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, u, body, resp.StatusCode, out)
	}
}

func fuzzBody(f *testing.F, path string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	base, hc := fuzzBroker(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		requireNo5xx(t, hc, "POST", base+path, body)
	})
}

const fuzzPID = "0190d7a2-0000-7000-8000-000000000000"

// FuzzPushBody also checks, on every body, that the push route's own reader and writer
// (pushwire.go) and the pop answer's writer (popwire.go, with the body as a payload) agree with
// encoding/json.
func FuzzPushBody(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"queue":"fz","partition":"p","payload":{"a":1},"transactionId":"t1"}]}`,
		`{"items":[{"queue":"fz","payload":"\u0000"}]}`,
		`{"items":[{"queue":"fz","payload":1e999999,"traceId":"x"}]}`,
		`{"items":[]}`, `[]`, `{"items":[{"queue":"` + "\xff" + `"}]}`,
		`{"items":[{"queue":"fz","QUEUE":"x","transactionId":"a\"<b>"}],"items":[{"queue":"fz"}]}`,
		`{"x":[{"y":-1.5e3}],"items":[{"queue":"fz","traceId":"` + fuzzPID + `","payload":[true,null,"\u00e9"]},{"queue":"fz","partition":null}]}`,
	} {
		f.Add([]byte(s))
	}
	base, hc := fuzzBroker(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := httpapi.ComparePushCodecs(body); err != nil {
			t.Fatal(err)
		}
		if err := httpapi.ComparePopEncoders(body); err != nil {
			t.Fatal(err)
		}
		requireNo5xx(t, hc, "POST", base+"/api/v1/push", body)
	})
}

// FuzzAckBody also checks, on every body, that the ack routes' own reader (ackwire.go) agrees with
// encoding/json.
func FuzzAckBody(f *testing.F) {
	for _, s := range []string{
		`{"transactionId":"t1","partitionId":"` + fuzzPID + `","status":"completed"}`,
		`{"transactionId":"t1","partitionId":"` + fuzzPID + `","leaseId":"` + fuzzPID + `","status":"failed","error":"x"}`,
		`{"acknowledgments":[{"transactionId":"t1","partitionId":"` + fuzzPID + `","status":"retry"}],"consumerGroup":"g"}`,
		`{"transactionId":"\ud800","partitionId":"` + fuzzPID + `"}`,
	} {
		f.Add([]byte(s))
	}
	base, hc := fuzzBroker(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := httpapi.CompareAckReaders(body); err != nil {
			t.Fatal(err)
		}
		requireNo5xx(t, hc, "POST", base+"/api/v1/ack", body)
		requireNo5xx(t, hc, "POST", base+"/api/v1/ack/batch", body)
	})
}

func FuzzTransactionBody(f *testing.F) {
	fuzzBody(f, "/api/v1/transaction",
		`{"operations":[{"type":"push","items":[{"queue":"fz","payload":1}]},{"type":"ack","transactionId":"t","partitionId":"`+fuzzPID+`"}]}`,
		`{"operations":[{"type":"push","queue":"fz","data":{"x":[1,2]}}]}`,
		`{"operations":[]}`, `{"operations":[{"type":"nope"}]}`)
}

func FuzzConfigureBody(f *testing.F) {
	fuzzBody(f, "/api/v1/configure",
		`{"queue":"fz","namespace":"n","task":"t","options":{"leaseTime":30,"retryLimit":2,"maxSize":10,"priority":5}}`,
		`{"queue":"fz","options":{"leaseTime":-1,"ttl":2147483648}}`,
		`{"queue":"fz","options":{"encryptionEnabled":true,"deadLetterQueue":true,"windowBuffer":1e9}}`)
}

func FuzzPopQuery(f *testing.F) {
	for _, s := range []string{"batch=10&autoAck=true", "consumerGroup=g&subscriptionMode=new", "partitions=3&batch=0",
		"subscriptionFrom=2026-01-01T00:00:00Z&consumerGroup=x", "namespace=n&task=t", "timeout=-1", "batch=99999999999999999999"} {
		f.Add(s)
	}
	base, hc := fuzzBroker(f)
	f.Fuzz(func(t *testing.T, q string) {
		if err := httpapi.CompareQueryCheck(q); err != nil {
			t.Fatal(err)
		}
		// wait=false and a zero timeout come first, so the first value of each wins: never a long-poll.
		for _, path := range []string{"/api/v1/pop/queue/fz", "/api/v1/pop/queue/fz/partition/p", "/api/v1/pop"} {
			u, err := url.Parse(base + path)
			if err != nil {
				t.Fatal(err)
			}
			u.RawQuery = "wait=false&timeout=0&" + q
			requireNo5xx(t, hc, "GET", u.String(), nil)
		}
	})
}
