package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzScanPush: whatever scanPush reads, it reads as encoding/json does.
func FuzzScanPush(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"queue":"q","partition":"p","payload":{"a":[1,2,{"b":null}]}}]}`,
		` { "items" : [ { "queue" : "q" , "payload" : "x" } , {"queue":"r","data":3} ] } `,
		`{"items":[],"other":{"x":[true,false]}}`,
		`{"items":[{"queue":"q"}],"items":[{"queue":"r","payload":null}]}`,
		`{"items":[{"queue":"q","queue":"s","payload":1,"payload":[]}]}`,
		`{"Items":[{"queue":"q"}]}`,
		`{"items":[{"Queue":"q"}]}`,
		`{"items":[{"queue":"\u0071"}]}`,
		`{"items":[{"queue":"é"}]}`,
		`{"items":null}`,
		`{"items":[null]}`,
		`{"items":[{"queue":null}]}`,
		`{"items":[{"queue":1}]}`,
		`{"items":[{"queue":"q"}]} x`,
		`{"items":[{"queue":"q",}]}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := scanPush(body)
		if !ok {
			return
		}
		var want pushBody
		require.NoError(t, json.Unmarshal(body, &want), "scanPush read what encoding/json refuses: %q", body)
		require.Equal(t, len(want.Items), len(got.Items), "%q", body)
		for i := range want.Items {
			w, g := want.Items[i], got.Items[i]
			require.Equal(t, w.Queue, g.Queue, "%q", body)
			require.Equal(t, w.Partition, g.Partition, "%q", body)
			require.Equal(t, string(w.Payload), string(g.Payload), "%q", body)
			require.Equal(t, string(w.Data), string(g.Data), "%q", body)
		}
	})
}

func TestScanPushReadsTheCommonBody(t *testing.T) {
	pb, ok := scanPush([]byte(`{"items":[{"queue":"q","partition":"p","payload":{"n":1}},{"queue":"q","payload":"x"}]}`))
	require.True(t, ok)
	require.Len(t, pb.Items, 2)
	require.Equal(t, `{"n":1}`, string(pb.Items[0].Payload))
	require.Equal(t, "p", pb.Items[0].Partition)
}

// BenchmarkScanPush reads the body of a push of 10 items to one queue and partition, as the bench's
// push-b10 sends it.
func BenchmarkScanPush(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := range 10 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"queue":"bench-q","partition":"p3","payload":{"n":%d,"s":"xxxxxxxxxxxxxxxx"},"transactionId":"t-%d"}`, i, i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := scanPush(body); !ok {
			b.Fatal("not read")
		}
	}
}
