package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

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

func TestRetriesAndDLQ(t *testing.T) {
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
