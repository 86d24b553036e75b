package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestQuotaAcrossProxyProcesses: two queen-proxy processes on one database, 60 concurrent single-item
// pushes split between them against a monthly quota of 5: exactly 5 are accepted, the broker stores
// exactly 5, and the month's counter says 5. The processes share nothing but the database, as two
// deployed instances do.
func TestQuotaAcrossProxyProcesses(t *testing.T) {
	t.Parallel()
	const quota, pushes, secret = 5, 60, "quota-test-secret-0123456789abcdef"
	broker := testenv.StartBroker(t, map[string]string{"JWT_ENABLED": "true", "JWT_ALGORITHM": "HS256", "JWT_SECRET": secret})
	dbURL := testenv.NewDatabase(t)
	st, err := proxystore.Open(t.Context(), dbURL, "")
	require.NoError(t, err)
	t.Cleanup(st.Close)
	_, err = proxy.CreatePlan(t.Context(), st, proxystore.Plan{Name: "small", MaxPayloadBytes: 1 << 20, MaxBatchItems: 100,
		MonthlyMessageQuota: quota})
	require.NoError(t, err)
	const host = "acme.queen.test"
	_, err = proxy.CreateCluster(t.Context(), st, proxystore.CreateClusterParams{Name: "acme", Hosts: []string{host},
		UpstreamURL: broker.URL, Plan: "small"})
	require.NoError(t, err)
	_, key, err := proxy.CreateKey(t.Context(), st, "acme", "producer", []string{"read-write"})
	require.NoError(t, err)

	urls := []string{startProxyProcess(t, dbURL, secret), startProxyProcess(t, dbURL, secret)}
	statuses := make(chan int, pushes)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range pushes {
		wg.Go(func() {
			<-start
			body, _ := json.Marshal(map[string]any{"items": []map[string]any{{"queue": "metered", "payload": i,
				"transactionId": fmt.Sprint("m-", i)}}})
			req, err := http.NewRequestWithContext(t.Context(), "POST", urls[i%2]+"/api/v1/push", bytes.NewReader(body))
			if err != nil {
				statuses <- 0
				return
			}
			req.Host = host
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	accepted := 0
	for s := range statuses {
		switch s {
		case http.StatusCreated:
			accepted++
		case http.StatusForbidden: // quota_exceeded
		default:
			t.Errorf("push answered %d", s)
		}
	}
	require.Equal(t, quota, accepted, "accepted pushes across the two processes")

	req, err := http.NewRequestWithContext(t.Context(), "GET", urls[0]+"/api/v1/pop/queue/metered?batch=100", nil)
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var popped struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&popped))
	require.Len(t, popped.Messages, quota, "the broker stored exactly the quota")
	cid, err := st.ClusterIDByName(t.Context(), "acme")
	require.NoError(t, err)
	used, err := st.MonthlyMessages(t.Context(), cid, proxystore.Month(time.Now()))
	require.NoError(t, err)
	require.EqualValues(t, quota, used, "the month's counter")
}

// startProxyProcess runs this binary's main as `queen-proxy serve` on a free loopback port and returns its
// URL once it answers; the process is stopped at cleanup.
func startProxyProcess(t *testing.T, dbURL, secret string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = []string{"QUEEN_PROXY_TEST_MAIN=1", "QUEEN_PROXY_HOST=127.0.0.1", "QUEEN_PROXY_PORT=" + strconv.Itoa(port),
		"QUEEN_PROXY_DATABASE_URL=" + dbURL, "QUEEN_PROXY_JWT_SECRET=" + secret, "QUEEN_PROXY_LOG_LEVEL=warn"}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		res, err := http.Get(url + "/_proxy/metrics")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "queen-proxy did not start")
	return url
}
