package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// envelopeError is the text of an error envelope.
func envelopeError(t *testing.T, body string) string {
	t.Helper()
	var env struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &env), body)
	return env.Error
}

// TestEdgeValidationNamesTheField sends input PostgreSQL would refuse (NUL, invalid UTF-8, lone
// surrogates, numbers it would expand or overflow, identifiers past 255 bytes) to every body route:
// each is a 400 "bad body: <field>: …", and nothing reaches the database.
func TestEdgeValidationNamesTheField(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	long := strings.Repeat("t", 3000)
	pid := "0190d7a2-0000-7000-8000-000000000000"
	bad := []struct{ path, body, field string }{
		{"/api/v1/push", `{"items":[{"queue":"q","payload":{"s":"a\u0000b"}}]}`, "items[0].payload.s"},
		{"/api/v1/push", "{\"items\":[{\"queue\":\"q\",\"payload\":\"\xff\xfe\"}]}", "items[0].payload"},
		{"/api/v1/push", `{"items":[{"queue":"q","payload":["\ud800"]}]}`, "items[0].payload[0]"},
		{"/api/v1/push", `{"items":[{"queue":"q","payload":{"n":1e999999}}]}`, "items[0].payload.n"},
		{"/api/v1/push", `{"items":[{"queue":"q","payload":{"n":1e130000}}]}`, "items[0].payload.n"},
		{"/api/v1/push", `{"items":[{"queue":"q","transactionId":"` + long + `","payload":1}]}`, "items[0].transactionId"},
		{"/api/v1/push", `{"items":[{"queue":"q\u0000","payload":1}]}`, "items[0].queue"},
		{"/api/v1/push", `{"items":[{"queue":"q","partition":"` + long + `","payload":1}]}`, "items[0].partition"},
		{"/api/v1/ack", `{"transactionId":"` + long + `","partitionId":"` + pid + `"}`, "transactionId"},
		{"/api/v1/ack", `{"transactionId":"a\u0000","partitionId":"` + pid + `"}`, "transactionId"},
		{"/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":"x","partitionId":"` + pid + `","leaseId":"\udc00"}]}`, "acknowledgments[0].leaseId"},
		{"/api/v1/ack/batch", `{"consumerGroup":"` + long + `","acknowledgments":[]}`, "consumerGroup"},
		{"/api/v1/transaction", `{"operations":[{"type":"push","queue":"q","data":{"x":"\u0000"}}]}`, "operations[0].data.x"},
		{"/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"q","payload":1e-99999}]}]}`, "operations[0].items[0].payload"},
		{"/api/v1/transaction", `{"operations":[{"type":"ack","transactionId":"` + long + `","partitionId":"` + pid + `"}]}`, "operations[0].transactionId"},
		{"/api/v1/configure", `{"queue":"` + long + `"}`, "queue"},
		{"/api/v1/configure", `{"queue":"q","namespace":"\u0000"}`, "namespace"},
		{"/api/v1/configure", `{"queue":"q","options":{"leaseTime":1e999999}}`, "options.leaseTime"},
		{"/api/v1/traces", `{"transactionId":"x","partitionId":"` + pid + `","data":{"k":"\ud800"}}`, "data.k"},
		{"/api/v1/consumer-groups/g/subscription", `{"subscriptionTimestamp":"\u0000"}`, "subscriptionTimestamp"},
		{"/api/v1/lease/" + pid + "/extend", `{"seconds":1e999999}`, "seconds"},
	}
	for _, c := range bad {
		r := b.call(t, t.Context(), "POST", c.path, c.body)
		st, body := r.status, string(r.body)
		require.Equal(t, http.StatusBadRequest, st, "%s %.120s: %s", c.path, c.body, body)
		msg := envelopeError(t, body)
		require.True(t, strings.HasPrefix(msg, "bad body: "+c.field+":") || strings.HasPrefix(msg, "bad body: "+c.field+" "),
			"%s: want the field %q named, got %q", c.path, c.field, msg)
	}
	// Path parameters and query values: the same limits.
	badURLs := []string{
		"/api/v1/pop/queue/a%00b",
		"/api/v1/pop/queue/a%ffb",
		"/api/v1/pop/queue/" + strings.Repeat("q", 300),
		"/api/v1/pop/queue/q/partition/" + strings.Repeat("p", 300),
		"/api/v1/pop/queue/q?consumerGroup=%00",
		"/api/v1/pop?namespace=%ff",
		"/api/v1/resources/queues/" + strings.Repeat("q", 300),
		"/api/v1/messages/" + pid + "/" + long,
		"/api/v1/consumer-groups/%00",
		"/api/v1/traces/by-name/%ff",
	}
	for _, u := range badURLs {
		r := b.call(t, t.Context(), "GET", u, nil)
		st, body := r.status, string(r.body)
		require.Equal(t, http.StatusBadRequest, st, "%.80s: %s", u, body)
		msg := envelopeError(t, body)
		require.True(t, strings.HasPrefix(msg, "bad path: ") || strings.HasPrefix(msg, "bad query: "), "%.80s: %q", u, msg)
	}
	// The queue was never created: none of it reached PostgreSQL.
	r := b.call(t, t.Context(), "GET", "/api/v1/resources/queues/q", nil)
	st, body := r.status, string(r.body)
	require.Equal(t, http.StatusNotFound, st, body)
}

// TestServerErrorBodyHidesDatabaseText breaks the database under the broker: the 500 body names the
// operation and a request id (also in X-Request-Id), never a table, index or driver message.
func TestServerErrorBodyHidesDatabaseText(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[{"queue":"q","payload":1}]}`)
	st, body := r.status, string(r.body)
	require.Equal(t, http.StatusCreated, st, body)
	conn, err := pgx.Connect(context.Background(), b.rb.DatabaseURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `ALTER TABLE queenmq.messages RENAME TO messages_gone`)
	require.NoError(t, err)

	r = b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[{"queue":"q","payload":2}]}`)
	st, body, rid := r.status, string(r.body), r.header.Get("X-Request-Id")
	require.Equal(t, http.StatusInternalServerError, st, body)
	require.NotEmpty(t, rid)
	var env struct {
		Error     string `json:"error"`
		RequestID string `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &env))
	require.Equal(t, rid, env.RequestID)
	require.Equal(t, "push failed: internal error (request "+rid+")", env.Error)
	for _, leak := range []string{"messages", "relation", "queenmq", "SQLSTATE", "postgres"} {
		require.NotContains(t, body, leak)
	}
}
