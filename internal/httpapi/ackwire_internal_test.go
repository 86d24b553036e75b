package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/jsonguard"
	"github.com/queen-go/queen/internal/jsonscan"
)

// ackOutcome is what an ack route makes of a body before calling the engine: the items, or the error.
type ackOutcome struct {
	items []engine.AckItem
	err   error
}

func (o ackOutcome) String() string {
	if o.err != nil {
		return "error " + o.err.Error()
	}
	return fmt.Sprintf("%+v", o.items)
}

// compareAckReaders checks the ack routes' own reader against the general path on one body, for both
// routes: when the reader takes the body, the general path must give the same items or the same
// error. fast: the reader took it as a batch body.
func compareAckReaders(b []byte) (fast bool, err error) {
	single := func(a rawAck) ackOutcome {
		it, err := a.toItem("transactionId is required", "partitionId is required to ensure message uniqueness")
		if err != nil {
			return ackOutcome{err: err}
		}
		return ackOutcome{items: []engine.AckItem{it}}
	}
	if a, ok := scanAck(b); ok {
		var ref rawAck
		if err := parseBody(b, &ref); err != nil {
			return false, fmt.Errorf("reader took %q as one ack, the general path refuses it: %v", b, err)
		}
		if got, want := single(a), single(ref); !reflect.DeepEqual(got, want) {
			return false, fmt.Errorf("one ack %q: reader gives %v, the general path %v", b, got, want)
		}
	}
	items, fast, ferr := fastAckBatch(b, 0)
	if !fast {
		return false, nil
	}
	want, werr := parseAckBatch(b)
	if got, want := (ackOutcome{items, ferr}), (ackOutcome{want, werr}); !reflect.DeepEqual(got, want) {
		return true, fmt.Errorf("batch %q: reader gives %v, the general path %v", b, got, want)
	}
	return true, nil
}

const ackPID = "0190d7a2-0000-7000-8000-000000000000"

func TestFastAckReaderMatchesTheGeneralPath(t *testing.T) {
	one := `{"transactionId":"t1","partitionId":"` + ackPID + `","leaseId":"l","status":"completed"}`
	taken := []string{
		`{"acknowledgments":[` + one + `]}`,
		`{"consumerGroup":"g","acknowledgments":[` + one + `,{"transactionId":"t2","partitionId":"` + ackPID + `","status":"failed","error":"boom <&>"}]}`,
		` { "acknowledgments" : [ { "transactionId" : "t" , "partitionId" : "` + ackPID + `" } ] , "consumerGroup" : null } ` + "\n",
		`{"acknowledgments":[],"consumerGroup":"g"}`,
		`{"x":{"y":[1,{"z":"\u00e9"}]},"acknowledgments":[{"transactionId":"\u00e9t\u00e9","partitionId":"` + ackPID + `","extra":[null]}],"more":-0.5E+3}`,
		`{"acknowledgments":[{"transactionId":"a","transactionId":"b","partitionId":"` + ackPID + `","consumerGroup":"own"}],"consumerGroup":"x","consumerGroup":"g"}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + strings.ToUpper(ackPID) + `","error":{"any":["json"]}}]}`,
		// Bodies the reader takes whose error the shared checks word, in the general path's order.
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `"}],"consumerGroup":7}`,
		`{"acknowledgments":[{"partitionId":"` + ackPID + `"}]}`, `{"acknowledgments":[{"transactionId":"t"}]}`,
		`{"acknowledgments":[{"transactionId":"","partitionId":"` + ackPID + `"}]}`, `{"acknowledgments":[{"transactionId":1,"partitionId":"x"}]}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"nope"}]}`, `{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `","status":"weird"}]}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `","leaseId":5}]}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `","status":"failed","error":false}]}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `","consumerGroup":[]}]}`,
		`{"acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `"},{"transactionId":null,"partitionId":"` + ackPID + `"}]}`,
	}
	for _, b := range taken {
		fast, err := compareAckReaders([]byte(b))
		require.NoError(t, err)
		require.True(t, fast, "the fast reader should take %s", b)
	}
	// Bodies the reader must leave to the general path (which words their errors, or reads a shape the
	// reader does not): none may come out different.
	left := []string{
		``, `null`, `[]`, `{}`, `"x"`, `{"acknowledgments":null}`, `{"acknowledgments":{}}`, `{"acknowledgments":"x"}`,
		`{"acknowledgments":[null]}`, `{"acknowledgments":[1]}`, `{"acknowledgments":[` + one + `,[]]}`,
		`{"Acknowledgments":[` + one + `]}`, `{"acknowledgments":[{"TransactionId":"t","partitionId":"` + ackPID + `"}]}`,
		`{"acknowledgments":[` + one + `],"acknowledgments":[]}`, `{"acknowledgments":[{"transaction\u0049d":"t"}]}`,
		`{"acknowledgments":[` + one + `]} x`, `{"acknowledgments":[` + one + `]`, `{"acknowledgments":[` + one + `,]}`,
		`{"acknowledgments":[{"transactionId":"t",}]}`, `{"acknowledgments":[` + one + `],}`, `{,"acknowledgments":[]}`,
		`{"acknowledgments":[{"transactionId":"t","status":"` + strings.Repeat("x", jsonguard.MaxName+1) + `"}]}`,
		`{"acknowledgments":[{"transactionId":"t","error":"\u0000"}]}`, `{"consumerGroup":"` + strings.Repeat("g", jsonguard.MaxName+1) + `","acknowledgments":[]}`,
		`{"x":1e999999,"acknowledgments":[]}`, `{"acknowledgments":[{"transactionId":"bad` + "\xff" + `"}]}`,
		`{"acknowledgments":[{"ſtatus":"x"}]}`, "\ufeff" + `{"acknowledgments":[]}`,
		`{"x":` + strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth) + `,"acknowledgments":[]}`,
	}
	for _, b := range left {
		fast, err := compareAckReaders([]byte(b))
		require.NoError(t, err)
		require.False(t, fast, "the fast reader should leave %s to the general path", b)
	}
}

// TestFastAckReaderOneAck: the single-ack route's reader takes the common bodies and leaves the rest.
func TestFastAckReaderOneAck(t *testing.T) {
	for _, b := range []string{
		`{"transactionId":"t1","partitionId":"` + ackPID + `","leaseId":"l","status":"completed","consumerGroup":"g"}`,
		` {"transactionId":"t1","partitionId":"` + ackPID + `","status":"failed","error":"x","other":[1]} `, `{}`,
		`{"transactionId":"t1","partitionId":"nope"}`, `{"transactionId":3}`,
	} {
		_, ok := scanAck([]byte(b))
		require.True(t, ok, "the reader should take %s", b)
		_, err := compareAckReaders([]byte(b))
		require.NoError(t, err)
	}
	for _, b := range []string{``, `null`, `[]`, `{"TransactionId":"t"}`, `{"transactionId":"` + strings.Repeat("x", jsonguard.MaxName+1) + `"}`, `{} {}`} {
		_, ok := scanAck([]byte(b))
		require.False(t, ok, "the reader should leave %s to the general path", b)
		_, err := compareAckReaders([]byte(b))
		require.NoError(t, err)
	}
}

func TestAckAnswerWriterMatchesMarshal(t *testing.T) {
	for _, s := range []string{"", "tx-1", uuid.NewString(), `quote"back\slash`, "<tag>&amp;", "tab\tnl\n\x00", "héllo\u2028", "bad\xffutf8"} {
		res := []engine.AckResult{
			{Index: 0, TransactionID: s, Success: true, QueueName: &s, PartitionName: &s},
			{Index: 12, TransactionID: s, Error: &s, LeaseReleased: true, DLQ: true, Noop: true},
			{},
		}
		want, err := json.Marshal(res)
		require.NoError(t, err)
		require.Equal(t, string(want), string(must(engine.AckResults(res).AppendJSON(nil))))
	}
	require.Equal(t, "[]", string(must(engine.AckResults{}.AppendJSON(nil))))
}

// FuzzAckReader compares the ack routes' reader with the general path without a broker. Not in
// `make fuzz-ci`: its seeds run with the tests, and FuzzAckBody makes the same comparison on every
// body it sends.
func FuzzAckReader(f *testing.F) {
	f.Add([]byte(`{"consumerGroup":"g","acknowledgments":[{"transactionId":"t","partitionId":"` + ackPID + `","status":"retry","error":"e"}]}`))
	f.Add([]byte(`{"transactionId":"t","partitionId":"` + ackPID + `","leaseId":null,"x":{"y":[1.5e3]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := compareAckReaders(b); err != nil {
			t.Fatal(err)
		}
	})
}

// must is the text of an encoder that writes every value itself.
func must(b []byte, ok bool) []byte {
	if !ok {
		panic("the encoder gave up")
	}
	return b
}
