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
	srv := setupClock(t, pollEnv(nil))

	t.Run("FanOutToGroupsCompetitionInQueueMode", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("fan")
		var all []string
		for i := range 4 {
			tx := fmt.Sprintf("f%d", i)
			a.pushTxs(q, fmt.Sprintf("p%d", i), tx)
			all = append(all, tx)
		}
		// Every group sees every message.
		for _, g := range []string{uniqueName("g1"), uniqueName("g2")} {
			require.Equal(t, all, sorted(a.drain(q, g)), "group %s", g)
		}
		// Queue-mode consumers compete: each pop claims a partition the others cannot get, so no
		// message goes to two of them.
		var got []message
		for range 4 {
			got = append(got, a.popOne(popPath(q, "")))
		}
		a.popNone(popPath(q, ""))
		var txs []string
		leases := map[string]bool{}
		for _, m := range got {
			txs = append(txs, m.TransactionID)
			leases[m.LeaseID] = true
		}
		require.Equal(t, all, sorted(txs))
		require.Len(t, leases, 4)
		for _, m := range got {
			a.ackOK(m, "completed", "")
		}
		a.popNone(popPath(q, ""))
	})

	for _, opt := range [][2]string{{"subscriptionMode", "new"}, {"subscriptionMode", "new-only"}, {"subscriptionFrom", "now"}} {
		t.Run("SkipBacklog_"+opt[0]+"="+opt[1], func(t *testing.T) {
			t.Parallel()
			a := srv.rawFor(t)
			q, g := uniqueName("new"), uniqueName("gnew")
			a.pushTxs(q, "", "b1")
			a.pushTxs(q, "other", "b2")
			a.popNone(popPath(q, "", "consumerGroup", g, opt[0], opt[1]))
			a.pushTxs(q, "", "n1")
			a.pushTxs(q, "other", "n2")
			a.pushTxs(q, "fresh", "n3") // a partition created after the subscription
			require.Equal(t, []string{"n1", "n2", "n3"}, sorted(a.drain(q, g, opt[0], opt[1])))
			// The backlog is still there for a group that starts from the beginning.
			require.Equal(t, []string{"b1", "b2", "n1", "n2", "n3"}, sorted(a.drain(q, uniqueName("gall"))))
		})
	}

	t.Run("SubscriptionFromTimestamp", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("from"), uniqueName("gfrom")
		a.pushTxs(q, "", "m1")
		ts := srv.instant()
		a.pushTxs(q, "", "m2")
		require.Equal(t, []string{"m2"}, a.drain(q, g, "subscriptionFrom", ts))
		a.pushTxs(q, "", "m3")
		require.Equal(t, []string{"m3"}, a.drain(q, g, "subscriptionFrom", ts))
	})

	t.Run("FirstSubscriptionWins", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("first"), uniqueName("gfirst")
		a.pushTxs(q, "", "old")
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		// Later pops with other options change nothing: the backlog stays skipped.
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionMode", "all"))
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionFrom", "2000-01-01T00:00:00Z"))
		a.pushTxs(q, "", "later")
		require.Equal(t, []string{"later"}, a.drain(q, g, "subscriptionMode", "all"))
		e := a.groupEntry(g, q)
		require.NotNil(t, e.SubscriptionMode)
		require.Equal(t, "new", *e.SubscriptionMode)
	})

	t.Run("BadSubscriptionOptions", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("bad"), uniqueName("gbad")
		a.pushTxs(q, "", "x")
		msg := a.errorText("GET", popPath(q, "", "consumerGroup", g, "subscriptionMode", "sometimes"), nil, http.StatusBadRequest)
		require.Contains(t, msg, "subscriptionMode")
		msg = a.errorText("GET", popPath(q, "", "consumerGroup", g, "subscriptionFrom", "yesterday"), nil, http.StatusBadRequest)
		require.Contains(t, msg, "subscriptionFrom")
		// Nothing was recorded or consumed by the refused pops.
		require.Equal(t, []string{"x"}, a.drain(q, g))
	})
}

func TestDefaultSubscriptionMode(t *testing.T) {
	t.Parallel()
	srv := setup(t, pollEnv(map[string]string{"DEFAULT_SUBSCRIPTION_MODE": "new"}))
	a := srv.rawFor(t)
	q, g := uniqueName("defnew"), uniqueName("gdef")
	a.pushTxs(q, "", "m1")
	a.popNone(popPath(q, "", "consumerGroup", g))
	a.pushTxs(q, "", "m2")
	require.Equal(t, []string{"m2"}, a.drain(q, g))
	// An explicit mode overrides the default; queue mode always starts from the beginning.
	require.Equal(t, []string{"m1", "m2"}, a.drain(q, uniqueName("gall"), "subscriptionMode", "all"))
	require.Equal(t, []string{"m1", "m2"}, a.drain(q, ""))
}

// ---------------------------------------------------------------------------------------------------
// Consumer-group routes
// ---------------------------------------------------------------------------------------------------

type groupQueue struct {
	Name              string   `json:"name"`
	Topics            []string `json:"topics"`
	QueueName         string   `json:"queueName"`
	Members           int      `json:"members"`
	PartitionsWithLag int      `json:"partitionsWithLag"`
	State             string   `json:"state"`
	SubscriptionMode  *string  `json:"subscriptionMode"`
}

func (a *api) groupEntry(group, queue string) groupQueue {
	t := a.t
	t.Helper()
	var list []groupQueue
	a.json("GET", "/api/v1/consumer-groups", nil, http.StatusOK, &list)
	for _, e := range list {
		if e.Name == group && e.QueueName == queue {
			return e
		}
	}
	t.Fatalf("no consumer-group entry for (%s, %s) in %+v", group, queue, list)
	return groupQueue{}
}

type lagging struct {
	ConsumerGroup string `json:"consumer_group"`
	QueueName     string `json:"queue_name"`
	PartitionName string `json:"partition_name"`
	OffsetLag     int    `json:"offset_lag"`
}

type groupDetails map[string]struct {
	Partitions []struct {
		Partition   string `json:"partition"`
		OffsetLag   int    `json:"offsetLag"`
		LeaseActive bool   `json:"leaseActive"`
	} `json:"partitions"`
}

func TestConsumerGroupRoutes(t *testing.T) {
	t.Parallel()
	srv := setupClock(t, pollEnv(nil))

	t.Run("ListLaggingDetails", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("list"), uniqueName("glist")
		a.pushTxs(q, "pa", "a1")
		a.pushTxs(q, "pb", "b1")
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		a.pushTxs(q, "pa", "a2")

		e := a.groupEntry(g, q)
		require.Equal(t, []string{q}, e.Topics)
		require.Equal(t, 2, e.Members)
		require.Equal(t, 1, e.PartitionsWithLag)
		require.NotEmpty(t, e.State)
		require.NotNil(t, e.SubscriptionMode)
		require.Equal(t, "new", *e.SubscriptionMode)

		var lag []lagging
		a.json("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", nil, http.StatusOK, &lag)
		var mine []lagging
		for _, l := range lag {
			if l.ConsumerGroup == g {
				mine = append(mine, l)
			}
		}
		require.Equal(t, []lagging{{ConsumerGroup: g, QueueName: q, PartitionName: "pa", OffsetLag: 1}}, mine)

		var det groupDetails
		a.json("GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.Len(t, det, 1)
		parts := det[q].Partitions
		require.Len(t, parts, 2)
		require.Equal(t, "pa", parts[0].Partition)
		require.Equal(t, 1, parts[0].OffsetLag)
		require.False(t, parts[0].LeaseActive)
		require.Equal(t, "pb", parts[1].Partition)
		require.Equal(t, 0, parts[1].OffsetLag)

		m := a.popOne(popPath(q, "", "consumerGroup", g))
		require.Equal(t, "a2", m.TransactionID)
		a.json("GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.True(t, det[q].Partitions[0].LeaseActive)
		a.ackOK(m, "completed", "")

		e = a.groupEntry(g, q)
		require.Equal(t, 0, e.PartitionsWithLag)
		require.Equal(t, "Stable", e.State)
		a.json("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", nil, http.StatusOK, &lag)
		for _, l := range lag {
			require.NotEqual(t, g, l.ConsumerGroup, "%+v", lag)
		}

		// Queue mode is listed too, without a subscription.
		require.Equal(t, []string{"a1", "a2", "b1"}, sorted(a.drain(q, "")))
		qm := a.groupEntry("__QUEUE_MODE__", q)
		require.Equal(t, 2, qm.Members)
		require.Nil(t, qm.SubscriptionMode)

		a.errorText("GET", "/api/v1/consumer-groups/"+uniqueName("nobody"), nil, http.StatusNotFound)
	})

	t.Run("DeleteWithMetadataReappliesSubscription", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("delmeta"), uniqueName("gdm")
		a.pushTxs(q, "", "m1")
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))
		a.pushTxs(q, "", "m2")
		require.Equal(t, []string{"m2"}, a.drain(q, g))

		var res struct {
			Success           bool   `json:"success"`
			ConsumerGroup     string `json:"consumerGroup"`
			DeletedPartitions int    `json:"deletedPartitions"`
			MetadataDeleted   bool   `json:"metadataDeleted"`
		}
		a.json("DELETE", "/api/v1/consumer-groups/"+g+"?deleteMetadata=true", nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, g, res.ConsumerGroup)
		require.Equal(t, 1, res.DeletedPartitions)
		require.True(t, res.MetadataDeleted)
		a.errorText("GET", "/api/v1/consumer-groups/"+g, nil, http.StatusNotFound)

		// The next pop subscribes afresh with its own mode: from the beginning this time.
		require.Equal(t, []string{"m1", "m2"}, a.drain(q, g, "subscriptionMode", "all"))
		a.errorText("DELETE", "/api/v1/consumer-groups/"+uniqueName("nobody")+"?deleteMetadata=true", nil, http.StatusNotFound)
	})

	t.Run("DeleteWithoutMetadataRestartsAtSubscription", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, gNew, gAll := uniqueName("delcur"), uniqueName("gdn"), uniqueName("gda")
		a.pushTxs(q, "", "m1")
		a.popNone(popPath(q, "", "consumerGroup", gNew, "subscriptionMode", "new"))
		a.pushTxs(q, "", "m2", "m3")
		require.Equal(t, []string{"m2", "m3"}, a.drain(q, gNew))
		require.Equal(t, []string{"m1", "m2", "m3"}, a.drain(q, gAll))

		var res struct {
			Success         bool `json:"success"`
			MetadataDeleted bool `json:"metadataDeleted"`
		}
		a.json("DELETE", "/api/v1/consumer-groups/"+gNew, nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.False(t, res.MetadataDeleted)
		// The recorded subscription ("new" at m1) still applies, whatever the pop asks.
		require.Equal(t, []string{"m2", "m3"}, a.drain(q, gNew, "subscriptionMode", "all"))

		a.json("DELETE", "/api/v1/consumer-groups/"+gAll, nil, http.StatusOK, &res)
		require.Equal(t, []string{"m1", "m2", "m3"}, a.drain(q, gAll))
	})

	t.Run("DeleteOneQueue", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		qa, qb, g := uniqueName("dqa"), uniqueName("dqb"), uniqueName("gdq")
		a.pushTxs(qa, "", "a1")
		a.pushTxs(qb, "", "b1")
		require.Equal(t, []string{"a1"}, a.drain(qa, g))
		require.Equal(t, []string{"b1"}, a.drain(qb, g))

		var res struct {
			Success           bool   `json:"success"`
			QueueName         string `json:"queueName"`
			DeletedPartitions int    `json:"deletedPartitions"`
		}
		a.json("DELETE", "/api/v1/consumer-groups/"+g+"/queues/"+qa, nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, qa, res.QueueName)
		require.Equal(t, 1, res.DeletedPartitions)
		var det groupDetails
		a.json("GET", "/api/v1/consumer-groups/"+g, nil, http.StatusOK, &det)
		require.Len(t, det, 2, "still subscribed to qa: the group is one of its groups")
		require.Equal(t, 0, det[qb].Partitions[0].OffsetLag)
		require.Equal(t, 1, det[qa].Partitions[0].OffsetLag, "qa is before its first message again")
		// The group restarts on qa from the beginning (its subscription there is "all").
		require.Equal(t, []string{"a1"}, a.drain(qa, g))
		a.popNone(popPath(qb, "", "consumerGroup", g))
		a.errorText("DELETE", "/api/v1/consumer-groups/"+g+"/queues/"+uniqueName("noqueue"), nil, http.StatusNotFound)
	})

	t.Run("Subscription", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("sub"), uniqueName("gsub")
		a.pushTxs(q, "", "m1")
		a.popNone(popPath(q, "", "consumerGroup", g, "subscriptionMode", "new"))

		require.Equal(t, "Missing subscriptionTimestamp in request body",
			a.errorText("POST", "/api/v1/consumer-groups/"+g+"/subscription", map[string]any{}, http.StatusBadRequest))
		var res struct {
			Success       bool   `json:"success"`
			ConsumerGroup string `json:"consumerGroup"`
			RowsUpdated   int    `json:"rowsUpdated"`
		}
		a.json("POST", "/api/v1/consumer-groups/"+g+"/subscription",
			map[string]any{"subscriptionTimestamp": "2000-01-01T00:00:00Z"}, http.StatusOK, &res)
		require.True(t, res.Success)
		require.Equal(t, g, res.ConsumerGroup)
		require.Equal(t, 1, res.RowsUpdated)
		// The group had consumed nothing: it now starts at the new point, before m1.
		require.Equal(t, []string{"m1"}, a.drain(q, g))
		a.errorText("POST", "/api/v1/consumer-groups/"+uniqueName("nobody")+"/subscription",
			map[string]any{"subscriptionTimestamp": "2000-01-01T00:00:00Z"}, http.StatusNotFound)
	})

	t.Run("SeekQueue", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("seek"), uniqueName("gseek")
		a.pushTxs(q, "", "m1")
		a.pushTxs(q, "px", "x1")
		ts := srv.instant()
		a.pushTxs(q, "", "m2", "m3")
		require.Equal(t, []string{"m1", "m2", "m3", "x1"}, sorted(a.drain(q, g)))

		path := "/api/v1/consumer-groups/" + g + "/queues/" + q + "/seek"
		var res struct {
			Success           bool    `json:"success"`
			SeekToEnd         bool    `json:"seekToEnd"`
			TargetTimestamp   *string `json:"targetTimestamp"`
			PartitionsUpdated int     `json:"partitionsUpdated"`
		}
		a.json("POST", path, map[string]any{"timestamp": ts}, http.StatusOK, &res)
		require.True(t, res.Success)
		require.False(t, res.SeekToEnd)
		require.NotNil(t, res.TargetTimestamp)
		require.Equal(t, 2, res.PartitionsUpdated)
		require.Equal(t, []string{"m2", "m3"}, a.drain(q, g))

		a.pushTxs(q, "", "m4")
		a.pushTxs(q, "px", "x2")
		a.json("POST", path, map[string]any{"toEnd": true}, http.StatusOK, &res)
		require.True(t, res.SeekToEnd)
		a.popNone(popPath(q, "", "consumerGroup", g))

		for _, body := range []any{map[string]any{}, map[string]any{"toEnd": false}} {
			require.Equal(t, "Must specify either 'toEnd': true or 'timestamp'",
				a.errorText("POST", path, body, http.StatusBadRequest))
		}
	})

	t.Run("SeekPartition", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("seekp"), uniqueName("gseekp")
		a.pushTxs(q, "pa", "a1")
		a.pushTxs(q, "pb", "b1")
		require.Equal(t, []string{"a1", "b1"}, sorted(a.drain(q, g)))
		a.pushTxs(q, "pa", "a2", "a3")
		a.pushTxs(q, "pb", "b2")
		var res struct {
			Success       bool   `json:"success"`
			PartitionName string `json:"partitionName"`
			Updated       bool   `json:"updated"`
		}
		a.json("POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/partitions/pa/seek", nil, http.StatusOK, &res)
		require.True(t, res.Success)
		require.True(t, res.Updated)
		require.Equal(t, "pa", res.PartitionName)
		require.Equal(t, []string{"b2"}, a.drain(q, g))
		a.errorText("POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/partitions/nosuch/seek", nil, http.StatusNotFound)
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
