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
	"github.com/stretchr/testify/assert"
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
	// A cap for a stuck browser, not the expected run time: on a loaded 2-core runner the whole
	// page tour has taken over three minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
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

// eval runs a JavaScript expression that returns JSON text and decodes it into out.
func (b *browser) eval(js string, out any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	require.NoError(b.t, err, js)
	require.NoError(b.t, json.Unmarshal([]byte(raw), out), raw)
}

// chartAxis is what axisJS reads from one chart: its time window, its x-axis ticks, the points and
// bars it drew, and what is wrong with them.
type chartAxis struct {
	From, To float64
	Ticks    []float64
	Points   []float64 // timestamps of the drawn points (charts of 40 points or fewer draw them)
	Bars     int
	Problems []string
}

// axisJS checks a chart's time axis in the page: each tick sits on a whole minute at the x its time
// maps to, is labelled with that time's HH:MM, the ticks are evenly spaced, and every point and bar
// lies at its timestamp inside the plot.
const axisJS = `((sel) => {
  const svg = document.querySelector(sel + ' svg');
  if (!svg) return JSON.stringify({Problems: ['no chart ' + sel]});
  const n = (k) => Number(svg.dataset[k]);
  const from = n('from'), to = n('to'), pl = n('pl'), pr = n('pr');
  const X = (t) => pl + ((t - from) / (to - from)) * (pr - pl);
  const p2 = (v) => String(v).padStart(2, '0');
  const out = {From: from, To: to, Ticks: [], Points: [], Bars: 0, Problems: []};
  for (const e of svg.querySelectorAll('text.xt')) {
    const t = Number(e.dataset.t), d = new Date(t), x = Number(e.getAttribute('x'));
    out.Ticks.push(t);
    if (t % 60000 !== 0) out.Problems.push('tick ' + t + ' is not on a whole minute');
    if (e.textContent !== p2(d.getHours()) + ':' + p2(d.getMinutes())) out.Problems.push('tick ' + d.toISOString() + ' labelled ' + e.textContent);
    if (Math.abs(x - X(t)) > 0.5) out.Problems.push('tick ' + e.textContent + ' at x ' + x + ', its time maps to ' + X(t));
    if (t < from || t > to) out.Problems.push('tick ' + e.textContent + ' outside the window');
  }
  if (out.Ticks.length < 2) out.Problems.push('fewer than two ticks');
  for (let i = 2; i < out.Ticks.length; i++) {
    if (out.Ticks[i] - out.Ticks[i - 1] !== out.Ticks[1] - out.Ticks[0]) out.Problems.push('uneven ticks ' + out.Ticks.join(','));
  }
  for (const c of svg.querySelectorAll('circle[data-t]')) {
    const t = Number(c.dataset.t), x = Number(c.getAttribute('cx'));
    out.Points.push(t);
    if (Math.abs(x - X(t)) > 0.5) out.Problems.push('point ' + t + ' at x ' + x + ', its time maps to ' + X(t));
  }
  for (const r of svg.querySelectorAll('rect[data-t]')) {
    out.Bars++;
    const x = Number(r.getAttribute('x')), w = Number(r.getAttribute('width'));
    if (x < pl - 0.5 || x + w > pr + 0.5) out.Problems.push('bar ' + r.dataset.t + ' spans ' + x + '..' + (x + w) + ', the plot ' + pl + '..' + pr);
  }
  return JSON.stringify(out);
})`

// checkAxis reads a chart's axis and fails on any problem axisJS found. The window must be the asked
// range ending at the moment the page read its data (between opened and now).
func (b *browser) checkAxis(sel string, span time.Duration, opened time.Time) chartAxis {
	b.t.Helper()
	var a chartAxis
	b.eval(axisJS+fmt.Sprintf("(%q)", sel), &a)
	require.Empty(b.t, a.Problems, sel)
	require.Equal(b.t, float64(span.Milliseconds()), a.To-a.From, "%s: the window is the range", sel)
	require.GreaterOrEqual(b.t, a.To, float64(opened.Add(-time.Second).UnixMilli()), "%s: the window ends when the page read its data", sel)
	require.LessOrEqual(b.t, a.To, float64(time.Now().UnixMilli()), "%s: the window ends when the page read its data", sel)
	return a
}

// overflowJS lists what a page cuts off: the page wider than the window, a table wider than its
// scroll box, a tile whose value is clipped.
const overflowJS = `JSON.stringify([
  ...(document.documentElement.scrollWidth > window.innerWidth ? ['page ' + document.documentElement.scrollWidth + ' px wide'] : []),
  ...[...document.querySelectorAll('.scroll')].filter((e) => e.scrollWidth > e.clientWidth + 1)
    .map((e) => 'table in "' + ((e.closest('.card') || {}).innerText || '').split(String.fromCharCode(10))[0] + '" needs ' + e.scrollWidth + ' px, has ' + e.clientWidth),
  ...[...document.querySelectorAll('.stat-value, .stat-hint')].filter((e) => e.scrollWidth > e.clientWidth + 1)
    .map((e) => 'tile text "' + e.innerText + '" clipped'),
])`

// ---- the broker side

type client struct {
	t     *testing.T
	base  string
	token string
}

func (c *client) do(method, path string, body any, out any) int {
	c.t.Helper()
	return c.doOn(c.t, method, path, body, out)
}

// tester is *testing.T or, in the condition of require.EventuallyWithT (which runs off the test
// goroutine), *assert.CollectT.
type tester interface {
	require.TestingT
	Helper()
}

// doOn is do asserting on t, which may be the condition's *assert.CollectT.
func (c *client) doOn(t tester, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, "%s %s: %d %s", method, path, resp.StatusCode, raw)
	if out != nil && len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
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
	c.t.Helper()
	require.EventuallyWithT(c.t, func(ct *assert.CollectT) {
		var ov struct {
			Messages struct{ Total, Pending int } `json:"messages"`
		}
		var wm struct {
			Summary struct{ TotalPushMessages, WorkerCount int } `json:"summary"`
		}
		var dlq struct{ Total int }
		c.doOn(ct, "GET", "/api/v1/resources/overview", nil, &ov)
		c.doOn(ct, "GET", "/api/v1/analytics/worker-metrics", nil, &wm)
		c.doOn(ct, "GET", "/api/v1/dlq", nil, &dlq)
		assert.True(ct, ov.Messages.Total == 17 && wm.Summary.TotalPushMessages == 17 && wm.Summary.WorkerCount == 1 && dlq.Total == 2,
			"seed did not settle: overview %+v, worker metrics %+v, dlq %d", ov, wm, dlq.Total)
	}, 30*time.Second, 200*time.Millisecond)
}

// TestDashboardPages opens every page in headless Chromium against a broker with data, checks the
// numbers each shows, performs the operator actions and checks their effect through the API, and
// writes a screenshot of each page. No page may log a console error.
func TestDashboardPages(t *testing.T) {
	// The encryption key lets the configure round trip turn encryptionEnabled on.
	rb := testenv.StartBroker(t, map[string]string{"STATS_INTERVAL_MS": "300",
		"QUEEN_ENCRYPTION_KEY": strings.Repeat("0123456789abcdef", 4)})
	c := &client{t: t, base: rb.URL}
	seed(c)
	settle(c)
	b := newBrowser(t, rb.URL, 1280, 800)
	b.darkTheme()

	t.Run("dashboard", func(t *testing.T) {
		b := b.in(t)
		opened := time.Now()
		b.open("/", `[data-testid="stat-queues"]`)
		b.waitText(`[data-testid="stat-queues"] .stat-value`, "3")
		b.waitText(`[data-testid="stat-total"] .stat-value`, "17")
		b.waitText(`[data-testid="stat-partitions"] .stat-value`, "6") // Default + p1..p3, payments, emails
		// analytics and queue mode on orders; queue mode on payments, and on emails, which nobody read:
		// its 5 messages are queue mode's backlog.
		b.waitText(`[data-testid="stat-groups"] .stat-value`, "4")
		// Completed means consumed by every group of the queue: analytics took the first message of each
		// partition, queue mode all 4 of p1 and none of p2 and p3, so only p1's first is completed on
		// orders and 9 are pending (the slowest group's view of each partition).
		b.waitText(`[data-testid="stat-completed"] .stat-value`, "1")
		b.waitText(`[data-testid="stat-pending"] .stat-value`, "14") // 9 orders + 5 emails
		b.waitText(`[data-testid="stat-dlq"] .stat-value`, "2")
		b.waitJS(`document.querySelector('[data-testid="chart-Throughput"] svg path') !== null`)
		// The top pending queue and the groups by lag agree: emails' 5 unread messages are a group behind.
		emails := `[data-testid="gl-__QUEUE_MODE__-emails"]`
		b.waitText(emails+` [data-testid="gl-behind"]`, "5")
		b.waitText(emails+` [data-testid="gl-lagging"]`, "1")
		require.NotEqual(t, "0 ms", b.text(emails+` [data-testid="gl-lag"]`))
		// The time axis: the last hour up to the read, ticks on round minutes, points at their buckets.
		a := b.checkAxis(`[data-testid="chart-Throughput"]`, time.Hour, opened)
		var st struct {
			Throughput []struct{ Timestamp time.Time }
		}
		c.do("GET", "/api/v1/status", nil, &st)
		var want []float64
		for _, p := range st.Throughput {
			want = append(want, float64(p.Timestamp.UnixMilli()))
		}
		if len(want) > 2 {
			want = want[:len(want)-1] // the still-filling bucket is not drawn
		}
		require.NotEmpty(t, a.Points)
		require.Subset(t, want, a.Points, "every drawn point is a bucket of /api/v1/status")
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
		b.waitText(`[data-testid="queue-orders"] [data-testid="q-pending"]`, "9")
		b.waitText(`[data-testid="queue-emails"] [data-testid="q-pending"]`, "5")
		b.shot("queues", false)
	})
	t.Run("queue detail and configure", func(t *testing.T) {
		b := b.in(t)
		b.open("/queues/orders", `[data-testid="qd-pending"]`)
		b.waitText(`[data-testid="qd-pending"] .stat-value`, "9")
		b.waitText(`[data-testid="qd-completed"] .stat-value`, "1")
		require.Equal(t, 4, b.count(`[data-testid="partitions"] tbody tr`))
		// Per consumer group: queue mode read p1 (4 acked) and never p2, p3; analytics took one of each.
		b.waitText(`[data-testid="qg-queue-mode"] [data-testid="qg-pending"]`, "6")
		b.waitText(`[data-testid="qg-queue-mode"] [data-testid="qg-completed"]`, "4")
		b.waitText(`[data-testid="qg-analytics"] [data-testid="qg-pending"]`, "7")
		b.waitText(`[data-testid="qg-analytics"] [data-testid="qg-completed"]`, "3")
		b.waitText(`[data-testid="cfg-leaseTime"]`, "60")
		b.shot("queue-detail", false)

		// Opening the form and saving it changes nothing, whatever the options were.
		tuned := map[string]any{"priority": 7, "leaseTime": 61, "retryLimit": 4, "retryDelay": 1500, "maxSize": 100000,
			"ttl": 7200, "deadLetterQueue": true, "dlqAfterMaxRetries": true, "delayedProcessing": 1, "windowBuffer": 2,
			"retentionSeconds": 86400, "completedRetentionSeconds": 43200, "retentionEnabled": true,
			"encryptionEnabled": true, "maxWaitTimeSeconds": 30}
		c.do("POST", "/api/v1/configure", map[string]any{"queue": "orders", "namespace": "shop", "task": "billing", "options": tuned}, nil)
		config := func() map[string]any {
			var st struct {
				Queue struct{ Config map[string]any }
			}
			c.do("GET", "/api/v1/status/queues/orders", nil, &st)
			return st.Queue.Config
		}
		before := config()
		for k, v := range tuned {
			require.EqualValues(t, v, before[k], "the status read reports %s", k)
		}
		b.open("/queues/orders", `[data-testid="configure"]`)
		b.waitText(`[data-testid="cfg-leaseTime"]`, "61")
		b.click(`[data-testid="configure"]`)
		b.waitJS(`document.querySelector('[data-testid="configure-form"]') !== null`)
		require.Zero(t, b.count(`[data-testid="options-missing"]`), "the form knows every option")
		b.click(`[data-testid="configure-save"]`)
		b.waitJS(`document.querySelector('[data-testid="configure-form"]') === null`)
		require.Equal(t, before, config(), "saving the form unchanged changed the queue")
		// Back to the seed's options for the pages after this one.
		c.do("POST", "/api/v1/configure", map[string]any{"queue": "orders", "namespace": "shop", "task": "billing",
			"options": map[string]any{"leaseTime": 60, "retryLimit": 3}}, nil)
		b.open("/queues/orders", `[data-testid="configure"]`)
		b.waitText(`[data-testid="cfg-leaseTime"]`, "60")

		before2 := config()
		b.click(`[data-testid="configure"]`)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.WaitVisible(`[data-testid="configure-form"]`),
			chromedp.SetValue(`input[name="leaseTime"]`, "77"), chromedp.SetValue(`input[name="retryLimit"]`, "5")))
		// SetValue bypasses the input event the form listens to: fire it.
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`['leaseTime','retryLimit'].every(n => document.querySelector('input[name='+n+']').dispatchEvent(new Event('input', {bubbles: true})))`))
		require.NoError(t, err)
		b.shot("queue-configure", false)
		b.click(`[data-testid="configure-save"]`)
		b.waitText(`[data-testid="cfg-leaseTime"]`, "77")
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
		after := config()
		for k, v := range after {
			if k != "leaseTime" && k != "retryLimit" {
				require.Equal(t, v, before2[k], "editing two fields left %s alone", k)
			}
		}
	})
	t.Run("consumers and seek", func(t *testing.T) {
		b := b.in(t)
		card := `[data-testid="group-analytics-orders"]`
		b.open("/consumers", card)
		b.waitText(card+` [data-testid="g-consumed"]`, "3")
		b.click(`[data-testid="lag-presets"] button:first-child`)
		// Every partition of orders lags for analytics (2 or 3 messages each), p2 and p3 for queue mode,
		// which never read them, and emails' only partition for queue mode.
		b.waitJS(`document.querySelectorAll('[data-testid="lagging"] tbody tr').length === 6`)
		// A group that never read a partition is behind on it, not "0 lagging, 0 ms".
		unread := `[data-testid="group-__QUEUE_MODE__-emails"]`
		b.waitText(unread+` [data-testid="g-pending"]`, "5")
		b.waitText(unread+` [data-testid="g-behind"]`, "5")
		b.waitText(unread+` [data-testid="g-lagging"]`, "1")
		require.NotEqual(t, "0 ms", b.text(unread+` [data-testid="g-maxlag"]`))
		b.waitText(card+` [data-testid="g-pending"]`, "7")
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
		require.Len(t, g["orders"].Partitions, 4) // Default (empty) and p1..p3
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
		// Sizes in bytes people read, not pg_settings' "16384 8kB"; the version number whole.
		require.Regexp(t, `^\d+(\.\d)? (B|kB|MB|GB|TB)$`, b.text(`[data-testid="pg-settings"] [data-setting="shared_buffers"]`))
		require.Regexp(t, `^\d+ (B|kB|MB|GB|TB)$|^\d+(\.\d)? (kB|MB|GB)$`, b.text(`[data-testid="pg-settings"] [data-setting="work_mem"]`))
		require.Equal(t, "1 min", b.text(`[data-testid="pg-settings"] [data-setting="autovacuum_naptime"]`))
		require.Regexp(t, `^\d+(\.\d+)*$`, b.text(`[data-testid="pg-version"] .stat-value`))
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
		opened := time.Now()
		b.open("/", `[data-testid="chart-Throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="chart-Throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.checkAxis(`[data-testid="chart-Throughput"]`, time.Hour, opened)
		b.shot("dashboard", false)
		b.click(`[data-testid="theme"]`)
		b.waitJS(`document.documentElement.dataset.theme === 'light'`)
		b.shot("dashboard-light", false)
		b.click(`[data-testid="theme"]`)
		opened = time.Now()
		b.open("/operations", `[data-testid="ops-throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="ops-throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.checkAxis(`[data-testid="ops-throughput"]`, time.Hour, opened)
		// Failed acks of the history as bars: each inside the plot, the last bucket's too.
		require.NotZero(t, b.checkAxis(`[data-testid="ops-errors"]`, time.Hour, opened).Bars)
		b.shot("operations", false)
		b.open("/queues/orders", `[data-testid="chart-q-Throughput"]`)
		b.waitJS(`(document.querySelector('[data-testid="chart-q-Throughput"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("queue-detail", false)
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(scrollTo(0, document.querySelector('[data-testid="queue-config"]').closest('.card').getBoundingClientRect().top + scrollY - 64), true)`))
		require.NoError(t, err)
		b.shot("queue-groups", false)
		b.open("/system", `[data-testid="sys-cpu"]`)
		b.waitJS(`(document.querySelector('[data-testid="sys-cpu"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("system", false)
		b.open("/analytics", `[data-testid="an-flow"]`)
		b.waitJS(`(document.querySelector('[data-testid="an-flow"] svg path')||{getAttribute:()=>''}).getAttribute('d').split('L').length > 40`)
		b.shot("analytics", false)
	})
	// Ctrl-K jumps to a queue; Queues and Consumers filter by namespace, task and queue; a custom range
	// draws exactly the chosen window; a queue's page has its metric rows.
	t.Run("jump, filters, custom range, queue metrics", func(t *testing.T) {
		b := b.in(t)
		b.open("/", `[data-testid="stat-queues"]`)
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`dispatchEvent(new KeyboardEvent('keydown', {key: 'k', ctrlKey: true}))`))
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.WaitVisible(`[data-testid="jump-input"]`), chromedp.SendKeys(`[data-testid="jump-input"]`, "emai")))
		b.waitJS(`document.querySelectorAll('[data-testid="jump-hit"]').length === 1`)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(`[data-testid="jump-input"]`, "\r")))
		b.waitJS(`location.pathname === '/queues/emails'`)

		choose := func(sel, value string) {
			t.Helper()
			_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(
				`(() => { const e = document.querySelector(%q); e.value = %q; return e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value)))
			require.NoError(t, err)
		}
		b.open("/queues", `[data-testid="queue-orders"]`)
		choose(`[data-testid="queue-ns"]`, "shop")
		b.waitJS(`document.querySelectorAll('.qcard').length === 1`)
		require.Equal(t, 1, b.count(`[data-testid="queue-orders"]`))
		b.open("/consumers?queue=orders", `[data-testid="group-analytics-orders"]`)
		require.Equal(t, 2, b.count(`.qcard`), "analytics and queue mode on orders")
		choose(`[data-testid="group-queue"]`, "")
		choose(`[data-testid="group-task"]`, "billing")
		b.waitJS(`document.querySelectorAll('.qcard').length === 2`)

		b.open("/queues/orders", `[data-testid="chart-q-Throughput"]`)
		require.Equal(t, 7, b.count(`[data-testid^="metric-q-"]`))
		b.click(`[data-testid="range"] .seg button:last-child`)
		var win [2]float64
		b.eval(`(() => {
  const p = (n) => String(n).padStart(2, '0');
  const f = (d) => d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes());
  const to = new Date(Math.floor(Date.now() / 60000) * 60000 - 30 * 60000), from = new Date(to.getTime() - 60 * 60000);
  for (const [id, d] of [['range-from', from], ['range-to', to]]) {
    const e = document.querySelector('[data-testid="' + id + '"]');
    e.value = f(d);
    e.dispatchEvent(new Event('input', {bubbles: true}));
  }
  return JSON.stringify([from.getTime(), to.getTime()]);
})()`, &win)
		b.click(`[data-testid="range-apply"]`)
		b.waitJS(fmt.Sprintf(`(document.querySelector('[data-testid="chart-q-Throughput"] svg')||{dataset:{}}).dataset.to === '%d'`, int64(win[1])))
		var a chartAxis
		b.eval(axisJS+`('[data-testid="chart-q-Throughput"]')`, &a)
		require.Empty(t, a.Problems)
		require.Equal(t, win[0], a.From)
	})
	// At 1280 px nothing is cut off: no page scrolls sideways, no table hides columns, no tile clips its value.
	t.Run("nothing cut off at 1280 px", func(t *testing.T) {
		b := b.in(t)
		for _, p := range []struct{ path, ready string }{
			{"/", `[data-testid="stat-queues"]`}, {"/operations", `[data-testid="workers"]`}, {"/queues", `[data-testid="queue-orders"]`},
			{"/queues/orders", `[data-testid="partitions"]`}, {"/consumers", `[data-testid="group-analytics-orders"]`},
			{"/messages?queue=orders", `[data-testid="message-row"]`}, {"/analytics", `[data-testid="an-total"]`},
			{"/dlq", `[data-testid="dlq-row"]`}, {"/system", `[data-testid="servers"]`}, {"/migration", `.steps`},
		} {
			b.open(p.path, p.ready)
			var cut []string
			b.eval(overflowJS, &cut)
			require.Empty(t, cut, p.path)
		}
		b.open("/system", `[data-testid="servers"]`)
		b.click(`.seg button:nth-child(2)`) // the postgres tab
		b.waitJS(`document.querySelector('[data-testid="pg-settings"]') !== null`)
		var cut []string
		b.eval(overflowJS, &cut)
		require.Empty(t, cut, "/system postgres")
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
	// A queue of 501 partitions shows them a page at a time.
	t.Run("501 partitions", func(t *testing.T) {
		b := b.in(t)
		items := make([]map[string]any, 501)
		for i := range items {
			items[i] = map[string]any{"queue": "wide", "partition": fmt.Sprintf("w%03d", i), "payload": map[string]any{"i": i}}
		}
		c.do("POST", "/api/v1/push", map[string]any{"items": items}, nil)
		b.open("/queues/wide", `[data-testid="partitions-pager"]`)
		b.waitText(`[data-testid="partitions-pager-label"]`, "1–50 of 501")
		require.Equal(t, 50, b.count(`[data-testid="partitions"] tbody tr`))
		b.click(`[data-testid="partitions-pager-next"]`)
		b.waitText(`[data-testid="partitions-pager-label"]`, "51–100 of 501")
		require.Equal(t, 50, b.count(`[data-testid="partitions"] tbody tr`))
	})
	b.requireNoConsoleErrors()
	// Once the broker is gone the dot says so, whatever it said before.
	t.Run("health after the broker stops", func(t *testing.T) {
		b := b.in(t)
		b.open("/", `[data-testid="health"]`)
		b.waitText(`[data-testid="health-label"]`, "Healthy")
		// Every read fails from here on: Chromium logs each refused connection.
		b.log.mu.Lock()
		b.log.expected = func(m chromedp.ConsoleMessage) bool { return strings.Contains(m.Text, "ERR_CONNECTION_REFUSED") }
		b.log.mu.Unlock()
		require.NoError(t, rb.Broker.Shutdown(t.Context()))
		b.click(`[data-testid="refresh"]`)
		b.waitText(`[data-testid="health-label"]`, "Offline")
		b.requireNoConsoleErrors()
	})
}

// TestDashboardAuth: with JWT on, the static app still loads, asks for a token after the API's 401
// instead of showing an empty page, and works once given one.
func TestDashboardAuth(t *testing.T) {
	const secret = "dashboard-test-secret-0123456789abcdef"
	rb := testenv.StartBroker(t, map[string]string{"JWT_ENABLED": "true", "JWT_SECRET": secret})
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "operator", "role": "admin",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
	require.NoError(t, err)
	token := func(role string) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": role, "role": role,
			"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(secret))
		require.NoError(t, err)
		return tok
	}
	roTok, rwTok, woTok := token("read-only"), token("read-write"), token("write-only")
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

	// A token that may not read: the form says which call was refused and why instead of an empty page.
	require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(`[data-testid="token-input"]`, woTok), chromedp.Click(`[data-testid="token-save"]`)))
	b.waitJS(`(document.querySelector('[data-testid="auth"]')||{innerText:''}).innerText.includes('403')`)
	require.Contains(t, b.text(`[data-testid="auth"]`), "Insufficient permissions")
	b.shot("auth-forbidden", false)

	// Each role sees the actions it may take and no button that can only fail.
	useToken := func(tok string) {
		t.Helper()
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(localStorage.setItem('queen.token', %q), true)`, tok)))
		require.NoError(t, err)
	}
	actions := func() map[string]int {
		t.Helper()
		b.open("/queues/secured", `[data-testid="qd-pending"]`)
		b.waitText(`[data-testid="qd-pending"] .stat-value`, "1")
		b.waitJS(`document.querySelector('.shell').dataset.access === 'known'`)
		n := map[string]int{}
		for _, id := range []string{"configure", "purge", "delete-queue"} {
			n[id] = b.count(`[data-testid="` + id + `"]`)
		}
		b.open("/queues", `[data-testid="queue-secured"]`)
		b.waitJS(`document.querySelector('.shell').dataset.access === 'known'`)
		n["delete-card"] = b.count(`[data-testid="queue-secured"] button`)
		b.open("/dlq", `[data-testid="dlq-total"]`)
		b.waitJS(`document.querySelector('.shell').dataset.access === 'known'`)
		n["dlq-retry"] = b.count(`[data-testid="dlq-retry"]`)
		n["toggle-push"] = b.count(`[data-testid="toggle-push"]`)
		return n
	}
	useToken(roTok)
	require.Equal(t, map[string]int{"configure": 0, "purge": 0, "delete-queue": 0, "delete-card": 0, "dlq-retry": 0, "toggle-push": 0}, actions(), "read-only")
	useToken(rwTok)
	require.Equal(t, map[string]int{"configure": 1, "purge": 0, "delete-queue": 0, "delete-card": 0, "dlq-retry": 0, "toggle-push": 0}, actions(), "read-write")
	useToken(tok)
	b.open("/", `[data-testid="toggle-push"]`)
	require.Equal(t, map[string]int{"configure": 1, "purge": 1, "delete-queue": 1, "delete-card": 1, "dlq-retry": 1, "toggle-push": 1}, actions(), "admin")
	c.do("GET", "/api/v1/resources/queues/secured", nil, nil) // still there
	useToken("")

	b.open("/", `[data-testid="auth"]`)
	require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(`[data-testid="token-input"]`, tok), chromedp.Click(`[data-testid="token-save"]`)))
	b.waitJS(`document.querySelector('[data-testid="auth"]') === null`)
	b.open("/queues", `[data-testid="queue-secured"]`)
	b.waitJS(`document.querySelector('[data-testid="toggle-push"]') !== null`)
	b.requireNoConsoleErrors()
}
