package httpapi_test

// Semantics tests (issue #3): consumer groups and their routes, retries and the DLQ, queue options
// (delayedProcessing, windowBuffer, maxSize, priority, maxWaitTimeSeconds), lease extension,
// transactions, the namespace/task pop and queue deletion — all through real HTTP against a real
// broker on a private database. Every test function starts one broker and runs its subtests in
// parallel on unique queue and group names.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

// smEnv is the environment every broker of this file gets: a fast safety re-check of parked
// long-polls, so that waits ended by time (delays, retryDelay, windowBuffer) are answered promptly.
func smEnv(extra map[string]string) map[string]string {
	env := map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "100"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func smStart(t *testing.T, extra map[string]string) string {
	t.Helper()
	return testenv.StartBroker(t, smEnv(extra)).URL
}

// smMessage is a popped message with the fields this file reads.
type smMessage struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	Data          json.RawMessage `json:"data"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Queue         string          `json:"queue"`
	CreatedAt     string          `json:"createdAt"`
	RetryCount    int             `json:"retryCount"`
}

type smPopResult struct {
	Queue             string      `json:"queue"`
	LeaseID           string      `json:"leaseId"`
	PartitionsClaimed int         `json:"partitionsClaimed"`
	Messages          []smMessage `json:"messages"`
}

// smQuery builds a query string from key/value pairs.
func smQuery(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// smPopPath is the wildcard (partition "") or specific-partition pop route of queue q.
func smPopPath(q, partition string, kv ...string) string {
	p := "/api/v1/pop/queue/" + url.PathEscape(q)
	if partition != "" {
		p += "/partition/" + url.PathEscape(partition)
	}
	return p + smQuery(kv...)
}

// smPop pops; nil on 204.
func smPop(t testing.TB, a *api, path string) *smPopResult {
	t.Helper()
	st, body := a.do("GET", path, nil)
	if st == http.StatusNoContent {
		require.Empty(t, body)
		return nil
	}
	require.Equal(t, http.StatusOK, st, "%s: %s", path, body)
	var res smPopResult
	require.NoError(t, json.Unmarshal(body, &res))
	require.NotEmpty(t, res.Messages, "%s", body)
	return &res
}

func smNoMessage(t testing.TB, a *api, path string) {
	t.Helper()
	res := smPop(t, a, path)
	require.Nil(t, res, "expected 204 from %s, got %+v", path, res)
}

func smOne(t testing.TB, a *api, path string) smMessage {
	t.Helper()
	res := smPop(t, a, path)
	require.NotNil(t, res, "expected a message from %s", path)
	require.Len(t, res.Messages, 1)
	return res.Messages[0]
}

// smAck acknowledges one message through /api/v1/ack and returns its single result.
func smAck(t testing.TB, a *api, m smMessage, status, errText string) ackResult {
	t.Helper()
	body := map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID,
		"status": status, "consumerGroup": m.ConsumerGroup}
	if errText != "" {
		body["error"] = errText
	}
	st, out := a.do("POST", "/api/v1/ack", body)
	require.Equal(t, http.StatusOK, st, "%s", out)
	var res []ackResult
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, res, 1)
	return res[0]
}

func smAckOK(t testing.TB, a *api, m smMessage, status, errText string) ackResult {
	t.Helper()
	r := smAck(t, a, m, status, errText)
	require.True(t, r.Success, "%+v", r)
	require.Nil(t, r.Error)
	return r
}

// smDrain pops (batch 10) and acks every message of queue q for group ("" = queue mode) until a 204,
// returning the transaction ids in delivery order. extra are more pop parameters.
func smDrain(t testing.TB, a *api, q, group string, extra ...string) []string {
	t.Helper()
	kv := append([]string{"batch", "10"}, extra...)
	if group != "" {
		kv = append(kv, "consumerGroup", group)
	}
	var got []string
	for range 100 {
		res := smPop(t, a, smPopPath(q, "", kv...))
		if res == nil {
			return got
		}
		for _, m := range res.Messages {
			got = append(got, m.TransactionID)
			smAckOK(t, a, m, "completed", "")
		}
	}
	t.Fatalf("queue %s never drained for group %q", q, group)
	return nil
}

func smSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func smConfigure(t testing.TB, a *api, q, namespace string, opts map[string]any) {
	t.Helper()
	body := map[string]any{"queue": q, "options": opts}
	if namespace != "" {
		body["namespace"] = namespace
	}
	st, out := a.do("POST", "/api/v1/configure", body)
	require.Equal(t, http.StatusOK, st, "%s", out)
}

func smPush(t testing.TB, a *api, q, partition string, txs ...string) {
	t.Helper()
	items := make([]pushItem, len(txs))
	for i, tx := range txs {
		items[i] = pushItem{Queue: q, Partition: partition, Payload: map[string]any{"tx": tx}, TransactionID: tx}
	}
	for _, r := range a.push(items...) {
		require.Equal(t, "queued", r.Status, "%+v", r)
	}
}

// smJSON sends a request, requires the status and decodes the body into out (when not nil).
func smJSON(t testing.TB, a *api, method, path string, body any, status int, out any) []byte {
	t.Helper()
	st, raw := a.do(method, path, body)
	require.Equal(t, status, st, "%s %s: %s", method, path, raw)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
	}
	return raw
}

// smError requires an error envelope with the status and returns its text.
func smError(t testing.TB, a *api, method, path string, body any, status int) string {
	t.Helper()
	var env struct {
		Error string `json:"error"`
	}
	smJSON(t, a, method, path, body, status, &env)
	require.NotEmpty(t, env.Error)
	return env.Error
}

// smInstant returns a timestamp strictly between what was pushed before and what is pushed after the
// call (a scenario pause on both sides keeps the database's and our clock readings apart).
func smInstant() string {
	time.Sleep(50 * time.Millisecond)
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(50 * time.Millisecond)
	return ts
}

func smParseTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "%q", s)
	return ts
}

func smName(prefix string) string { return ctName("sm-" + prefix) }

// smRawGet is a GET that reports failures instead of failing the test, for use off the test goroutine.
func smRawGet(t testing.TB, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ---------------------------------------------------------------------------------------------------
// Consumer groups and subscriptions
// ---------------------------------------------------------------------------------------------------

func TestSemanticsConsumerGroups(t *testing.T) {
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

func TestSemanticsDefaultSubscriptionMode(t *testing.T) {
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

func TestSemanticsConsumerGroupRoutes(t *testing.T) {
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

type smDeadLetter struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	ConsumerGroup string          `json:"consumerGroup"`
	ErrorMessage  *string         `json:"errorMessage"`
	RetryCount    int             `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
	FailedAt      string          `json:"failedAt"`
}

type smDLQPage struct {
	Messages   []smDeadLetter `json:"messages"`
	Total      int            `json:"total"`
	Pagination struct {
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
	} `json:"pagination"`
}

func smDLQ(t testing.TB, a *api, kv ...string) smDLQPage {
	t.Helper()
	var p smDLQPage
	smJSON(t, a, "GET", "/api/v1/dlq"+smQuery(kv...), nil, http.StatusOK, &p)
	require.NotNil(t, p.Messages)
	return p
}

func TestSemanticsRetriesAndDLQ(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("ExhaustedRetriesRetryAndDelete", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, ga, gb := smName("dlq"), smName("ga"), smName("gb")
		smConfigure(t, a, q, "", map[string]any{"retryLimit": 2, "retryDelay": 0})
		smPush(t, a, q, "", "d1")
		require.Equal(t, []string{"d1"}, smDrain(t, a, q, gb))

		// retryLimit 2: two failures are retried (retryCount 0, 1 on delivery), the third delivery
		// (retryCount 2) failing exhausts the budget and dead-letters the message.
		path := smPopPath(q, "", "consumerGroup", ga)
		var m smMessage
		for i := range 3 {
			m = smOne(t, a, path)
			require.Equal(t, "d1", m.TransactionID)
			require.Equal(t, i, m.RetryCount)
			r := smAckOK(t, a, m, "failed", fmt.Sprintf("boom-%d", i))
			require.Equal(t, i == 2, r.DLQ, "attempt %d: %+v", i, r)
		}
		smNoMessage(t, a, path)

		p := smDLQ(t, a, "queue", q)
		require.Equal(t, 1, p.Total)
		require.Len(t, p.Messages, 1)
		d := p.Messages[0]
		require.Equal(t, "d1", d.TransactionID)
		require.Equal(t, m.PartitionID, d.PartitionID)
		require.Equal(t, m.ID, d.ID)
		require.Equal(t, q, d.Queue)
		require.Equal(t, "Default", d.Partition)
		require.Equal(t, ga, d.ConsumerGroup)
		require.NotNil(t, d.ErrorMessage)
		require.Equal(t, "boom-2", *d.ErrorMessage)
		require.Equal(t, 2, d.RetryCount)
		require.JSONEq(t, `{"tx":"d1"}`, string(d.Data))

		row := "/api/v1/dlq/" + m.PartitionID + "/d1"
		var one smDeadLetter
		smJSON(t, a, "GET", row, nil, http.StatusOK, &one)
		require.Equal(t, d, one)

		// Retry serves it again to ga only; gb, which consumed it, does not see it again.
		smJSON(t, a, "POST", row+"/retry", nil, http.StatusOK, nil)
		smError(t, a, "GET", row, nil, http.StatusNotFound)
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gb))
		again := smOne(t, a, path)
		require.Equal(t, "d1", again.TransactionID)
		r := smAckOK(t, a, again, "completed", "")
		require.False(t, r.Noop)
		smNoMessage(t, a, path)
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gb))
		require.Equal(t, 0, smDLQ(t, a, "queue", q).Total)

		// ack status dlq, then delete the dead letter.
		smPush(t, a, q, "", "d2")
		m2 := smOne(t, a, path)
		require.Equal(t, "d2", m2.TransactionID)
		r = smAckOK(t, a, m2, "dlq", "manual")
		require.True(t, r.DLQ)
		smNoMessage(t, a, path)
		row2 := "/api/v1/dlq/" + m2.PartitionID + "/d2"
		smJSON(t, a, "GET", row2, nil, http.StatusOK, &one)
		require.Equal(t, "manual", *one.ErrorMessage)
		require.Equal(t, ga, one.ConsumerGroup)
		smJSON(t, a, "DELETE", row2, nil, http.StatusOK, nil)
		smError(t, a, "GET", row2, nil, http.StatusNotFound)
		smError(t, a, "DELETE", row2, nil, http.StatusNotFound)
		smError(t, a, "POST", row2+"/retry", nil, http.StatusNotFound)
		smNoMessage(t, a, path)
		// gb still gets d2 (its own cursor never saw it).
		require.Equal(t, []string{"d2"}, smDrain(t, a, q, gb))
	})

	t.Run("UnknownRows", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		for _, row := range []string{"/api/v1/dlq/" + uuid.NewString() + "/nope", "/api/v1/dlq/not-a-uuid/nope"} {
			smError(t, a, "GET", row, nil, http.StatusNotFound)
			smError(t, a, "DELETE", row, nil, http.StatusNotFound)
			smError(t, a, "POST", row+"/retry", nil, http.StatusNotFound)
		}
	})

	t.Run("ListFilters", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q1, q2, g1, g2 := smName("dlf1"), smName("dlf2"), smName("gf1"), smName("gf2")
		smPush(t, a, q1, "pa", "a1")
		smPush(t, a, q1, "pb", "b1")
		smPush(t, a, q2, "", "x1")
		dead := func(q, partition, group, errText string) {
			m := smOne(t, a, smPopPath(q, partition, "consumerGroup", group))
			require.True(t, smAckOK(t, a, m, "dlq", errText).DLQ)
		}
		dead(q1, "pa", g1, "e-a")
		dead(q1, "pb", g1, "e-b")
		dead(q2, "", g1, "e-x")
		mid := smInstant()
		dead(q1, "pa", g2, "e-c")

		errs := func(p smDLQPage) []string {
			var out []string
			for _, d := range p.Messages {
				out = append(out, *d.ErrorMessage)
			}
			return out
		}
		p := smDLQ(t, a, "queue", q1)
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 3)
		require.Equal(t, "e-c", *p.Messages[0].ErrorMessage, "newest failure first")
		require.Equal(t, []string{"e-a", "e-b", "e-c"}, smSorted(errs(p)))

		p = smDLQ(t, a, "queue", q1, "consumerGroup", g1)
		require.Equal(t, 2, p.Total)
		require.Equal(t, []string{"e-a", "e-b"}, smSorted(errs(p)))
		p = smDLQ(t, a, "consumerGroup", g1)
		require.Equal(t, 3, p.Total)
		require.Equal(t, []string{"e-a", "e-b", "e-x"}, smSorted(errs(p)))
		p = smDLQ(t, a, "queue", q1, "partition", "pa")
		require.Equal(t, []string{"e-a", "e-c"}, smSorted(errs(p)))
		p = smDLQ(t, a, "queue", q1, "partition", "pa", "consumerGroup", g2)
		require.Equal(t, []string{"e-c"}, errs(p))
		p = smDLQ(t, a, "queue", q1, "from", mid)
		require.Equal(t, 1, p.Total)
		require.Equal(t, []string{"e-c"}, errs(p))
		p = smDLQ(t, a, "queue", q1, "to", mid)
		require.Equal(t, 2, p.Total)
		require.Equal(t, []string{"e-a", "e-b"}, smSorted(errs(p)))

		p = smDLQ(t, a, "queue", q1, "limit", "1")
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 1)
		require.Equal(t, 1, p.Pagination.Limit)
		first := p.Messages[0].ErrorMessage
		p = smDLQ(t, a, "queue", q1, "limit", "2", "offset", "2")
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 1)
		require.Equal(t, 2, p.Pagination.Offset)
		require.NotEqual(t, *first, *p.Messages[0].ErrorMessage)

		smError(t, a, "GET", "/api/v1/dlq?from=yesterday", nil, http.StatusBadRequest)

		// total counts the filtered set even for a page past its end.
		p = smDLQ(t, a, "queue", q1, "offset", "10")
		require.Empty(t, p.Messages)
		require.Equal(t, 3, p.Total, "total is the size of the filtered set, whatever the page")
	})

	t.Run("RetryDelay", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("rdelay")
		smConfigure(t, a, q, "", map[string]any{"retryLimit": 3, "retryDelay": 1500})
		smPush(t, a, q, "", "r1")
		m := smOne(t, a, smPopPath(q, ""))
		failedAt := time.Now()
		r := smAckOK(t, a, m, "failed", "transient")
		require.False(t, r.DLQ)
		require.True(t, r.LeaseReleased)
		smNoMessage(t, a, smPopPath(q, ""))
		again := smOne(t, a, smPopPath(q, "", "wait", "true", "timeout", "10000"))
		require.GreaterOrEqual(t, time.Since(failedAt), 1500*time.Millisecond, "redelivered before retryDelay")
		require.Equal(t, "r1", again.TransactionID)
		require.Equal(t, 1, again.RetryCount)
		smAckOK(t, a, again, "completed", "")
		smNoMessage(t, a, smPopPath(q, ""))
	})

	t.Run("AckStatusRetryDoesNotSpendBudget", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("rstat")
		smConfigure(t, a, q, "", map[string]any{"retryLimit": 1, "retryDelay": 0})
		smPush(t, a, q, "", "s1")
		path := smPopPath(q, "")
		m := smOne(t, a, path)
		r := smAckOK(t, a, m, "retry", "")
		require.True(t, r.LeaseReleased)
		require.False(t, r.DLQ)
		m = smOne(t, a, path)
		require.Equal(t, 0, m.RetryCount)
		require.False(t, smAckOK(t, a, m, "failed", "x").DLQ)
		m = smOne(t, a, path)
		require.Equal(t, 1, m.RetryCount)
		smAckOK(t, a, m, "retry", "")
		m = smOne(t, a, path)
		require.Equal(t, 1, m.RetryCount)
		require.True(t, smAckOK(t, a, m, "failed", "").DLQ)
		smNoMessage(t, a, path)
		p := smDLQ(t, a, "queue", q)
		require.Equal(t, 1, p.Total)
		require.Equal(t, "Retries exhausted", *p.Messages[0].ErrorMessage)
	})
}

// ---------------------------------------------------------------------------------------------------
// Queue options
// ---------------------------------------------------------------------------------------------------

func TestSemanticsQueueOptions(t *testing.T) {
	t.Parallel()
	base := smStart(t, map[string]string{"EVICTION_INTERVAL": "200"})

	t.Run("DelayedProcessing", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("delay")
		smConfigure(t, a, q, "", map[string]any{"delayedProcessing": 2})
		pushedAt := time.Now()
		smPush(t, a, q, "", "late")
		smNoMessage(t, a, smPopPath(q, ""))
		m := smOne(t, a, smPopPath(q, "", "wait", "true", "timeout", "10000"))
		require.GreaterOrEqual(t, time.Since(pushedAt), 2*time.Second, "delivered before delayedProcessing")
		require.GreaterOrEqual(t, time.Since(smParseTime(t, m.CreatedAt)), 2*time.Second)
		require.Equal(t, "late", m.TransactionID)
	})

	t.Run("WindowBuffer", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("window")
		smConfigure(t, a, q, "", map[string]any{"windowBuffer": 2})
		smPush(t, a, q, "", "w1")
		smNoMessage(t, a, smPopPath(q, ""))
		time.Sleep(time.Second) // scenario: a second message arrives while the window is open
		smNoMessage(t, a, smPopPath(q, ""))
		lastPush := time.Now()
		smPush(t, a, q, "", "w2")
		smNoMessage(t, a, smPopPath(q, ""))
		res := smPop(t, a, smPopPath(q, "", "wait", "true", "timeout", "10000", "batch", "10"))
		require.NotNil(t, res)
		require.GreaterOrEqual(t, time.Since(lastPush), 2*time.Second, "partition served before its newest message was windowBuffer old")
		require.Len(t, res.Messages, 2)
		require.Equal(t, "w1", res.Messages[0].TransactionID)
		require.Equal(t, "w2", res.Messages[1].TransactionID)
	})

	t.Run("MaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("max")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 3})
		type result struct {
			TransactionID string `json:"transaction_id"`
			Status        string `json:"status"`
			Error         string `json:"error"`
		}
		pushN := func(txs ...string) []result {
			items := make([]pushItem, len(txs))
			for i, tx := range txs {
				items[i] = pushItem{Queue: q, Payload: i, TransactionID: tx}
			}
			var res []result
			smJSON(t, a, "POST", "/api/v1/push", map[string]any{"items": items}, http.StatusCreated, &res)
			require.Len(t, res, len(txs))
			return res
		}
		res := pushN("s0", "s1", "s2", "s3", "s4")
		for i, r := range res {
			require.Equal(t, fmt.Sprintf("s%d", i), r.TransactionID)
			if i < 3 {
				require.Equal(t, "queued", r.Status, "%+v", r)
				continue
			}
			require.Equal(t, "failed", r.Status, "%+v", r)
			require.Contains(t, r.Error, "maxSize 3")
		}
		require.Equal(t, "failed", pushN("s5")[0].Status)
		require.Equal(t, []string{"s0", "s1", "s2"}, smDrain(t, a, q, ""))
		for _, r := range pushN("s6", "s7") {
			require.Equal(t, "queued", r.Status, "%+v", r)
		}
		require.Equal(t, []string{"s6", "s7"}, smDrain(t, a, q, ""))
	})

	t.Run("PriorityAcrossNamespace", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		ns := strings.ReplaceAll(smName("prio"), "-", "")
		lo, hi := ns+".low.q", ns+".high.q"
		smConfigure(t, a, lo, ns, map[string]any{"priority": 1})
		smConfigure(t, a, hi, ns, map[string]any{"priority": 5})
		smPush(t, a, lo, "", "l1", "l2")
		smPush(t, a, hi, "", "h1", "h2")
		var order []string
		for range 4 {
			res := smPop(t, a, "/api/v1/pop"+smQuery("namespace", ns))
			require.NotNil(t, res)
			require.Len(t, res.Messages, 1)
			m := res.Messages[0]
			require.Equal(t, res.Queue, m.Queue)
			order = append(order, m.Queue+"/"+m.TransactionID)
			smAckOK(t, a, m, "completed", "")
		}
		require.Equal(t, []string{hi + "/h1", hi + "/h2", lo + "/l1", lo + "/l2"}, order)
		smNoMessage(t, a, "/api/v1/pop"+smQuery("namespace", ns))
	})

	t.Run("MaxWaitTimeSeconds", func(t *testing.T) {
		t.Parallel()
		// The sweep dead-letters, per existing cursor (partition x group), the messages after the
		// cursor that are older than maxWaitTimeSeconds. A cursor is created by a pop that delivered
		// something (an empty pop on a queue without partitions creates none) or by a named group's
		// "new"/timestamp subscription on existing partitions. So queue mode first pops and acks one
		// message, and group gw subscribes with "new", before the message that must expire is pushed.
		a := newAPI(t, base)
		q, gw := smName("maxwait"), smName("gw")
		smConfigure(t, a, q, "", map[string]any{"maxWaitTimeSeconds": 1})
		smPush(t, a, q, "", "first")
		smAckOK(t, a, smOne(t, a, smPopPath(q, "")), "completed", "")
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gw, "subscriptionMode", "new"))
		smPush(t, a, q, "", "stale")

		var p smDLQPage
		eventually(t, 15*time.Second, func() error {
			p = smDLQ(t, a, "queue", q)
			if p.Total != 2 {
				return errorf("dlq total %d, want 2", p.Total)
			}
			return nil
		})
		groups := map[string]bool{}
		for _, d := range p.Messages {
			require.Equal(t, "stale", d.TransactionID)
			require.Equal(t, "max wait time exceeded", *d.ErrorMessage)
			groups[d.ConsumerGroup] = true
		}
		require.Equal(t, map[string]bool{"__QUEUE_MODE__": true, gw: true}, groups)
		smNoMessage(t, a, smPopPath(q, ""))
		smNoMessage(t, a, smPopPath(q, "", "consumerGroup", gw))
	})
}

// ---------------------------------------------------------------------------------------------------
// Lease extension
// ---------------------------------------------------------------------------------------------------

type smLease struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *string `json:"expiresAt"`
}

func smExtend(t testing.TB, a *api, lease string, seconds int) time.Time {
	t.Helper()
	var res []smLease
	smJSON(t, a, "POST", "/api/v1/lease/"+lease+"/extend", map[string]any{"seconds": seconds}, http.StatusOK, &res)
	require.Len(t, res, 1)
	require.True(t, res[0].Success, "%+v", res[0])
	require.Equal(t, lease, res[0].LeaseID)
	require.NotNil(t, res[0].ExpiresAt)
	return smParseTime(t, *res[0].ExpiresAt)
}

func TestSemanticsLeaseExtend(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("ExtendsNeverShortens", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("lease")
		smConfigure(t, a, q, "", map[string]any{"leaseTime": 300})
		smPush(t, a, q, "", "l1")
		before := time.Now()
		m := smOne(t, a, smPopPath(q, ""))
		exp := smExtend(t, a, m.LeaseID, 1)
		require.True(t, exp.After(before.Add(290*time.Second)), "extending by 1 s shortened the 300 s lease to %s", exp)
		longer := smExtend(t, a, m.LeaseID, 600)
		require.True(t, longer.After(before.Add(590*time.Second)), "%s", longer)
		require.True(t, longer.After(exp))
		require.Equal(t, longer, smExtend(t, a, m.LeaseID, 1))
		smAckOK(t, a, m, "completed", "")
	})

	t.Run("MultiPartitionLeaseExtendsTogether", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("mlease")
		smConfigure(t, a, q, "", map[string]any{"leaseTime": 1})
		for i := range 3 {
			smPush(t, a, q, fmt.Sprintf("p%d", i), fmt.Sprintf("t%d", i))
		}
		res := smPop(t, a, smPopPath(q, "", "partitions", "3", "batch", "10"))
		require.NotNil(t, res)
		require.Equal(t, 3, res.PartitionsClaimed)
		require.Len(t, res.Messages, 3)
		smExtend(t, a, res.LeaseID, 30)
		time.Sleep(1500 * time.Millisecond) // scenario: the original 1 s lease would have expired
		smNoMessage(t, a, smPopPath(q, "", "partitions", "3", "batch", "10"))
		for i := range 3 {
			smNoMessage(t, a, smPopPath(q, fmt.Sprintf("p%d", i)))
		}
		for _, m := range res.Messages {
			smAckOK(t, a, m, "completed", "")
		}
	})

	t.Run("UnknownLease", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		smError(t, a, "POST", "/api/v1/lease/"+uuid.NewString()+"/extend", map[string]any{"seconds": 10}, http.StatusNotFound)
		smError(t, a, "POST", "/api/v1/lease/not-a-lease/extend", map[string]any{}, http.StatusNotFound)
	})
}

// ---------------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------------

type smTxResult struct {
	TransactionID string           `json:"transactionId"`
	Success       bool             `json:"success"`
	Error         string           `json:"error"`
	Results       []map[string]any `json:"results"`
}

func smTx(t testing.TB, a *api, ops ...map[string]any) smTxResult {
	t.Helper()
	var res smTxResult
	raw := smJSON(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": ops}, http.StatusOK, &res)
	require.NotNil(t, res.Results, "%s", raw)
	return res
}

func smTxAck(m smMessage, status, lease string) map[string]any {
	return map[string]any{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID,
		"leaseId": lease, "status": status, "consumerGroup": m.ConsumerGroup}
}

func smTxPush(q string, txs ...string) map[string]any {
	items := make([]map[string]any, len(txs))
	for i, tx := range txs {
		items[i] = map[string]any{"queue": q, "payload": map[string]any{"out": tx}, "transactionId": tx}
	}
	return map[string]any{"type": "push", "items": items}
}

func TestSemanticsTransaction(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("AckAndPushCommitTogether", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("txin"), smName("txout")
		smConfigure(t, a, in, "", map[string]any{"leaseTime": 1})
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxAck(m, "completed", m.LeaseID), smTxPush(out, "o1", "o2"))
		require.True(t, res.Success, "%+v", res)
		require.Len(t, res.Results, 3)
		require.Equal(t, "ack", res.Results[0]["type"])
		require.Equal(t, true, res.Results[0]["success"])
		for i, tx := range []string{"o1", "o2"} {
			r := res.Results[i+1]
			require.Equal(t, "push", r["type"])
			require.Equal(t, true, r["success"])
			require.Equal(t, tx, r["transactionId"])
			require.Equal(t, out, r["queueName"])
		}
		require.Equal(t, []string{"o1", "o2"}, smDrain(t, a, out, ""))
		// The input is consumed: nothing comes back, not even after its 1 s lease would have expired.
		smNoMessage(t, a, smPopPath(in, "", "wait", "true", "timeout", "2000"))
	})

	t.Run("DuplicatePushRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("dupin"), smName("dupout")
		smPush(t, a, out, "", "taken")
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxAck(m, "completed", m.LeaseID), smTxPush(out, "fresh", "taken"))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Contains(t, res.Error, "taken")
		require.Empty(t, res.Results)
		// No trace: the other output was not stored ...
		require.Equal(t, []string{"taken"}, smDrain(t, a, out, ""))
		// ... and the input is still leased and unacked: "retry" under its lease succeeds and it
		// is delivered again.
		r := smAckOK(t, a, m, "retry", "")
		require.True(t, r.LeaseReleased)
		again := smOne(t, a, smPopPath(in, ""))
		require.Equal(t, "input", again.TransactionID)
		smAckOK(t, a, again, "completed", "")
	})

	t.Run("RejectedAckRollsBackEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		in, out := smName("rejin"), smName("rejout")
		smPush(t, a, in, "", "input")
		m := smOne(t, a, smPopPath(in, ""))
		res := smTx(t, a, smTxPush(out, "o1"), smTxAck(m, "completed", uuid.NewString()))
		require.False(t, res.Success)
		require.True(t, strings.HasPrefix(res.Error, "QTXN"), "%q", res.Error)
		require.Contains(t, res.Error, "invalid or expired lease")
		require.Empty(t, res.Results)
		smNoMessage(t, a, smPopPath(out, ""))
		r := smAckOK(t, a, m, "completed", "")
		require.False(t, r.Noop, "the rolled-back transaction must not have acked the input")
		require.True(t, r.LeaseReleased)
	})

	t.Run("FailedAckSpendsRetryBudget", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("txfail")
		smConfigure(t, a, q, "", map[string]any{"retryLimit": 1, "retryDelay": 0})
		smPush(t, a, q, "", "f1")
		m := smOne(t, a, smPopPath(q, ""))
		res := smTx(t, a, smTxAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, false, res.Results[0]["dlq"])
		m = smOne(t, a, smPopPath(q, ""))
		require.Equal(t, 1, m.RetryCount)
		res = smTx(t, a, smTxAck(m, "failed", m.LeaseID))
		require.True(t, res.Success, "%+v", res)
		require.Equal(t, true, res.Results[0]["dlq"])
		smNoMessage(t, a, smPopPath(q, ""))
		require.Equal(t, 1, smDLQ(t, a, "queue", q).Total)
	})

	t.Run("BadRequests", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		require.Equal(t, "operations array required",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{}, http.StatusBadRequest))
		require.Equal(t, "operations array required",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": "x"}, http.StatusBadRequest))
		require.Equal(t, "operations array cannot be empty",
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": []any{}}, http.StatusBadRequest))
		for _, op := range []any{
			map[string]any{"type": "publish", "queue": "q"},
			42,
			map[string]any{"type": "ack"},
			map[string]any{"type": "ack", "transactionId": "t", "partitionId": "not-a-uuid"},
			map[string]any{"type": "push", "items": "nope"},
		} {
			smError(t, a, "POST", "/api/v1/transaction", map[string]any{"operations": []any{op}}, http.StatusBadRequest)
		}
	})
}

// ---------------------------------------------------------------------------------------------------
// Namespace/task pop and queue deletion
// ---------------------------------------------------------------------------------------------------

func TestSemanticsNamespacePop(t *testing.T) {
	t.Parallel()
	// The safety re-check of parked pops is far beyond every timeout here: a parked pop answered with a
	// message was woken by the push.
	base := smStart(t, map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "60000"})

	t.Run("AutoCreatedQueueNamespaceTask", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		ns := strings.ReplaceAll(smName("ns"), "-", "")
		task := strings.ReplaceAll(smName("task"), "-", "")
		q := ns + "." + task + ".x"
		smPush(t, a, q, "", "auto")
		smNoMessage(t, a, "/api/v1/pop"+smQuery("namespace", ns, "task", "other"))
		smNoMessage(t, a, "/api/v1/pop"+smQuery("namespace", "other"+ns, "task", task))
		res := smPop(t, a, "/api/v1/pop"+smQuery("namespace", ns, "task", task))
		require.NotNil(t, res)
		require.Equal(t, q, res.Queue)
		require.Equal(t, "auto", res.Messages[0].TransactionID)
		smAckOK(t, a, res.Messages[0], "completed", "")
		smPush(t, a, q, "", "bytask")
		res = smPop(t, a, "/api/v1/pop"+smQuery("task", task))
		require.NotNil(t, res)
		require.Equal(t, "bytask", res.Messages[0].TransactionID)
		smAckOK(t, a, res.Messages[0], "completed", "")
		smError(t, a, "GET", "/api/v1/pop", nil, http.StatusBadRequest)
	})

	t.Run("LongPollWokenByPushToAnyMatchingQueue", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		ns := strings.ReplaceAll(smName("nslp"), "-", "")
		qa, qb := ns+".t.a", ns+".t.b"
		smConfigure(t, a, qa, ns, nil) // configure sets namespace/task as given ("" when absent)
		smConfigure(t, a, qb, ns, nil)
		done := make(chan *smPopResult, 1)
		go func() {
			st, body, err := smRawGet(t, base+"/api/v1/pop"+smQuery("namespace", ns, "wait", "true", "timeout", "10000"))
			var res *smPopResult
			if err == nil && st == http.StatusOK && json.Unmarshal(body, &res) != nil {
				res = nil
			}
			done <- res
		}()
		time.Sleep(300 * time.Millisecond) // scenario: the push arrives while the pop is parked
		smPush(t, a, qb, "", "wake")
		res := <-done
		require.NotNil(t, res, "long-poll not answered with the pushed message")
		require.Equal(t, qb, res.Queue)
		require.Equal(t, "wake", res.Messages[0].TransactionID)
	})

	t.Run("LongPollSeesQueueCreatedWhileParked", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		ns := strings.ReplaceAll(smName("nsnew"), "-", "")
		smConfigure(t, a, ns+".t.a", ns, nil)
		done := make(chan int, 1)
		go func() {
			st, _, _ := smRawGet(t, base+"/api/v1/pop"+smQuery("namespace", ns, "wait", "true", "timeout", "4000"))
			done <- st
		}()
		time.Sleep(300 * time.Millisecond) // scenario: the matching queue is created while the pop is parked
		smPush(t, a, ns+".t.new", "", "late-queue")
		// A parked namespace pop finds, and is woken by, a matching queue created after it parked.
		require.Equal(t, http.StatusOK, <-done, "a push to a newly created matching queue must answer the parked pop")
	})
}

func TestSemanticsDeleteQueue(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("RemovesEverything", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("delq"), smName("gdelq")
		smPush(t, a, q, "pa", "a1")
		smPush(t, a, q, "pb", "b1")
		require.Equal(t, []string{"a1", "b1"}, smSorted(smDrain(t, a, q, g)))
		smPush(t, a, q, "pa", "a2")

		var res struct {
			Deleted bool   `json:"deleted"`
			Queue   string `json:"queue"`
		}
		smJSON(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, &res)
		require.True(t, res.Deleted)
		require.Equal(t, q, res.Queue)
		smNoMessage(t, a, smPopPath(q, ""))
		smNoMessage(t, a, smPopPath(q, "pa"))
		smError(t, a, "GET", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		smError(t, a, "GET", "/api/v1/consumer-groups/"+g, nil, http.StatusNotFound)
		smError(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusNotFound)
		smError(t, a, "DELETE", "/api/v1/resources/queues/"+smName("never"), nil, http.StatusNotFound)

		// A new push recreates the queue, empty but for the new message.
		smPush(t, a, q, "pa", "again")
		require.Equal(t, []string{"again"}, smDrain(t, a, q, ""))
		require.Equal(t, []string{"again"}, smDrain(t, a, q, g))
	})

	t.Run("RecreatedQueueHasNoOldMaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("delmax")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 1})
		smPush(t, a, q, "", "m0")
		smJSON(t, a, "DELETE", "/api/v1/resources/queues/"+q, nil, http.StatusOK, nil)
		// The queue is auto-created again by this push, without a maxSize.
		// The deleted queue's maxSize does not outlive it.
		smPush(t, a, q, "", "n1", "n2")
		require.Equal(t, []string{"n1", "n2"}, smDrain(t, a, q, ""))
	})
}

func TestSemanticsTransactionLimits(t *testing.T) {
	t.Parallel()
	base := smStart(t, nil)

	t.Run("DuplicateWithinOneTransaction", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		out := smName("dupself")
		res := smTx(t, a, smTxPush(out, "same", "same"))
		require.False(t, res.Success, "%+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QDUP"), "%q", res.Error)
		require.Empty(t, res.Results)
		smNoMessage(t, a, smPopPath(out, ""))
	})

	t.Run("TransactionalPushRespectsMaxSize", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("txmax")
		smConfigure(t, a, q, "", map[string]any{"maxSize": 1})
		smPush(t, a, q, "", "m0")
		res := smTx(t, a, smTxPush(q, "over"))
		// maxSize holds for transactional pushes too (QFULL rolls the transaction back).
		require.False(t, res.Success, "a transactional push into a full queue must not commit: %+v", res)
		require.True(t, strings.HasPrefix(res.Error, "QFULL"), "%q", res.Error)
		require.Equal(t, []string{"m0"}, smDrain(t, a, q, ""))
	})
}
