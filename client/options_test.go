package client_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/testenv"
)

// The SDK's options are exactly the ones configure accepts: an option added to the broker fails
// here until the SDK carries it.
func TestQueueOptionsAreConfiguresOptions(t *testing.T) {
	t.Parallel()
	var want []string
	et := reflect.TypeFor[engine.QueueOptions]()
	for i := range et.NumField() {
		name, _, _ := strings.Cut(et.Field(i).Tag.Get("json"), ",")
		want = append(want, name)
	}
	got := client.QueueOptionNames()
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got)
}

// everyOptionChanged sets every option to a value other than its default in def: a zero for an
// integer whose default is not zero, a distinct positive number otherwise, and booleans flipped.
// It walks the fields, so an option added later is covered without touching the test.
func everyOptionChanged(t *testing.T, def client.QueueOptions) client.QueueOptions {
	t.Helper()
	var out client.QueueOptions
	dv, ov := reflect.ValueOf(def), reflect.ValueOf(&out).Elem()
	for i := range ov.NumField() {
		d := dv.Field(i)
		require.False(t, d.IsNil(), "the read carries %s", client.QueueOptionNames()[i])
		switch d.Elem().Kind() {
		case reflect.Int:
			v := 0
			if d.Elem().Int() == 0 {
				v = 10 + i
			}
			ov.Field(i).Set(reflect.ValueOf(client.Int(v)))
		case reflect.Bool:
			ov.Field(i).Set(reflect.ValueOf(client.Bool(!d.Elem().Bool())))
		default:
			t.Fatalf("option %s has an unexpected type %s", client.QueueOptionNames()[i], d.Type())
		}
	}
	return out
}

// A configure with every option changed (zeros included) reads back as sent, and a read configured
// again changes nothing.
func TestBrokerQueueOptionsRoundTrip(t *testing.T) {
	t.Parallel()
	url := testenv.StartBroker(t, map[string]string{"FILE_BUFFER_DIR": t.TempDir(),
		"QUEEN_ENCRYPTION_KEY": strings.Repeat("ab", 32)}).URL
	c, err := client.New(client.Config{URLs: []string{url}})
	require.NoError(t, err)
	ctx := t.Context()
	q := c.Queue("roundtrip")

	_, err = q.Create(ctx)
	require.NoError(t, err)
	def, err := q.Options(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, *def.RetryLimit, "the defaults are read back")

	want := everyOptionChanged(t, def)
	_, err = q.Config(want).Create(ctx)
	require.NoError(t, err)
	got, err := q.Options(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = q.Config(got).Create(ctx)
	require.NoError(t, err)
	again, err := q.Options(ctx)
	require.NoError(t, err)
	require.Equal(t, got, again, "read → configure → read changes nothing")

	// Nothing given: every option is back at its default.
	_, err = q.Config(client.QueueOptions{}).Create(ctx)
	require.NoError(t, err)
	reset, err := q.Options(ctx)
	require.NoError(t, err)
	require.Equal(t, def, reset)

	_, err = c.Queue("never-configured").Options(ctx)
	require.True(t, client.IsNotFound(err), "%v", err)
}
