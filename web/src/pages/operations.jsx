import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, Card, ErrorBox, Segmented, useRange, RangePicker, useData, LineChart, windowOf, BarList, toPoints, num, dur, ago, Empty } from '../ui.jsx';

const METRICS = {
  'pop/s': (r) => r.popPerSecond, 'push/s': (r) => r.pushPerSecond, 'ack/s': (r) => r.ackPerSecond,
  'empty/s': (r) => r.emptyPerSecond, 'avg lag': (r) => r.avgLagMs, parked: (r) => r.parkedCount || 0,
};

export function Operations() {
  const [range, , q, rangeCtl] = useRange('1h');
  const [metric, setMetric] = useState('push/s');
  const d = useData(async () => {
    const r = q();
    const [wm, ops, lag] = await Promise.all([
      api('/api/v1/analytics/worker-metrics', { query: r }), api('/api/v1/analytics/queue-ops', { query: r }),
      api('/api/v1/analytics/queue-lag', { query: r }),
    ]);
    return { wm, ops, lag, win: windowOf(r) };
  }, [range]);
  const x = d.data;
  return (
    <Page title="Queue operations" actions={<RangePicker ctl={rangeCtl} options={['15m', '1h', '6h', '24h']} />}>
      <ErrorBox error={d.error} />
      {x && <Body x={x} metric={metric} setMetric={setMetric} />}
    </Page>
  );
}

function Body({ x, metric, setMetric }) {
  const ts = x.wm.timeSeries || [];
  const bucket = (x.wm.bucketMinutes || 1) * 60000;
  const s = (k) => toPoints(ts, 'timestamp', (r) => (r[k] === undefined ? null : r[k]));
  const sm = x.wm.summary || {};
  const byQueue = {};
  for (const r of x.ops.series || []) (byQueue[r.queueName] = byQueue[r.queueName] || []).push(r);
  const queueSeries = Object.entries(byQueue).map(([name, rows]) => ({ name, points: toPoints(rows, 'bucket', METRICS[metric]) }));
  const totals = Object.entries(byQueue).map(([name, rows]) => ({
    name, push: rows.reduce((a, r) => a + r.pushMessages, 0), pop: rows.reduce((a, r) => a + r.popMessages, 0),
    lag: Math.max(0, ...rows.map((r) => r.maxLagMs || 0)),
  }));
  const top = (k) => [...totals].sort((a, b) => b[k] - a[k]).slice(0, 5).map((t) => ({ label: t.name, value: t[k], href: '/queues/' + encodeURIComponent(t.name) }));
  return (
    <>
      <div class="stats">
        <div class="stat" data-testid="ops-push"><div class="stat-label">Pushed</div><div class="stat-value">{num(sm.totalPushMessages)}</div></div>
        <div class="stat"><div class="stat-label">Popped</div><div class="stat-value">{num(sm.totalPopMessages)}</div></div>
        <div class="stat"><div class="stat-label">Acked</div><div class="stat-value">{num(sm.totalAckMessages)}</div></div>
        <div class="stat"><div class="stat-label">Avg lag</div><div class="stat-value">{dur(sm.avgLagMs)}</div></div>
        <div class="stat"><div class="stat-label">Brokers</div><div class="stat-value">{num(sm.workerCount)}</div></div>
      </div>
      <div class="grid2">
        <Card title="Message throughput"><LineChart win={x.win} id="ops-throughput" bucketMs={bucket} series={[{ name: 'push/s', points: s('pushPerSecond') }, { name: 'pop/s', points: s('popPerSecond') }, { name: 'ack/s', points: s('ackPerSecond') }]} /></Card>
        <Card title="Message latency"><LineChart win={x.win} bucketMs={bucket} fmt={dur} series={[{ name: 'avg', points: s('avgLagMs') }, { name: 'max', points: s('maxLagMs') }]} /></Card>
        <Card title="Scheduler latency" extra={<span class="muted">stands in for the event-loop lag</span>}>
          <LineChart win={x.win} bucketMs={bucket} fmt={(v) => num(v, 2) + ' ms'} series={[{ name: 'avg', points: s('avgEventLoopLagMs') }, { name: 'max', points: s('maxEventLoopLagMs') }]} /></Card>
        <Card title="Connection pool"><LineChart win={x.win} bucketMs={bucket} series={[{ name: 'free slots', points: s('avgFreeSlots') }, { name: 'DB connections', points: s('dbConnections') }, { name: 'waited acquires', points: s('maxJobQueueSize') }]} /></Card>
        <Card title="Errors and dead letters"><LineChart win={x.win} id="ops-errors" bucketMs={bucket} kind="bar" series={[{ name: 'ack failed', points: s('ackFailed') }, { name: 'DLQ', points: s('dlqCount') }]} /></Card>
        <Card title="Top queues">
          <div class="grid2 tight">
            <div><h3>by messages pushed</h3><BarList rows={top('push')} /></div>
            <div><h3>by max lag</h3><BarList rows={top('lag')} fmt={dur} /></div>
          </div>
        </Card>
      </div>
      <Card title="Per-queue metrics" extra={<select value={metric} onChange={(e) => setMetric(e.target.value)} aria-label="Metric">{Object.keys(METRICS).map((k) => <option>{k}</option>)}</select>}>
        <LineChart win={x.win} id="ops-per-queue" bucketMs={(x.ops.bucketMinutes || 1) * 60000} series={queueSeries} fmt={metric === 'avg lag' ? dur : (v) => num(v, 2)} />
      </Card>
      <Card title="Average latency by queue">
        <BarList rows={(x.wm.queues || []).map((q) => ({ label: q.queueName, value: q.avgLagMs }))} fmt={dur} />
      </Card>
      {/* Full width: seven columns do not fit half of a 1280 px screen. */}
      <Card title="Brokers">
          {(x.wm.workers || []).length === 0 ? <Empty>No broker samples yet.</Empty> : (
            <div class="scroll"><table class="table" data-testid="workers">
              <thead><tr><th>Broker</th><th>Host</th><th class="num">Sched avg/max</th><th class="num">Free slots</th><th class="num">DB conns</th><th class="num">CPU</th><th>Last seen</th></tr></thead>
              <tbody>{x.wm.workers.map((w) => (
                <tr><td class="mono">{w.workerId.slice(0, 8)}</td><td>{w.hostname}:{w.port}</td>
                  <td class="num">{num(w.avgEventLoopLagMs, 2)} / {num(w.maxEventLoopLagMs, 2)} ms</td>
                  <td class="num">{num(w.freeSlots)}</td><td class="num">{num(w.dbConnections)}</td>
                  <td class="num">{num(w.cpuUserPct + w.cpuSysPct, 1)}%</td><td>{ago(w.lastSeen)}</td></tr>
              ))}</tbody>
            </table></div>
          )}
      </Card>
    </>
  );
}
