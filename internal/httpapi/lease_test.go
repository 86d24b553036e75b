package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

type leaseInfo struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *string `json:"expiresAt"`
}

func (a *api) extend(lease string, seconds int) time.Time {
	t := a.t
	t.Helper()
	var res []leaseInfo
	a.json("POST", "/api/v1/lease/"+lease+"/extend", map[string]any{"seconds": seconds}, http.StatusOK, &res)
	require.Len(t, res, 1)
	require.True(t, res[0].Success, "%+v", res[0])
	require.Equal(t, lease, res[0].LeaseID)
	require.NotNil(t, res[0].ExpiresAt)
	return parseTime(t, *res[0].ExpiresAt)
}

func TestLeaseExtend(t *testing.T) {
	t.Parallel()
	srv := setupClock(t, pollEnv(nil))

	t.Run("ExtendsNeverShortens", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("lease")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"leaseTime": 300}})
		a.pushTxs(q, "", "l1")
		before := time.Now()
		m := a.popOne(popPath(q, ""))
		exp := a.extend(m.LeaseID, 1)
		require.True(t, exp.After(before.Add(290*time.Second)), "extending by 1 s shortened the 300 s lease to %s", exp)
		longer := a.extend(m.LeaseID, 600)
		require.True(t, longer.After(before.Add(590*time.Second)), "%s", longer)
		require.True(t, longer.After(exp))
		require.Equal(t, longer, a.extend(m.LeaseID, 1))
		a.ackOK(m, "completed", "")
	})

	t.Run("MultiPartitionLeaseExtendsTogether", func(t *testing.T) {
		// It advances the broker's clock, so it runs alone, before the parallel subtests start.
		b := srv
		a := b.rawFor(t)
		q := uniqueName("mlease")
		configure(t, a, map[string]any{"queue": q, "options": map[string]any{"leaseTime": 60}})
		for i := range 3 {
			a.pushTxs(q, fmt.Sprintf("p%d", i), fmt.Sprintf("t%d", i))
		}
		res := a.pop(popPath(q, "", "partitions", "3", "batch", "10"))
		require.NotNil(t, res)
		require.Equal(t, 3, res.PartitionsClaimed)
		require.Len(t, res.Messages, 3)
		a.extend(res.LeaseID, 600)
		b.clock.Advance(120 * time.Second) // the original 60 s lease would have expired
		a.popNone(popPath(q, "", "partitions", "3", "batch", "10"))
		for i := range 3 {
			a.popNone(popPath(q, fmt.Sprintf("p%d", i)))
		}
		for _, m := range res.Messages {
			a.ackOK(m, "completed", "")
		}
	})

	t.Run("ReleasedLeaseIsReportedNotAnError", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("rlease")
		a.pushTxs(q, "", "r1")
		m := a.popOne(popPath(q, ""))
		a.ackOK(m, "completed", "") // the ack releases the lease: its expiry is cleared
		var res []leaseInfo
		a.json("POST", "/api/v1/lease/"+m.LeaseID+"/extend", map[string]any{"seconds": 10}, http.StatusOK, &res)
		require.Len(t, res, 1)
		require.False(t, res[0].Success, "a released lease cannot be extended")
		require.NotNil(t, res[0].Error)
		require.Nil(t, res[0].ExpiresAt)
	})

	t.Run("UnknownLease", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		a.errorText("POST", "/api/v1/lease/"+uuid.NewString()+"/extend", map[string]any{"seconds": 10}, http.StatusNotFound)
		a.errorText("POST", "/api/v1/lease/not-a-lease/extend", map[string]any{}, http.StatusNotFound)
	})
}
