package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// EnvShots names the directory the browser tests write their screenshots to (default: a temporary
// directory, logged). `make dashboard-shots` points it at docs/dashboard.
const EnvShots = "QUEEN_DASHBOARD_SHOTS"

// chromiumPath finds the system Chromium (scripts/ensure-chromium.sh installs Debian's package).
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on this machine: run scripts/ensure-chromium.sh (make test does)")
	return ""
}

func shotsDir(t *testing.T) string {
	d := os.Getenv(EnvShots)
	if d == "" {
		d = filepath.Join(os.TempDir(), "queen-dashboard-shots")
	}
	require.NoError(t, os.MkdirAll(d, 0o755))
	t.Logf("screenshots in %s", d)
	return d
}

// browser is one headless Chromium tab with the console watched for errors.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
	log  *consoleLog
}

type consoleLog struct {
	mu       sync.Mutex
	errors   []string
	expected func(chromedp.ConsoleMessage) bool // messages a test provokes on purpose
}

// in returns the same tab reporting failures to t (a subtest).
func (b *browser) in(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

func newBrowser(t *testing.T, base string, width, height int) *browser {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &browser{t: t, ctx: bctx, base: base, dir: shotsDir(t), log: &consoleLog{}}
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(int64(width), int64(height))))
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException {
				continue
			}
			l := b.log
			l.mu.Lock()
			if l.expected == nil || !l.expected(m) {
				l.errors = append(l.errors, fmt.Sprintf("%s (%s)", m.String(), m.URL))
			}
			l.mu.Unlock()
		}
	}()
	return b
}

// open navigates to path and waits for a selector that only rendered data shows.
func (b *browser) open(path, ready string) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Do(b.ctx, chromedp.Navigate(b.base+path), chromedp.WaitVisible(ready)), "open %s", path)
}

// darkTheme stores the operator's theme choice before the pages load (headless Chromium prefers light).
func (b *browser) darkTheme() {
	b.t.Helper()
	b.open("/", "#app")
	_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(localStorage.setItem('queen.theme', 'dark'), true)`))
	require.NoError(b.t, err)
}

func (b *browser) waitJS(expr string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(b.t, err, "waiting for %s", expr)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	require.NoError(b.t, err, sel)
	return strings.TrimSpace(s)
}

// waitText waits until the element's text is want (data refreshes asynchronously).
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.trim() === %q; })()`, sel, want)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		got, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{innerText:'<missing>'}).innerText`, sel)))
		b.t.Fatalf("%s: want %q, got %q", sel, want, got)
	}
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	require.NoError(b.t, err)
	return n
}

func (b *browser) click(sel string) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Do(b.ctx, chromedp.WaitVisible(sel), chromedp.Click(sel)), "click %s", sel)
}

// shot writes the viewport (or the whole page) as name.png.
func (b *browser) shot(name string, full bool) {
	b.t.Helper()
	// Let charts measure their width and the last fetches settle before the picture.
	require.NoError(b.t, chromedp.Do(b.ctx, chromedp.Sleep(300*time.Millisecond)))
	var png []byte
	var err error
	if full {
		png, err = chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	}
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644))
}

func (b *browser) requireNoConsoleErrors() {
	b.t.Helper()
	b.log.mu.Lock()
	defer b.log.mu.Unlock()
	require.Empty(b.t, b.log.errors, "console errors")
}

// ---- the broker side

type client struct {
	t     *testing.T
	base  string
	token string
}

func (c *client) do(method, path string, body any, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, rd)
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.Less(c.t, resp.StatusCode, 300, "%s %s: %d %s", method, path, resp.StatusCode, raw)
	if out != nil && len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, out), "%s", raw)
	}
	return resp.StatusCode
}

type popped struct {
	LeaseID  string `json:"leaseId"`
	Messages []struct {
		TransactionID string `json:"transactionId"`
		PartitionID   string `json:"partitionId"`
	} `json:"messages"`
}

func (c *client) push(queue, partition string, n int, payload func(i int) any) {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"queue": queue, "partition": partition, "payload": payload(i)}
	}
	c.do("POST", "/api/v1/push", map[string]any{"items": items}, nil)
}

func (c *client) pop(path string) popped {
	var p popped
	c.do("GET", path, nil, &p)
	return p
}

// seed builds the state every page shows:
//   - orders (shop/billing): p1 4 messages, p2 3, p3 3; queue mode consumed p1;
//     group "analytics" took one message from each partition (lags 3, 2, 2); trace "order-42";
//   - payments: 2 messages, both failed with retryLimit 0, so 2 dead letters;
//   - emails: 5 pending messages.
func seed(c *client) {
	c.do("POST", "/api/v1/configure", map[string]any{"queue": "orders", "namespace": "shop", "task": "billing",
		"options": map[string]any{"leaseTime": 60, "retryLimit": 3}}, nil)
	for p, n := range map[string]int{"p1": 4, "p2": 3, "p3": 3} {
		c.push("orders", p, n, func(i int) any { return map[string]any{"orderId": fmt.Sprintf("%s-%d", p, i), "amount": 10 + i} })
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		got := c.pop("/api/v1/pop/queue/orders/partition/" + p + "?consumerGroup=analytics&subscriptionMode=all&batch=1&autoAck=true")
		require.Len(c.t, got.Messages, 1)
	}
	got := c.pop("/api/v1/pop/queue/orders/partition/p1?batch=10")
	require.Len(c.t, got.Messages, 4)
	for _, m := range got.Messages {
		c.do("POST", "/api/v1/ack", map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID,
			"leaseId": got.LeaseID, "status": "completed"}, nil)
	}
	c.do("POST", "/api/v1/traces", map[string]any{"transactionId": got.Messages[0].TransactionID,
		"partitionId": got.Messages[0].PartitionID, "data": map[string]any{"text": "order placed"},
		"traceNames": []string{"order-42"}, "eventType": "info"}, nil)

	c.do("POST", "/api/v1/configure", map[string]any{"queue": "payments", "options": map[string]any{"retryLimit": 0}}, nil)
	c.push("payments", "", 2, func(i int) any { return map[string]any{"paymentId": i, "card": "4242"} })
	got = c.pop("/api/v1/pop/queue/payments?batch=10")
	require.Len(c.t, got.Messages, 2)
	for _, m := range got.Messages {
		c.do("POST", "/api/v1/ack", map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID,
			"leaseId": got.LeaseID, "status": "failed", "error": "card declined"}, nil)
	}
	c.push("emails", "", 5, func(i int) any { return map[string]any{"to": fmt.Sprintf("user%d@example.com", i)} })
}

// writeHistory adds an hour of operation counters for orders and emails, and of samples of the running
// broker, ending three minutes ago (so the live figures the other subtests check are untouched).
func writeHistory(t *testing.T, dbURL string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `
SET search_path = queenmq;
INSERT INTO queue_ops_history (bucket, queue_name, broker_id, push_requests, push_messages, pop_requests, pop_messages,
                               pop_empty, ack_success, ack_failed, dlq, lag_sum_ms, lag_count, lag_max_ms)
SELECT date_trunc('minute', now()) - make_interval(mins => i), q, 'history',
       20, round(600 + 400 * sin(i / 7.0) * w), 30, round(580 + 380 * sin((i - 2) / 7.0) * w), round(40 + 30 * cos(i / 5.0)),
       round(570 + 370 * sin((i - 2) / 7.0) * w), i % 11, i % 17 / 16,
       round((300 + 250 * sin(i / 9.0)) * 500), 500, round(900 + 700 * sin(i / 9.0))
FROM generate_series(3, 62) i, (VALUES ('orders', 1.0), ('emails', 0.4)) v(q, w);
INSERT INTO broker_samples (sampled_at, broker_id, hostname, port, pid, cpu_user_pct, cpu_sys_pct, rss_mb, goroutines,
                            sched_lag_avg_ms, sched_lag_max_ms, pool_size, pool_idle, pool_active, pool_waiting, parked,
                            parked_by_queue)
SELECT now() - make_interval(secs => i * 20), s.broker_id, s.hostname, s.port, s.pid,
       22 + 12 * sin(i / 21.0), 6 + 3 * cos(i / 17.0), 48 + 6 * sin(i / 40.0), 60 + (i % 9),
       0.05 + 0.04 * abs(sin(i / 13.0)), 0.4 + 0.3 * abs(sin(i / 11.0)), 20, 14 - (i % 5), 3 + (i % 5), i % 3, 4 + (i % 3),
       jsonb_build_object('orders', 2 + (i % 3), 'emails', 2)
FROM generate_series(9, 186) i, (SELECT broker_id, hostname, port, pid FROM broker_samples LIMIT 1) s;`)
	require.NoError(t, err)
}

// settle waits until the rolled-up stats, the operation counters and a broker sample have caught up
// with the seed (they are written every STATS_INTERVAL_MS).
func settle(c *client) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ov struct {
			Messages struct{ Total, Pending int } `json:"messages"`
		}
		var wm struct {
			Summary struct{ TotalPushMessages, WorkerCount int } `json:"summary"`
		}
		var dlq struct{ Total int }
		c.do("GET", "/api/v1/resources/overview", nil, &ov)
		c.do("GET", "/api/v1/analytics/worker-metrics", nil, &wm)
		c.do("GET", "/api/v1/dlq", nil, &dlq)
		if ov.Messages.Total == 17 && wm.Summary.TotalPushMessages == 17 && wm.Summary.WorkerCount == 1 && dlq.Total == 2 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("seed did not settle: overview %+v, worker metrics %+v, dlq %d", ov, wm, dlq.Total)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDashboardPages opens every page in headless Chromium against a broker with data, checks the
// numbers each shows, performs the operator actions and checks their effect through the API, and
// writes a screenshot of each page. No page may log a console error.
func TestDashboardPages(t *testing.T) {
	rb := testenv.StartBroker(t, map[string]string{"STATS_INTERVAL_MS": "300"})
	c := &client{t: t, base: rb.URL}
	seed(c)
	settle(c)
	b := newBrowser(t, rb.URL, 1280, 800)
	b.darkTheme()

	t.Run("dashboard", func(t *testing.T) {
		b := b.in(t)
		b.open("/", `[data-testid="stat-queues"]`)
		b.waitText(`[data-testid="stat-queues"] .stat-value`, "3")
		b.waitText(`[data-testid="stat-total"] .stat-value`, "17")
		b.waitText(`[data-testid="stat-partitions"] .stat-value`, "6") // Default + p1..p3, payments, emails
		b.waitText(`[data-testid="stat-groups"] .stat-value`, "3")     // analytics and queue mode on orders, queue mode on payments
		// Counts are relative to the slowest group: analytics consumed one message per partition, so 3
		// are completed and 7 pending although queue mode acked all 4 of p1.
		b.waitText(`[data-testid="stat-completed"] .stat-value`, "3")
		b.waitText(`[data-testid="stat-pending"] .stat-value`, "12") // 7 orders + 5 emails
		b.waitText(`[data-testid="stat-dlq"] .stat-value`, "2")
		b.waitJS(`document.querySelector('[data-testid="chart-Throughput"] svg path') !== null`)
		b.shot("dashboard", false)
	})
	t.Run("operations", func(t *testing.T) {
		b := b.in(t)
		b.open("/operations", `[data-testid="ops-push"]`)
		b.waitText(`[data-testid="ops-push"] .stat-value`, "17")
		require.Equal(t, 1, b.count(`[data-testid="workers"] tbody tr`))
		b.shot("operations", false)
	})
	t.Run("queues", func(t *testing.T) {
		b := b.in(t)
		b.open("/queues", `[data-testid="queue-orders"]`)
		require.Equal(t, 3, b.count(`.qcard`))
		b.waitText(`[data-testid="queue-orders"] [data-testid="q-pending"]`, "7")
		b.waitText(`[data-testid="queue-emails"] [data-testid="q-pending"]`, "5")
		b.shot("queues", false)
	})
	t.Run("queue detail and configure", func(t *testing.T) {
		b := b.in(t)
		b.open("/queues/orders", `[data-testid="qd-pending"]`)
		b.waitText(`[data-testid="qd-pending"] .stat-value`, "7")
		b.waitText(`[data-testid="qd-completed"] .stat-value`, "3")
		require.Equal(t, 4, b.count(`[data-testid="partitions"] tbody tr`))
		b.waitText(`[data-testid="cfg-leaseTime"]`, "60 s")
		b.shot("queue-detail", false)

		b.click(`[data-testid="configure"]`)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.WaitVisible(`[data-testid="configure-form"]`),
			chromedp.SetValue(`input[name="leaseTime"]`, "77"), chromedp.SetValue(`input[name="retryLimit"]`, "5")))
		// SetValue bypasses the input event the form listens to: fire it.
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`['leaseTime','retryLimit'].every(n => document.querySelector('input[name='+n+']').dispatchEvent(new Event('input', {bubbles: true})))`))
		require.NoError(t, err)
		b.shot("queue-configure", false)
		b.click(`[data-testid="configure-save"]`)
		b.waitText(`[data-testid="cfg-leaseTime"]`, "77 s")
		var st struct {
			Queue struct {
				Namespace string
				Config    struct{ LeaseTime, RetryLimit int }
			}
		}
		c.do("GET", "/api/v1/status/queues/orders", nil, &st)
		require.Equal(t, 77, st.Queue.Config.LeaseTime)
		require.Equal(t, 5, st.Queue.Config.RetryLimit)
		require.Equal(t, "shop", st.Queue.Namespace, "configure keeps the namespace")
	})
	t.Run("consumers and seek", func(t *testing.T) {
		b := b.in(t)
		card := `[data-testid="group-analytics-orders"]`
		b.open("/consumers", card)
		b.waitText(card+` [data-testid="g-consumed"]`, "3")
		b.click(`[data-testid="lag-presets"] button:first-child`)
		// Every partition of orders lags for analytics (2 or 3 messages each), p1 only for it.
		b.waitJS(`document.querySelectorAll('[data-testid="lagging"] tbody tr').length === 3`)
		b.shot("consumers", false)
		b.click(card + ` [data-testid="seek-end"]`)
		b.click(`[data-testid="confirm"]`)
		b.waitJS(`document.querySelector('[data-testid="confirm"]') === null`)
		var g map[string]struct {
			Partitions []struct {
				Partition string
				OffsetLag int `json:"offsetLag"`
			}
		}
		c.do("GET", "/api/v1/consumer-groups/analytics", nil, &g)
		require.Len(t, g["orders"].Partitions, 3)
		for _, p := range g["orders"].Partitions {
			require.Zero(t, p.OffsetLag, "partition %s after seek to end", p.Partition)
		}
	})
	t.Run("messages", func(t *testing.T) {
		b := b.in(t)
		b.open("/messages?queue=orders", `[data-testid="message-row"]`)
		b.waitJS(`document.querySelectorAll('[data-testid="message-row"]').length === 10`)
		b.shot("messages", false)
		b.click(`[data-testid="message-row"]`)
		b.waitJS(`(document.querySelector('[data-testid="payload"]')||{innerText:''}).innerText.includes('orderId')`)
		b.shot("message-detail", false)
	})
	t.Run("traces", func(t *testing.T) {
		b := b.in(t)
		b.open("/traces", `[data-testid="trace-chip"]`)
		b.click(`[data-testid="trace-chip"]`)
		b.waitJS(`(document.querySelector('[data-testid="traces"]')||{innerText:''}).innerText.includes('order placed')`)
		require.Equal(t, 1, b.count(`[data-testid="traces"] tbody tr`))
		b.shot("traces", false)
	})
	t.Run("analytics", func(t *testing.T) {
		b := b.in(t)
		b.open("/analytics", `[data-testid="an-total"]`)
		b.waitText(`[data-testid="an-total"] .stat-value`, "17")
		b.waitText(`[data-testid="an-ingested"] .stat-value`, "17")
		b.shot("analytics", false)
	})
	t.Run("dead letters and retry", func(t *testing.T) {
		b := b.in(t)
		b.open("/dlq", `[data-testid="dlq-row"]`)
		b.waitText(`[data-testid="dlq-total"]`, "2")
		require.Equal(t, 2, b.count(`[data-testid="dlq-row"]`))
		require.Contains(t, b.text(`[data-testid="dlq"]`), "card declined")
		b.shot("dlq", false)
		b.click(`[data-testid="dlq-row"] input[type="checkbox"]`)
		b.click(`[data-testid="dlq-retry"]`)
		b.click(`[data-testid="confirm"]`)
		b.waitJS(`document.querySelectorAll('[data-testid="dlq-row"]').length === 1`)
		var dlq struct{ Total int }
		c.do("GET", "/api/v1/dlq", nil, &dlq)
		require.Equal(t, 1, dlq.Total)
		// The retried message is served again.
		got := c.pop("/api/v1/pop/queue/payments?batch=10")
		require.Len(t, got.Messages, 1)
	})
	t.Run("system", func(t *testing.T) {
		b := b.in(t)
		b.open("/system", `[data-testid="servers"]`)
		b.waitText(`[data-testid="sys-health"] .stat-value`, "healthy")
		require.Equal(t, 1, b.count(`[data-testid="servers"] tbody tr`))
		b.waitJS(`document.querySelector('[data-testid="sys-cpu"] svg') !== null`)
		b.shot("system", false)
		b.click(`.seg button:nth-child(2)`)
		b.waitJS(`document.querySelector('[data-testid="pg-hit"]') !== null && document.querySelectorAll('[data-testid="pg-dead"] tbody tr').length > 0`)
		b.shot("system-postgres", false)
	})
	t.Run("maintenance", func(t *testing.T) {
		b := b.in(t)
		b.open("/migration", `.steps`)
		b.click(`[data-testid="toggle-push"]`)
		b.click(`[data-testid="confirm"]`)
		b.waitJS(`document.querySelector('[data-testid="banner-push"]') !== null`)
		var m struct{ MaintenanceMode bool }
		c.do("GET", "/api/v1/system/maintenance", nil, &m)
		require.True(t, m.MaintenanceMode)
		b.shot("migration", false)
		b.click(`[data-testid="toggle-push"]`)
		b.click(`[data-testid="confirm"]`)
		b.waitJS(`document.querySelector('[data-testid="banner-push"]') === null`)
		c.do("GET", "/api/v1/system/maintenance", nil, &m)
		require.False(t, m.MaintenanceMode)
	})
	// An hour of history (operation counters and broker samples as the stats and sample loops write
	// them) turns the single-bucket charts into lines; the pictures of docs/dashboard.md come from here.
	t.Run("charts over an hour", func(t *testing.T) {
		b := b.in(t)
		writeHistory(t, rb.DatabaseURL)
		b.open("/", `[data-testid="chart-Throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="chart-Throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("dashboard", false)
		b.click(`[data-testid="theme"]`)
		b.waitJS(`document.documentElement.dataset.theme === 'light'`)
		b.shot("dashboard-light", false)
		b.click(`[data-testid="theme"]`)
		b.open("/operations", `[data-testid="ops-throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="ops-throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("operations", false)
		b.open("/queues/orders", `[data-testid="qd-throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="qd-throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("queue-detail", false)
		b.open("/system", `[data-testid="sys-cpu"]`)
		b.waitJS(`(document.querySelector('[data-testid="sys-cpu"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("system", false)
		b.open("/analytics", `[data-testid="an-flow"]`)
		b.waitJS(`(document.querySelector('[data-testid="an-flow"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("analytics", false)
	})
	// At a phone's width the sidebar folds into a menu and no page needs horizontal scrolling.
	t.Run("phone", func(t *testing.T) {
		b := newBrowser(t, rb.URL, 390, 844).in(t)
		b.darkTheme()
		for _, p := range []struct{ path, ready string }{{"/", `[data-testid="stat-queues"]`}, {"/queues/orders", `[data-testid="qd-pending"]`}, {"/dlq", `[data-testid="dlq-row"]`}} {
			b.open(p.path, p.ready)
			fits, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
			require.NoError(t, err)
			if !fits {
				wide, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(-6).map(e => e.tagName + '.' + e.className).join(' | ')`))
				t.Fatalf("%s is wider than a phone; widest elements: %s", p.path, wide)
			}
		}
		b.open("/", `[data-testid="stat-queues"]`)
		b.waitText(`[data-testid="stat-queues"] .stat-value`, "3")
		b.shot("dashboard-phone", true)
		b.click(`.burger`)
		b.waitJS(`document.querySelector('.side').getBoundingClientRect().left >= 0`)
		b.shot("menu-phone", false)
		b.requireNoConsoleErrors()
	})
	b.requireNoConsoleErrors()
}

// TestDashboardAuth: with JWT on, the static app still loads, asks for a token after the API's 401
// instead of showing an empty page, and works once given one.
func TestDashboardAuth(t *testing.T) {
	const secret = "dashboard-test-secret-0123456789abcdef"
	rb := testenv.StartBroker(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret})
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "operator", "role": "admin",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
	require.NoError(t, err)
	roTok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "viewer", "role": "read-only",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
	require.NoError(t, err)
	c := &client{t: t, base: rb.URL, token: tok}
	c.do("POST", "/api/v1/push", map[string]any{"items": []any{map[string]any{"queue": "secured", "payload": map[string]any{"n": 1}}}}, nil)

	b := newBrowser(t, rb.URL, 1280, 800)
	// The 401 and 403 answers are provoked here: Chromium logs each as a failed resource load.
	b.log.expected = func(m chromedp.ConsoleMessage) bool {
		return m.Source == "network" && (strings.Contains(m.Text, "401") || strings.Contains(m.Text, "403"))
	}
	b.open("/", `[data-testid="auth"]`)
	require.Contains(t, b.text(`[data-testid="auth"]`), "requires a token")
	b.shot("auth-required", false)

	require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(`[data-testid="token-input"]`, roTok), chromedp.Click(`[data-testid="token-save"]`)))
	b.waitText(`[data-testid="stat-queues"] .stat-value`, "1")
	require.Zero(t, b.count(`[data-testid="toggle-push"]`), "the admin-only switches are hidden from a read-only token")
	// A read-only token may read every page but not delete a queue: a clear 403, in the dialog and above the page.
	b.open("/queues", `[data-testid="queue-secured"]`)
	b.click(`[data-testid="queue-secured"] button`)
	b.click(`[data-testid="confirm"]`)
	b.waitJS(`document.querySelector('[data-testid="auth"]') !== null`)
	require.Contains(t, b.text(`[data-testid="auth"]`), "403")
	require.Contains(t, b.text(`.modal [role="alert"]`), "Insufficient permissions")
	c.do("GET", "/api/v1/resources/queues/secured", nil, nil) // still there
	b.shot("auth-forbidden", false)
	b.click(`.modal button[aria-label="Close"]`)

	require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(`[data-testid="token-input"]`, tok), chromedp.Click(`[data-testid="token-save"]`)))
	b.waitJS(`document.querySelector('[data-testid="auth"]') === null`)
	b.open("/queues", `[data-testid="queue-secured"]`)
	b.waitJS(`document.querySelector('[data-testid="toggle-push"]') !== null`)
	b.requireNoConsoleErrors()
}
