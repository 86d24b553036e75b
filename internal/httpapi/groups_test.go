package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------------------------------
// Consumer groups and subscriptions
// ---------------------------------------------------------------------------------------------------

func TestConsumerGroups(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("FanOutToGroupsCompetitionInQueueMode", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("fan")
		var all []string
		for i := range 4 {
			tx := fmt.Sprintf("f%d", i)
			smPush(t, a, q, fmt.Sprintf("p%d", i), tx)
			all = append(all, tx)
		}
		// Every group sees every message.
		for _, g := range []string{smName("g1"), smName("g2")} {
			require.Equal(t, all, smSorted(smDrain(t, a, q, g)), "group %s", g)
		}
		// Queue-mode consumers compete: each pop claims a partition the others cannot get, so no
		// message goes to two of them.
		var got []smMessage
		for range 4 {
			got = append(got, smOne(t, a, smPopPath(q, "")))
		}
		smNoMessage(t, a, smPopPath(q, ""))
		var txs []string
		leases := map[string]bool{}
		for _, m := range got {
			txs = append(txs, m.TransactionID)
			leases[m.LeaseID] = true
		}
		require.Equal(t, all, smSorted(txs))
		require.Len(t, leases, 4)
		for _, m := range got {
			smAckOK(t, a, m, "completed", "")
		}
		smNoMessage(t, a, smPopPath(q, ""))
	})

	for _, opt := range [][2]string{{"subscriptionMode", "new"}, {"subscriptionMode", "new-only"}, {"subscriptionFrom", "now"}} {
		t.Run("SkipBacklog_"+opt[0]+"="+opt[1], func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, base)
			q, g := smName("new"), smName("gnew")
			smPush(t, a, q, "", "b1")
			smPush(t, a, q, "other", "b2")
			smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, opt[0], opt[1]))
			smPush(t, a, q, "", "n1")
			smPush(t, a, q, "other", "n2")
			smPush(t, a, q, "fresh", "n3") // a partition created after the subscription
			require.Equal(t, []string{"n1", "n2", "n3"}, smSorted(smDrain(t, a, q, g, opt[0], opt[1])))
			// The backlog is still there for a group that starts from the beginning.
			require.Equal(t, []string{"b1", "b2", "n1", "n2", "n3"}, smSorted(smDrain(t, a, q, smName("gall"))))
		})
	}

	t.Run("SubscriptionFromTimestamp", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("from"), smName("gfrom")
		smPush(t, a, q, "", "m1")
		ts := smInstant()
		smPush(t, a, q, "", "m2")
		require.Equal(t, []string{"m2"}, smDrain(t, a, q, g, "subscriptionFrom", ts))
		smPush(t, a, q, "", "m3")
		require.Equal(t, []string{"m3"}, smDrain(t, a, q, g, "subscriptionFrom", ts))
	})

	t.Run("FirstSubscriptionWins", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("first"), smName("gfirst")
		smPush(t, a, q, "", "old")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		// Later pops with other options change nothing: the backlog stays skipped.
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "all"))
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionFrom", "2000-01-01T00:00:00Z"))
		smPush(t, a, q, "", "later")
		require.Equal(t, []string{"later"}, smDrain(t, a, q, g, "subscriptionMode", "all"))
		e := smGroupEntry(t, a, g, q)
		require.NotNil(t, e.SubscriptionMode)
		require.Equal(t, "new", *e.SubscriptionMode)
	})

	t.Run("BadSubscriptionOptions", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("bad"), smName("gbad")
		smPush(t, a, q, "", "x")
		msg := smError(t, a, "GET", smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "sometimes"), nil, http.StatusBadRequest)
		require.Contains(t, msg, "subscriptionMode")
		msg = smError(t, a, "GET", smPopPath(q, "", "consumerGroup", g, "subscriptionFrom", "yesterday"), nil, http.StatusBadRequest)
		require.Contains(t, msg, "subscriptionFrom")
		// Nothing was recorded or consumed by the refused pops.
		require.Equal(t, []string{"x"}, smDrain(t, a, q, g))
	})
}

func TestDefaultSubscriptionMode(t *testing.T) {
	t.Parallel()
	base := smStart(t, map[string]string{"DEFAULT_SUBSCRIPTION_MODE": "new"})
	a := newAPI(t, base)
	q, g := smName("defnew"), smName("gdef")
	smPush(t, a, q, "", "m1")
	smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g))
	smPush(t, a, q, "", "m2")
	require.Equal(t, []string{"m2"}, smDrain(t, a, q, g))
	// An explicit mode overrides the default; queue mode always starts from the beginning.
	require.Equal(t, []string{"m1", "m2"}, smDrain(t, a, q, smName("gall"), "subscriptionMode", "all"))
	require.Equal(t, []string{"m1", "m2"}, smDrain(t, a, q, ""))
}

// ---------------------------------------------------------------------------------------------------
// Consumer-group routes
// ---------------------------------------------------------------------------------------------------

type smGroupQueue struct {
	Name              string   `json:"name"`
	Topics            []string `json:"topics"`
	QueueName         string   `json:"queueName"`
	Members           int      `json:"members"`
	PartitionsWithLag int      `json:"partitionsWithLag"`
	State             string   `json:"state"`
	SubscriptionMode  *string  `json:"subscriptionMode"`
}

func smGroupEntry(t testing.TB, a *api, group, queue string) smGroupQueue {
	t.Helper()
	var list []smGroupQueue
	smJSON(t, a, "GET", "/api/v1/consumer-groups", nil, http.StatusOK, &list)
	for _, e := range list {
		if e.Name == group && e.QueueName == queue {
			return e
		}
	}
	t.Fatalf("no consumer-group entry for (%s, %s) in %+v", group, queue, list)
	return smGroupQueue{}
}

type smLagging struct {
	ConsumerGroup string `json:"consumer_group"`
	QueueName     string `json:"queue_name"`
	PartitionName string `json:"partition_name"`
	OffsetLag     int    `json:"offset_lag"`
}

type smGroupDetails map[string]struct {
	Partitions []struct {
		Partition   string `json:"partition"`
		OffsetLag   int    `json:"offsetLag"`
		LeaseActive bool   `json:"leaseActive"`
	} `json:"partitions"`
}

func TestConsumerGroupRoutes(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("ListLaggingDetails", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("list"), smName("glist")
		smPush(t, a, q, "pa", "a1")
		smPush(t, a, q, "pb", "b1")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		smPush(t, a, q, "pa", "a2")

		e := smGroupEntry(t, a, g, q)
		require.Equal(t, []string{q}, e.Topics)
		require.Equal(t, 2, e.Members)
		require.Equal(t, 1, e.PartitionsWithLag)
		require.NotEmpty(t, e.State)
		require.NotNil(t, e.SubscriptionMode)
		require.Equal(t, "new", *e.SubscriptionMode)

		var lag []smLagging
		smJSON(t, a, "GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", nil, http.StatusOK, &lag)
		var mine []smLagging
		for _, l := range lag {
			if l.ConsumerGroup == g {
				mine = append(mine, l)
			}
		}
		require.Equal(t, []smLagging{{ConsumerGroup: g, QueueName: q, PartitionName: "pa", OffsetLag: 1}}, mine)

		var det smGroupDetails
		smJSON(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.Len(t, det, 1)
		parts := det[q].Partitions
		require.Len(t, parts, 2)
		require.Equal(t, "pa", parts[0].Partition)
		require.Equal(t, 1, parts[0].OffsetLag)
		require.False(t, parts[0].LeaseActive)
		require.Equal(t, "pb", parts[1].Partition)
		require.Equal(t, 0, parts[1].OffsetLag)

		m := smOne(t, a, smPopPath(q, "", "consumerGroup", g))
		require.Equal(t, "a2", m.TransactionID)
		smJSON(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.True(t, det[q].Partitions[0].LeaseActive)
		smAckOK(t, a, m, "completed", "")

		e = smGroupEntry(t, a, g, q)
		require.Equal(t, 0, e.PartitionsWithLag)
		require.Equal(t, "Stable", e.State)
		smJSON(t, a, "GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", nil, http.StatusOK, &lag)
		for _, l := range lag {
			require.NotEqual(t, g, l.ConsumerGroup, "%+v", lag)
		}

		// Queue mode is listed too, without a subscription.
		require.Equal(t, []string{"a1", "a2", "b1"}, smSorted(smDrain(t, a, q, "")))
		qm := smGroupEntry(t, a, "__QUEUE_MODE__", q)
		require.Equal(t, 2, qm.Members)
		require.Nil(t, qm.SubscriptionMode)

		smError(t, a, "GET", "/api/v1/consumer-groups/"+smName("nobody"), nil, http.StatusNotFound)
	})

	t.Run("DeleteWithMetadataReappliesSubscription", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("delmeta"), smName("gdm")
		smPush(t, a, q, "", "m1")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		smPush(t, a, q, "", "m2")
		require.Equal(t, []string{"m2"}, smDrain(t, a, q, g))

		var res struct {
			Success           bool   `json:"success"`
			ConsumerGroup     string `json:"consumerGroup"`
			DeletedPartitions int    `json:"deletedPartitions"`
			MetadataDeleted   bool   `json:"metadataDeleted"`
		}
		smJSON(t, a, "DELETE", "/api/v1/consumer-groups/"+g+"?deleteMetadata=true", nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, g, res.ConsumerGroup)
		require.Equal(t, 1, res.DeletedPartitions)
		require.True(t, res.MetadataDeleted)
		smError(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusNotFound)

		// The next pop subscribes afresh with its own mode: from the beginning this time.
		require.Equal(t, []string{"m1", "m2"}, smDrain(t, a, q, g, "subscriptionMode", "all"))
		smError(t, a, "DELETE", "/api/v1/consumer-groups/"+smName("nobody")+"?deleteMetadata=true", nil, http.StatusNotFound)
	})

	t.Run("DeleteWithoutMetadataRestartsAtSubscription", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, gNew, gAll := smName("delcur"), smName("gdn"), smName("gda")
		smPush(t, a, q, "", "m1")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gNew, "subscriptionMode", "new"))
		smPush(t, a, q, "", "m2", "m3")
		require.Equal(t, []string{"m2", "m3"}, smDrain(t, a, q, gNew))
		require.Equal(t, []string{"m1", "m2", "m3"}, smDrain(t, a, q, gAll))

		var res struct {
			Success         bool `json:"success"`
			MetadataDeleted bool `json:"metadataDeleted"`
		}
		smJSON(t, a, "DELETE", "/api/v1/consumer-groups/"+gNew, nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.False(t, res.MetadataDeleted)
		// The recorded subscription ("new" at m1) still applies, whatever the pop asks.
		require.Equal(t, []string{"m2", "m3"}, smDrain(t, a, q, gNew, "subscriptionMode", "all"))

		smJSON(t, a, "DELETE", "/api/v1/consumer-groups/"+gAll, nil, http.StatusOK, &res)
		require.Equal(t, []string{"m1", "m2", "m3"}, smDrain(t, a, q, gAll))
	})

	t.Run("DeleteOneQueue", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		qa, qb, g := smName("dqa"), smName("dqb"), smName("gdq")
		smPush(t, a, qa, "", "a1")
		smPush(t, a, qb, "", "b1")
		require.Equal(t, []string{"a1"}, smDrain(t, a, qa, g))
		require.Equal(t, []string{"b1"}, smDrain(t, a, qb, g))

		var res struct {
			Success           bool   `json:"success"`
			QueueName         string `json:"queueName"`
			DeletedPartitions int    `json:"deletedPartitions"`
		}
		smJSON(t, a, "DELETE", "/api/v1/consumer-groups/"+g+"/queues/"+qa, nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, qa, res.QueueName)
		require.Equal(t, 1, res.DeletedPartitions)
		var det smGroupDetails
		smJSON(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.Len(t, det, 1)
		require.Contains(t, det, qb)
		// The group restarts on qa from the beginning (its subscription there is "all").
		require.Equal(t, []string{"a1"}, smDrain(t, a, qa, g))
		smNoMessage(t, a, smPopPath(qb, "", "consumerGroup", g))
		smError(t, a, "DELETE", "/api/v1/consumer-groups/"+g+"/queues/"+smName("noqueue"), nil, http.StatusNotFound)
	})

	t.Run("Subscription", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("sub"), smName("gsub")
		smPush(t, a, q, "", "m1")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))

		require.Equal(t, "Missing subscriptionTimestamp in request body",
			smError(t, a, "POST", "/api/v1/consumer-groups/"+g+"/subscription", map[string]any{}, http.StatusBadRequest))
		var res struct {
			Success       bool   `json:"success"`
			ConsumerGroup string `json:"consumerGroup"`
			RowsUpdated   int    `json:"rowsUpdated"`
		}
		smJSON(t, a, "POST", "/api/v1/consumer-groups/"+g+"/subscription",
			map[string]any{"subscriptionTimestamp": "2000-01-01T00:00:00Z"}, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, g, res.ConsumerGroup)
		require.Equal(t, 1, res.RowsUpdated)
		// The group had consumed nothing: it now starts at the new point, before m1.
		require.Equal(t, []string{"m1"}, smDrain(t, a, q, g))
		smError(t, a, "POST", "/api/v1/consumer-groups/"+smName("nobody")+"/subscription",
			map[string]any{"subscriptionTimestamp": "2000-01-01T00:00:00Z"}, http.StatusNotFound)
	})

	t.Run("SeekQueue", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("seek"), smName("gseek")
		smPush(t, a, q, "", "m1")
		smPush(t, a, q, "px", "x1")
		ts := smInstant()
		smPush(t, a, q, "", "m2", "m3")
		require.Equal(t, []string{"m1", "m2", "m3", "x1"}, smSorted(smDrain(t, a, q, g)))

		path := "/api/v1/consumer-groups/" + g + "/queues/" + q + "/seek"
		var res struct {
			Success           bool    `json:"success"`
			SeekToEnd         bool    `json:"seekToEnd"`
			TargetTimestamp   *string `json:"targetTimestamp"`
			PartitionsUpdated int     `json:"partitionsUpdated"`
		}
		smJSON(t, a, "POST", path, map[string]any{"timestamp": ts}, http.StatusOK, &res)
		require.True(t, res.Success)
		require.False(t, res.SeekToEnd)
		require.NotNil(t, res.TargetTimestamp)
		require.Equal(t, 2, res.PartitionsUpdated)
		require.Equal(t, []string{"m2", "m3"}, smDrain(t, a, q, g))

		smPush(t, a, q, "", "m4")
		smPush(t, a, q, "px", "x2")
		smJSON(t, a, "POST", path, map[string]any{"toEnd": true}, http.StatusOK, &res)
		require.True(t, res.SeekToEnd)
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", g))

		for _, body := range []any{map[string]any{}, map[string]any{"toEnd": false}} {
			require.Equal(t, "Must specify either 'toEnd': true or 'timestamp'",
				smError(t, a, "POST", path, body, http.StatusBadRequest))
		}
	})

	t.Run("SeekPartition", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("seekp"), smName("gseekp")
		smPush(t, a, q, "pa", "a1")
		smPush(t, a, q, "pb", "b1")
		require.Equal(t, []string{"a1", "b1"}, smSorted(smDrain(t, a, q, g)))
		smPush(t, a, q, "pa", "a2", "a3")
		smPush(t, a, q, "pb", "b2")
		var res struct {
			Success       bool   `json:"success"`
			PartitionName string `json:"partitionName"`
			Updated       bool   `json:"updated"`
		}
		smJSON(t, a, "POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/partitions/pa/seek", nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.True(t, res.Updated)
		require.Equal(t, "pa", res.PartitionName)
		require.Equal(t, []string{"b2"}, smDrain(t, a, q, g))
		smError(t, a, "POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/partitions/nosuch/seek", nil, http.StatusNotFound)
	})
}

// ---------------------------------------------------------------------------------------------------
// Retries and the dead-letter queue
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Queue options
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Lease extension
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Namespace/task pop and queue deletion
// ---------------------------------------------------------------------------------------------------
