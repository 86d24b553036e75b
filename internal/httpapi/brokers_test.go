package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// followWithin bounds how long a broker may take to act on another broker's change: a NOTIFY takes
// milliseconds, and the caches it replaces trusted their entries for 5 s (maxSize) and 10 s
// (subscriptions), so a test that passes within it was not saved by a TTL running out.
const followWithin = 3 * time.Second

// TestChangesReachOtherBrokers: two brokers on one database. What one caches about a queue or a group
// is dropped as soon as the other configures or deletes it (docs/decisions.md, "Changes across
// brokers"), not when the cached entry expires.
func TestChangesReachOtherBrokers(t *testing.T) {
	t.Parallel()
	one := setup(t, nil)
	two := setup(t, map[string]string{"DATABASE_URL": one.rb.DatabaseURL})
	apis := func(t *testing.T) (*api, *api) { return newAPI(t, one.rb.URL), newAPI(t, two.rb.URL) }

	t.Run("QueueDeletedAndRecreated", func(t *testing.T) {
		t.Parallel()
		a, b := apis(t)
		q, g := uniqueName("recreated"), uniqueName("g")
		a.pushTxs(q, "", "old")
		b.popOne(popPath(q, "", "consumerGroup", g)) // b records g's subscription and remembers it
		a.json("DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, nil)
		// The push re-creates the queue with no subscription: only a pop that records g's again seeds
		// g's work on it, and b does so only once it forgot the old one.
		a.pushTxs(q, "", "new")
		drainWithin(t, b, q, g, "new")
	})

	t.Run("GroupDeleted", func(t *testing.T) {
		t.Parallel()
		a, b := apis(t)
		q, g := uniqueName("regrouped"), uniqueName("g")
		a.pushTxs(q, "", "m1")
		require.Equal(t, []string{"m1"}, b.drain(q, g))
		a.json("DELETE", "/api/v1/consumer-groups/"+g+"?deleteMetadata=true", nil, http.StatusOK, nil)
		// The delete leaves g's work on the partitions it had read, so m2 goes to another partition:
		// only g's subscription, recorded again (from the beginning), makes b find it.
		a.pushTxs(q, "other", "m2")
		drainWithin(t, b, q, g, "m1", "m2")
	})

	t.Run("QueueConfigured", func(t *testing.T) {
		t.Parallel()
		a, b := apis(t)
		q := uniqueName("limited")
		b.pushTxs(q, "", "m1") // b caches that q has no maxSize
		a.json("POST", "/api/v1/configure", map[string]any{"queue": q, "options": map[string]any{"maxSize": 1}}, http.StatusOK, nil)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			res := b.push(pushItem{Queue: q, Payload: "more"})
			assert.Equal(c, "failed", res[0].Status, "b still takes pushes past the new maxSize")
		}, followWithin, 20*time.Millisecond)
	})
}

// drainWithin drains q for group through a until it has consumed want, for up to followWithin.
func drainWithin(t *testing.T, a *api, q, group string, want ...string) {
	t.Helper()
	var got []string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got = append(got, a.drain(q, group)...)
		assert.Equal(c, sorted(want), sorted(got), "what %s consumed of %s", group, q)
	}, followWithin, 20*time.Millisecond)
}
