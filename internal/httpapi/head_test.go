package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadNeverPops sends HEAD (with autoAck=true) to every pop route: each is a 404 like any method a
// route does not have, and the message is still there for the GET that follows.
func TestHeadNeverPops(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).rb
	a := newAPI(t, b.URL)
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": "headq", "namespace": "hns"})
	require.Equal(t, http.StatusOK, st, string(body))
	a.push(pushItem{Queue: "headq", Partition: "p", Payload: 1})
	for _, path := range []string{
		"/api/v1/pop/queue/headq?autoAck=true&wait=false",
		"/api/v1/pop/queue/headq/partition/p?autoAck=true&wait=false",
		"/api/v1/pop?namespace=hns&autoAck=true&wait=false",
	} {
		st, _ := a.do("HEAD", path, nil)
		require.Equal(t, http.StatusNotFound, st, path)
	}
	res := a.pop("/api/v1/pop/queue/headq?wait=false")
	require.NotNil(t, res, "HEAD consumed the message")
	require.Len(t, res.Messages, 1)
	// HEAD on a read-only GET still answers like GET without a body.
	st, _ = a.do("HEAD", "/api/v1/resources/queues", nil)
	require.Equal(t, http.StatusOK, st)
}
