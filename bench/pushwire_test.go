package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The push body a producer writes is the one encoding/json wrote for it before.
func TestPushWriterWritesWhatMarshalWrote(t *testing.T) {
	for _, c := range []struct {
		queue, prefix, part string
		payload             string
	}{
		{"bench-abc-push-b10", "abcq-push-b10-3", "p000001", `"xxxxxxxxxxxxxxxxxxxxxxxxxx"`},
		{"q<&>", `pre"fix`, "päärt", ` { "a" : [1, 2.5, true, null] } `},
		{"q", "p", "", `null`},
	} {
		w, err := newPushWriter(c.queue, json.RawMessage(c.payload), c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 3} {
			var items []pushItem
			for i := range n {
				items = append(items, pushItem{Queue: c.queue, Partition: c.part, Payload: json.RawMessage(c.payload),
					TransactionID: fmt.Sprintf("%s-%d", c.prefix, 98+i)})
			}
			want, err := json.Marshal(map[string]any{"items": items})
			if err != nil {
				t.Fatal(err)
			}
			if got := w.body(nil, c.part, 98, n); string(got) != string(want) {
				t.Errorf("writer:\n%s\njson.Marshal:\n%s", got, want)
			}
		}
	}
	if _, err := newPushWriter("q", json.RawMessage(`{`), "p"); err == nil {
		t.Error("a payload that is not JSON must be refused")
	}
}

// checkPushStatuses: whenever the reader takes an answer, it reads what encoding/json reads.
func checkPushStatuses(t *testing.T, answer []byte) bool {
	got, ok := scanPushStatuses(answer, nil)
	if !ok {
		return false
	}
	var want []pushResult
	if err := json.Unmarshal(answer, &want); err != nil {
		t.Fatalf("reader took %q, encoding/json refuses it: %v", answer, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer %q: reader %#v, encoding/json %#v", answer, got, want)
	}
	return true
}

var pushAnswerSeeds = []string{
	`[{"index":0,"transaction_id":"a-1","status":"queued","message_id":"0190d7a2-0000-7000-8000-000000000000","partition_id":"0190d7a2-0000-7000-8000-000000000001","trace_id":null,"queueName":"q"}]`,
	`[{"index":0,"transaction_id":"a","status":"duplicate","message_id":"m","queueName":"q"},{"index":1,"transaction_id":"b","status":"failed","queueName":"q","queue":"q","partition":"p","error":"queue q is full: \u003c\u003e"}]`,
	` [ { "status" : "queued" , "x" : [ 1 , -2.5e+3 , { "y" : [ ] } , true , false ] } ] `,
	`[]`, `[{"status":"buffered","error":null},{"status":"queued","error":"a\"b"}]`,
	`[{"status":"queued","status":"failed"}]`, `[{"Status":"queued"}]`, `[{"status":null}]`, `[{"status":1}]`,
	`[{"status":"queued","error":5}]`, `[{"status":"queued"}`, `[{"status":"queued"},]`, `[{"status":"qu\u0065ued"}]`,
	`[{"status":"queued"}] x`, `{"error":"nope"}`, `[{"status":"queued","n":01}]`, `[{"status":"queued","n":tru}]`,
}

func TestScanPushStatusesMatchesUnmarshal(t *testing.T) {
	taken := 0
	for _, a := range pushAnswerSeeds {
		if checkPushStatuses(t, []byte(a)) {
			taken++
		}
	}
	if taken < 5 {
		t.Errorf("the reader took only %d of the answers", taken)
	}
	for _, a := range []string{`[{"Status":"queued"}]`, `[{"status":null}]`, `[{"status":"queued","error":5}]`, `[{"status":"queued"},]`} {
		if _, ok := scanPushStatuses([]byte(a), nil); ok {
			t.Errorf("the reader must leave %s to encoding/json", a)
		}
	}
}

// FuzzScanPushStatuses runs its seeds with the package's tests (it is not one of the CI fuzz targets).
func FuzzScanPushStatuses(f *testing.F) {
	for _, a := range pushAnswerSeeds {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, answer []byte) { checkPushStatuses(t, answer) })
}

// The stream records of the producers and the maps of any other transactionId verify alike.
func TestTrackerStreamsVerifyLikeMaps(t *testing.T) {
	run := func(streams bool) Verification {
		tr := newTracker("g1", "g2")
		sent := time.Now()
		if streams {
			s := tr.stream("run-push-0")
			tr.pushedSeqs(s, sent, 0, []bool{true, true, true, false})
			tr.pushedSeqs(s, sent, 4, []bool{true, true})
		} else {
			tr.pushed(sent, "run-push-0-0", "run-push-0-1", "run-push-0-2", "run-push-0-4", "run-push-0-5")
			tr.maybePushed("run-push-0-3")
		}
		if got := tr.pushedCount(); got != 5 {
			t.Fatalf("streams=%v: pushed %d", streams, got)
		}
		// g1: 0 twice, 1, 3 (in doubt: fine), 4, 5, plus one id nobody pushed; 2 is missing.
		at := tr.acked("g1", []string{"run-push-0-0", "run-push-0-1", "run-push-0-0"}, nil)
		if at[0].IsZero() || !at[0].Equal(at[2]) {
			t.Fatalf("streams=%v: push instants %v", streams, at)
		}
		tr.acked("g1", []string{"run-push-0-3", "run-push-0-4", "run-push-0-5", "run-push-0-99", "other-7"}, nil)
		// g2: everything queued once.
		tr.acked("g2", []string{"run-push-0-0", "run-push-0-1", "run-push-0-2", "run-push-0-4", "run-push-0-5"}, nil)
		if b := tr.backlog(); b != 0 {
			t.Fatalf("streams=%v: backlog %d (every group consumed as many distinct ids as were queued)", streams, b)
		}
		v := tr.verify("q")
		slices.Sort(v.Sample)
		return v
	}
	s, m := run(true), run(false)
	want := Verification{Queue: "q", Groups: 2, Pushed: 5, Consumed: 12, Missing: 1, Duplicates: 1, Unexpected: 2, InDoubt: 1,
		Sample: []string{"duplicate g1/run-push-0-0", "missing g1/run-push-0-2"}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("maps: %+v\nwant %+v", m, want)
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("streams: %+v\nwant %+v", s, want)
	}
	// An id that only looks like one of a stream stays in the maps both ways.
	tr := newTracker("")
	tr.stream("p")
	tr.pushed(time.Now(), "p-007", "p-x", "p-")
	tr.acked("", []string{"p-007", "p-x", "p-"}, nil)
	if v := tr.verify("q"); !v.OK || v.Pushed != 3 || v.Consumed != 3 || !strings.HasPrefix(v.Queue, "q") {
		t.Errorf("ids outside the stream form: %+v", v)
	}
}
