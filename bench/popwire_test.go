package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Whenever the pop reader takes an answer, it reads what encoding/json reads; it takes the broker's
// usual answers.
func TestScanPopMessagesReadsWhatUnmarshalReads(t *testing.T) {
	for _, c := range []struct {
		answer string
		takes  bool
	}{
		{`{"success":true,"queue":"q","messages":[{"id":"a","transactionId":"t-1","partitionId":"p1","leaseId":"l","consumerGroup":"g","data":{"k":[1,"x"]},"partition":"P","retryCount":0,"createdAt":"2026-12-03T10:00:00.000000Z"}]}`, true},
		{` { "messages" : [ ] , "x" : null } `, true},
		{`{"messages":[{"transactionId":"a","data":"xx"},{"transactionId":"b","leaseId":null,"data":null}]}`, true},
		{`{"messages":null}`, false},
		{`{"messages":[{"transactionId":"a\u0041"}]}`, false},
		{`{"messages":[{"partition":"pä"}]}`, false},
		{`{"messages":[],"messages":[{"id":"b"}]}`, false},
		{`{"messages":[{"id":1}]}`, false},
		{`{"messages":[{"id":"a"}]`, false},
		{`[]`, false},
		{`{"Messages":[{"id":"b"}]}`, false},
		{`{"messages":[{"transactionId":"a","TransactionId":"b"}]}`, false},
		{`{"messages":[{"tr\u0061nsactionId":"b"}]}`, false},
		{`{"messages":[{"other":"x","ids":1}]}`, true},
	} {
		got, ok := scanPopMessages([]byte(c.answer), nil)
		if ok != c.takes {
			t.Errorf("%s: took %v, want %v", c.answer, ok, c.takes)
		}
		if !ok {
			continue
		}
		var want popResponse
		if err := json.Unmarshal([]byte(c.answer), &want); err != nil {
			t.Fatalf("%s: reader took it, encoding/json refuses it: %v", c.answer, err)
		}
		if len(got) != len(want.Messages) || len(got) > 0 && !reflect.DeepEqual(got, want.Messages) {
			t.Errorf("%s:\nreader       %+v\nencoding/json %+v", c.answer, got, want.Messages)
		}
	}
}

func TestScanAckResultsReadsWhatUnmarshalReads(t *testing.T) {
	for _, c := range []struct {
		answer string
		takes  bool
	}{
		{`[{"transactionId":"t-1","success":true,"error":null,"noop":false},{"transactionId":"t-2","success":false,"error":"lease expired"}]`, true},
		{` [ ] `, true},
		{`[{"success":true,"noop":true,"leaseReleased":true}]`, true},
		{`[{"success":"yes"}]`, false},
		{`[{"transactionId":"t\n"}]`, false},
		{`{}`, false},
		{`[{"SUCCESS":true}]`, false},
		{`[{"ſuccess":true}]`, false},
	} {
		got, ok := scanAckResults([]byte(c.answer), nil)
		if ok != c.takes {
			t.Errorf("%s: took %v, want %v", c.answer, ok, c.takes)
		}
		if !ok {
			continue
		}
		var want []ackResult
		if err := json.Unmarshal([]byte(c.answer), &want); err != nil {
			t.Fatalf("%s: reader took it, encoding/json refuses it: %v", c.answer, err)
		}
		if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nreader       %+v\nencoding/json %+v", c.answer, got, want)
		}
	}
}

// The ack body is the one encoding/json wrote for the consumers before.
func TestAppendAckBodyWritesWhatMarshalWrote(t *testing.T) {
	acks := []ackItem{
		{TransactionID: "bench-x-1", PartitionID: "0193e0f0-0000-7000-8000-000000000001", LeaseID: "l-1", Status: "completed"},
		{TransactionID: `odd "<&>" ä`, PartitionID: "p\n", Status: "completed"},
	}
	for _, group := range []string{"", "g01", "grüppe"} {
		body := map[string]any{"acknowledgments": acks}
		if group != "" {
			body["consumerGroup"] = group
		}
		want, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAckBody(nil, group, acks); string(got) != string(want) {
			t.Errorf("writer:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
