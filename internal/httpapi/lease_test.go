package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

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

func TestLeaseExtend(t *testing.T) {
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

	t.Run("ReleasedLeaseIsReportedNotAnError", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("rlease")
		smPush(t, a, q, "", "r1")
		m := smOne(t, a, smPopPath(q, ""))
		smAckOK(t, a, m, "completed", "") // the ack releases the lease: its expiry is cleared
		var res []smLease
		smJSON(t, a, "POST", "/api/v1/lease/"+m.LeaseID+"/extend", map[string]any{"seconds": 10}, http.StatusOK, &res)
		require.Len(t, res, 1)
		require.False(t, res[0].Success, "a released lease cannot be extended")
		require.NotNil(t, res[0].Error)
		require.Nil(t, res[0].ExpiresAt)
	})

	t.Run("UnknownLease", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		smError(t, a, "POST", "/api/v1/lease/"+uuid.NewString()+"/extend", map[string]any{"seconds": 10}, http.StatusNotFound)
		smError(t, a, "POST", "/api/v1/lease/not-a-lease/extend", map[string]any{}, http.StatusNotFound)
	})
}
