package httpapi_test

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
)

// configureOptions lists the options configure accepts, read from engine.QueueOptions (the one place
// they are defined), with a value for each that is not its default.
func configureOptions(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	typ := reflect.TypeFor[engine.QueueOptions]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		require.NotEmpty(t, name, "option field %s has no JSON name", f.Name)
		switch f.Type.Elem().Kind() {
		case reflect.Bool:
			out[name] = true
		case reflect.Int32:
			out[name] = json.Number("7")
		default:
			t.Fatalf("option %s: a %s, which this test does not know how to set", name, f.Type)
		}
	}
	require.Len(t, out, typ.NumField())
	return out
}

// statusConfig reads a queue's configuration the way the dashboard's Configure dialog does.
func statusConfig(t *testing.T, b *testBundle, q string) (config map[string]any, namespace, task string) {
	t.Helper()
	var body struct {
		Queue struct {
			Namespace string         `json:"namespace"`
			Task      string         `json:"task"`
			Config    map[string]any `json:"config"`
		} `json:"queue"`
	}
	r := b.call(t, t.Context(), "GET", "/api/v1/status/queues/"+q, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r)
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&body))
	return body.Queue.Config, body.Queue.Namespace, body.Queue.Task
}

// TestConfigureRoundTrip: the status read returns every option configure accepts, and configuring a
// queue with what the read returned changes nothing (the dashboard's Configure and Purge do exactly
// that). Each option is walked alone, then all together.
func TestConfigureRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"QUEEN_ENCRYPTION_KEY": hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))})
	all := configureOptions(t)
	check := func(t *testing.T, set map[string]any) {
		q := uniqueName("roundtrip")
		res := configure(t, b.raw, map[string]any{"queue": q, "namespace": "ns", "task": "tk", "options": set})
		config, ns, task := statusConfig(t, b, q)
		require.Equal(t, []string{"ns", "tk"}, []string{ns, task})
		for name := range all {
			want, given := set[name]
			if !given {
				want = defaultOptions[name]
			}
			require.Equal(t, want, config[name], "option %s as read", name)
		}
		require.Equal(t, config["maxSize"], config["maxQueueSize"], "the original's name for maxSize")

		// Read → configure → read: the same configuration, the same queue.
		again := configure(t, b.raw, map[string]any{"queue": q, "namespace": ns, "task": task, "options": config})
		require.Equal(t, res["queueId"], again["queueId"])
		after, ns2, task2 := statusConfig(t, b, q)
		require.Equal(t, config, after)
		require.Equal(t, []string{ns, task}, []string{ns2, task2})
	}
	for name, v := range all {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, map[string]any{name: v})
		})
	}
	t.Run("every option", func(t *testing.T) {
		t.Parallel()
		check(t, all)
	})
}

// TestConfigureEmptyQueueName: the original's clients configure a queue named "" and expect it
// configured; only a missing, null or non-string queue is refused.
func TestConfigureEmptyQueueName(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	first := configure(t, b.raw, map[string]any{"queue": ""})
	second := configure(t, b.raw, map[string]any{"queue": "", "options": map[string]any{"leaseTime": 30}})
	require.Equal(t, first["queueId"], second["queueId"], "the same queue, configured again")
	require.Equal(t, json.Number("30"), second["options"].(map[string]any)["leaseTime"])
	for _, body := range []string{`{}`, `{"queue":null}`, `{"queue":5}`} {
		requireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body), http.StatusBadRequest, "queue is required")
	}
}

// TestSubscriptionModeCompat: the original clients send subscriptionMode=from_beginning for a named
// group, which means all; a value that is no mode at all stays a 400 naming the accepted ones.
func TestSubscriptionModeCompat(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	a := b.raw
	q := uniqueName("submode")
	a.pushTxs(q, "p", "before-1", "before-2")
	got := a.drain(q, "replayer", "subscriptionMode", "from_beginning")
	require.Equal(t, []string{"before-1", "before-2"}, got, "from the beginning")
	requireErrorText(t, b.call(t, t.Context(), "GET", popPath(q, "", "consumerGroup", "typo", "subscriptionMode", "nwe"), nil),
		http.StatusBadRequest, `subscriptionMode must be all, from_beginning, new or new-only, got "nwe"`)
}
