package client_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
)

// wireDir holds the broker's golden answers (internal/httpapi TestWireGolden writes them).
var wireDir = filepath.Join("..", "testdata", "wire")

// denormalize turns the golden files' placeholders back into values of their type, so that a typed
// decode sees what the broker sends: a measured number, an id, an instant.
var denormalize = strings.NewReplacer(
	`"<number>"`, `0`,
	`"<uuid>"`, `"00000000-0000-0000-0000-000000000000"`,
	`"<time>"`, `"2026-01-01T00:00:00Z"`,
	`"<string>"`, `"x"`,
)

// golden reads one golden file with its placeholders replaced; under is the top-level key the SDK
// unwraps ("" for the whole answer).
func golden(t *testing.T, name, under string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(wireDir, name+".json"))
	require.NoError(t, err)
	// The files are written by json.MarshalIndent, which escapes < and >.
	raw = bytes.ReplaceAll(bytes.ReplaceAll(raw, []byte(`\u003c`), []byte("<")), []byte(`\u003e`), []byte(">"))
	raw = []byte(denormalize.Replace(string(raw)))
	if under == "" {
		return raw
	}
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m), name)
	require.Contains(t, m, under, name)
	return m[under]
}

// strictRoundTrip decodes wire into out refusing unknown fields (a field the broker sends that the
// SDK type lacks), then encodes out again and requires every key of that encoding in the wire: a
// field the SDK type declares that the broker does not send fails too, unless absent names it (its
// key path, like "messages.completed", with array indexes left out).
func strictRoundTrip(t *testing.T, name string, wire []byte, out any, absent []string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(wire))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(out), "%s: the broker sends a field the SDK type does not declare", name)
	again, err := json.Marshal(out)
	require.NoError(t, err)
	var sent, declared any
	require.NoError(t, json.Unmarshal(wire, &sent))
	require.NoError(t, json.Unmarshal(again, &declared))
	var missing []string
	missingKeys(sent, declared, "", &missing)
	for _, k := range missing {
		if !slices.Contains(absent, k) {
			t.Errorf("%s: the SDK type declares %q, which the broker does not send", name, k)
		}
	}
}

// missingKeys appends the key paths of declared that sent lacks.
func missingKeys(sent, declared any, path string, out *[]string) {
	switch d := declared.(type) {
	case map[string]any:
		s, _ := sent.(map[string]any)
		for k, v := range d {
			p := strings.TrimPrefix(path+"."+k, ".")
			sv, ok := s[k]
			if !ok {
				if !slices.Contains(*out, p) {
					*out = append(*out, p)
				}
				continue
			}
			missingKeys(sv, v, p, out)
		}
	case []any:
		s, _ := sent.([]any)
		for i, v := range d {
			if i < len(s) {
				missingKeys(s[i], v, path, out)
			}
		}
	}
}

// TestWireGoldenDecodes keeps the SDK's typed answers and the broker's wire in step: every golden
// file of a route the SDK decodes into its own types is decoded into them, strictly.
func TestWireGoldenDecodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, under string
		out         func() any
		absent      []string // fields of the SDK type this route does not send
	}{
		{"resources-queues", "queues", func() any { return new([]client.QueueSummary) },
			// The listing reads the rolled-up counts, which do not count failed deliveries.
			[]string{"messages.failed"}},
		{"resources-queue", "", func() any { return new(client.QueueDetail) }, nil},
		{"dlq", "", func() any { return new(client.DLQPage) }, nil},
		{"dlq-item", "", func() any { return new(client.DLQMessage) }, nil},
		{"consumer-groups", "", func() any { return new([]client.ConsumerGroupSummary) }, nil},
		{"consumer-groups-lagging", "", func() any { return new([]client.LaggingPartition) }, nil},
		{"consumer-group", "", func() any {
			return new(map[string]struct {
				Partitions []client.GroupPartition `json:"partitions"`
			})
		}, nil},
		// The message explains a switch: only the POST answer carries it.
		{"system-maintenance", "", func() any { return new(client.MaintenanceStatus) }, []string{"message"}},
		{"system-maintenance-pop", "", func() any { return new(client.PopMaintenanceStatus) }, []string{"message"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			strictRoundTrip(t, c.file, golden(t, c.file, c.under), c.out(), c.absent)
		})
	}
}
