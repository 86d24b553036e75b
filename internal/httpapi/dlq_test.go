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

type deadLetter struct {
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

type dlqPage struct {
	Messages   []deadLetter `json:"messages"`
	Total      int          `json:"total"`
	Pagination struct {
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
	} `json:"pagination"`
}

func (a *api) dlq(kv ...string) dlqPage {
	t := a.t
	t.Helper()
	var p dlqPage
	a.json("GET", "/api/v1/dlq"+query(kv...), nil, http.StatusOK, &p)
	require.NotNil(t, p.Messages)
	return p
}

func TestRetriesAndDLQ(t *testing.T) {
	t.Parallel()
	srv := setupClock(t, pollEnv(nil))

	t.Run("ExhaustedRetriesRetryAndDelete", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, ga, gb := uniqueName("dlq"), uniqueName("ga"), uniqueName("gb")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 2, "retryDelay": 0}})
		a.pushTxs(q, "", "d1")
		require.Equal(t, []string{"d1"}, a.drain(q, gb))

		// retryLimit 2: two failures are retried (retryCount 0, 1 on delivery), the third delivery
		// (retryCount 2) failing exhausts the budget and dead-letters the message.
		path := popPath(q, "", "consumerGroup", ga)
		var m message
		for i := range 3 {
			m = a.popOne(path)
			require.Equal(t, "d1", m.TransactionID)
			require.Equal(t, i, m.RetryCount)
			r := a.ackOK(m, "failed", fmt.Sprintf("boom-%d", i))
			require.Equal(t, i == 2, r.DLQ, "attempt %d: %+v", i, r)
		}
		a.popNone(path)

		p := a.dlq("queue", q)
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
		var one deadLetter
		a.json("GET", row, nil, http.StatusOK, &one)
		require.Equal(t, d, one)

		// Retry serves it again to ga only; gb, which consumed it, does not see it again.
		a.json("POST", row+"/retry", nil, http.StatusOK, nil)
		a.errorText("GET", row, nil, http.StatusNotFound)
		a.popNone(popPath(q, "", "consumerGroup", gb))
		again := a.popOne(path)
		require.Equal(t, "d1", again.TransactionID)
		r := a.ackOK(again, "completed", "")
		require.False(t, r.Noop)
		a.popNone(path)
		a.popNone(popPath(q, "", "consumerGroup", gb))
		require.Equal(t, 0, a.dlq("queue", q).Total)

		// ack status dlq, then delete the dead letter.
		a.pushTxs(q, "", "d2")
		m2 := a.popOne(path)
		require.Equal(t, "d2", m2.TransactionID)
		r = a.ackOK(m2, "dlq", "manual")
		require.True(t, r.DLQ)
		a.popNone(path)
		row2 := "/api/v1/dlq/" + m2.PartitionID + "/d2"
		a.json("GET", row2, nil, http.StatusOK, &one)
		require.Equal(t, "manual", *one.ErrorMessage)
		require.Equal(t, ga, one.ConsumerGroup)
		a.json("DELETE", row2, nil, http.StatusOK, nil)
		a.errorText("GET", row2, nil, http.StatusNotFound)
		a.errorText("DELETE", row2, nil, http.StatusNotFound)
		a.errorText("POST", row2+"/retry", nil, http.StatusNotFound)
		a.popNone(path)
		// gb still gets d2 (its own cursor never saw it).
		require.Equal(t, []string{"d2"}, a.drain(q, gb))
	})

	t.Run("UnknownRows", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		for _, row := range []string{"/api/v1/dlq/" + uuid.NewString() + "/nope", "/api/v1/dlq/not-a-uuid/nope"} {
			a.errorText("GET", row, nil, http.StatusNotFound)
			a.errorText("DELETE", row, nil, http.StatusNotFound)
			a.errorText("POST", row+"/retry", nil, http.StatusNotFound)
		}
	})

	t.Run("ListFilters", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q1, q2, g1, g2 := uniqueName("dlf1"), uniqueName("dlf2"), uniqueName("gf1"), uniqueName("gf2")
		a.pushTxs(q1, "pa", "a1")
		a.pushTxs(q1, "pb", "b1")
		a.pushTxs(q2, "", "x1")
		dead := func(q, partition, group, errText string) {
			m := a.popOne(popPath(q, partition, "consumerGroup", group))
			require.True(t, a.ackOK(m, "dlq", errText).DLQ)
		}
		dead(q1, "pa", g1, "e-a")
		dead(q1, "pb", g1, "e-b")
		dead(q2, "", g1, "e-x")
		mid := srv.instant()
		dead(q1, "pa", g2, "e-c")

		errs := func(p dlqPage) []string {
			var out []string
			for _, d := range p.Messages {
				out = append(out, *d.ErrorMessage)
			}
			return out
		}
		p := a.dlq("queue", q1)
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 3)
		require.Equal(t, "e-c", *p.Messages[0].ErrorMessage, "newest failure first")
		require.Equal(t, []string{"e-a", "e-b", "e-c"}, sorted(errs(p)))

		p = a.dlq("queue", q1, "consumerGroup", g1)
		require.Equal(t, 2, p.Total)
		require.Equal(t, []string{"e-a", "e-b"}, sorted(errs(p)))
		p = a.dlq("consumerGroup", g1)
		require.Equal(t, 3, p.Total)
		require.Equal(t, []string{"e-a", "e-b", "e-x"}, sorted(errs(p)))
		p = a.dlq("queue", q1, "partition", "pa")
		require.Equal(t, []string{"e-a", "e-c"}, sorted(errs(p)))
		p = a.dlq("queue", q1, "partition", "pa", "consumerGroup", g2)
		require.Equal(t, []string{"e-c"}, errs(p))
		p = a.dlq("queue", q1, "from", mid)
		require.Equal(t, 1, p.Total)
		require.Equal(t, []string{"e-c"}, errs(p))
		p = a.dlq("queue", q1, "to", mid)
		require.Equal(t, 2, p.Total)
		require.Equal(t, []string{"e-a", "e-b"}, sorted(errs(p)))

		p = a.dlq("queue", q1, "limit", "1")
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 1)
		require.Equal(t, 1, p.Pagination.Limit)
		first := p.Messages[0].ErrorMessage
		p = a.dlq("queue", q1, "limit", "2", "offset", "2")
		require.Equal(t, 3, p.Total)
		require.Len(t, p.Messages, 1)
		require.Equal(t, 2, p.Pagination.Offset)
		require.NotEqual(t, *first, *p.Messages[0].ErrorMessage)

		a.errorText("GET", "/api/v1/dlq?from=yesterday", nil, http.StatusBadRequest)

		// total counts the filtered set even for a page past its end.
		p = a.dlq("queue", q1, "offset", "10")
		require.Empty(t, p.Messages)
		require.Equal(t, 3, p.Total, "total is the size of the filtered set, whatever the page")
	})

	t.Run("RetryDelay", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		b := srv
		a := b.rawFor(t)
		q := uniqueName("rdelay")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 3, "retryDelay": 600_000}})
		a.pushTxs(q, "", "r1")
		m := a.popOne(popPath(q, ""))
		failedAt := b.clock.Now()
		r := a.ackOK(m, "failed", "transient")
		require.False(t, r.DLQ)
		require.True(t, r.LeaseReleased)
		again := b.heldFor600s(t, a, q)
		require.GreaterOrEqual(t, b.clock.Now().Sub(failedAt), 600*time.Second, "redelivered before retryDelay")
		require.Equal(t, "r1", again.TransactionID)
		require.Equal(t, 1, again.RetryCount)
		a.ackOK(again, "completed", "")
		a.popNone(popPath(q, ""))
	})

	t.Run("AckStatusRetryDoesNotSpendBudget", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("rstat")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 1, "retryDelay": 0}})
		a.pushTxs(q, "", "s1")
		path := popPath(q, "")
		m := a.popOne(path)
		r := a.ackOK(m, "retry", "")
		require.True(t, r.LeaseReleased)
		require.False(t, r.DLQ)
		m = a.popOne(path)
		require.Equal(t, 0, m.RetryCount)
		require.False(t, a.ackOK(m, "failed", "x").DLQ)
		m = a.popOne(path)
		require.Equal(t, 1, m.RetryCount)
		a.ackOK(m, "retry", "")
		m = a.popOne(path)
		require.Equal(t, 1, m.RetryCount)
		require.True(t, a.ackOK(m, "failed", "").DLQ)
		a.popNone(path)
		p := a.dlq("queue", q)
		require.Equal(t, 1, p.Total)
		require.Equal(t, "Retries exhausted", *p.Messages[0].ErrorMessage)
	})
}
