import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, Card, Stat, ErrorBox, Segmented, useRange, RangePicker, useData, LineChart, windowOf, MetricRows, BarList, toPoints, num, dur, Link, QUEUE_MODE } from '../ui.jsx';

const BUCKET = (d) => (d && d.bucketMinutes ? d.bucketMinutes * 60000 : 60000);

export function Dashboard() {
  const [range, , q, rangeCtl] = useRange('1h');
  const [open, setOpen] = useState({ Throughput: true, 'Time lag': true });
  const d = useData(async () => {
    const r = q();
    const [overview, queues, groups, status, ops, retention, parked, workers, system] = await Promise.all([
      api('/api/v1/resources/overview'), api('/api/v1/resources/queues'), api('/api/v1/consumer-groups'),
      api('/api/v1/status', { query: r }), api('/api/v1/analytics/queue-ops', { query: r }),
      api('/api/v1/analytics/retention', { query: r }), api('/api/v1/analytics/queue-parked-replicas', { query: r }),
      api('/api/v1/analytics/worker-metrics', { query: r }), api('/api/v1/analytics/system-metrics', { query: r }),
    ]);
    return { overview, queues: queues.queues || [], groups: groups || [], status, ops, retention, parked, workers, system, win: windowOf(r) };
  }, [range], 30000);
  const [, tick] = useState(0);
  useEffect(() => { const t = setInterval(() => tick((n) => n + 1), 1000); return () => clearInterval(t); }, []);
  const age = d.at ? Math.round((Date.now() - d.at) / 1000) : null;
  const x = d.data;
  return (
    <Page title="Dashboard" actions={<>
      <span class="muted" data-testid="last-refresh">{age === null ? 'loading…' : `updated ${age}s ago`}</span>
      <RangePicker ctl={rangeCtl} options={['1h', '6h', '24h']} />
    </>}>
      <ErrorBox error={d.error} />
      {x && <Body x={x} open={open} setOpen={setOpen} />}
    </Page>
  );
}

function Body({ x, open, setOpen }) {
  const { overview: o, queues, groups, status, ops, retention, parked, workers, system } = x;
  const wts = workers.timeSeries || [];
  const wp = (key) => toPoints(wts, 'timestamp', (r) => (r[key] === undefined ? null : r[key]));
  const reps = system.replicas || [];
  const cpu = reps.map((rp) => ({ name: reps.length > 1 ? `${rp.hostname}:${rp.port}` : 'user + system',
    points: toPoints(rp.timeSeries, 'timestamp', (p) => p.metrics.cpu.user_pct.avg + p.metrics.cpu.system_pct.avg) }));
  const lastOf = (pts) => (pts.length ? pts[pts.length - 1][1] : null);
  const m = o.messages || {};
  const partitions = queues.reduce((s, q) => s + (q.partitions || 0), 0);
  const tp = status.throughput || [];
  const bucket = BUCKET(status);
  const series = (key) => toPoints(tp, 'timestamp', (r) => r[key]);
  // Queue-ops rows are per queue: sum them per bucket for the cluster rows.
  const perBucket = {};
  for (const r of ops.series || []) {
    const b = (perBucket[r.bucket] = perBucket[r.bucket] || { bucket: r.bucket, popMessages: 0, popEmpty: 0 });
    b.popMessages += r.popMessages || 0;
    b.popEmpty += r.popEmpty || 0;
  }
  const opsRows = Object.values(perBucket);
  // Parked long-polls: the peak per queue and broker in a bucket, summed over both.
  const parkedBuckets = {};
  for (const r of parked.series || []) {
    const b = (parkedBuckets[r.bucket] = parkedBuckets[r.bucket] || { bucket: r.bucket, parked: 0 });
    b.parked += r.parkedCount || 0;
  }
  const parkedPts = toPoints(Object.values(parkedBuckets), 'bucket', (r) => r.parked);
  let running = 0;
  const pendingDelta = toPoints(tp, 'timestamp', (r) => (running += (r.ingested || 0) - (r.processed || 0)), false);
  const retBuckets = {};
  for (const r of retention.series || []) {
    const b = (retBuckets[r.bucket] = retBuckets[r.bucket] || { bucket: r.bucket, retention: 0, completed_retention: 0, other: 0 });
    if (r.type === 'retention' || r.type === 'completed_retention') b[r.type] += r.deleted;
    else b.other += r.deleted;
  }
  const rows = [
    { label: 'Throughput', value: `${num(o.throughput?.ingestedPerSecond, 2)}/s in · ${num(o.throughput?.processedPerSecond, 2)}/s out`,
      ctx: 'pushed in, acked out: average of the last 5 minutes (chart: per bucket)', spark: series('ingestedPerSecond'),
      chart: [{ name: 'push/s', points: series('ingestedPerSecond') }, { name: 'pop/s', points: series('popPerSecond') }, { name: 'ack/s', points: series('processedPerSecond') }] },
    { label: 'Pending Δ', value: num(pendingDelta.length ? pendingDelta[pendingDelta.length - 1][1] : 0), ctx: 'ingested − processed over the window',
      spark: pendingDelta, chart: [{ name: 'pending Δ', points: pendingDelta }] },
    { label: 'Time lag', value: dur((o.lag?.time?.max || 0) * 1000), ctx: 'oldest unconsumed message (max over partitions)',
      spark: series('maxLagMs'), fmt: (v) => dur(v),
      chart: [{ name: 'avg lag', points: series('avgLagMs') }, { name: 'max lag', points: series('maxLagMs') }] },
    { label: 'Fill ratio', value: fill(opsRows), ctx: 'share of pops that returned messages',
      spark: toPoints(opsRows, 'bucket', fillOf), fmt: (v) => num(v, 0) + '%',
      chart: [{ name: 'fill %', points: toPoints(opsRows, 'bucket', fillOf) }] },
    { label: 'Errors', value: `${num(status.errors?.ackFailed ?? sum(tp, 'ackFailed'))} failed acks · ${num(status.deadLetterQueue?.totalMessages)} DLQ`,
      ctx: 'ack failures and dead letters per bucket', spark: series('ackFailed'),
      chart: [{ name: 'ack failed', points: series('ackFailed') }, { name: 'dlq', points: series('dlqCount') }] },
    { label: 'Parked', value: num(parkedPts.length ? parkedPts[parkedPts.length - 1][1] : 0), ctx: 'idle long-polls waiting for messages',
      spark: parkedPts, chart: [{ name: 'parked', points: parkedPts }] },
    { label: 'Scheduler lag', value: `${num(lastOf(wp('avgEventLoopLagMs')), 2)} / ${num(lastOf(wp('maxEventLoopLagMs')), 2)} ms`,
      ctx: `avg / max wait for a CPU · ${num(workers.summary?.workerCount)} broker(s)`, spark: wp('maxEventLoopLagMs'), fmt: (v) => num(v, 2) + ' ms',
      chart: [{ name: 'avg', points: wp('avgEventLoopLagMs') }, { name: 'max', points: wp('maxEventLoopLagMs') }] },
    { label: 'Broker CPU', value: num(cpu.length ? lastOf(cpu[0].points) : null, 1) + '%', ctx: 'user + system, per broker',
      spark: cpu.length ? cpu[0].points : [], fmt: (v) => num(v, 1) + '%', chart: cpu },
    { label: 'DB pool', value: `${num(lastOf(wp('dbConnections')), 1)} open · ${num(lastOf(wp('avgFreeSlots')), 1)} free`, ctx: 'connections of every broker',
      spark: wp('dbConnections'), chart: [{ name: 'open', points: wp('dbConnections') }, { name: 'free slots', points: wp('avgFreeSlots') }, { name: 'waited acquires', points: wp('maxJobQueueSize') }] },
    { label: 'Retention', value: num((retention.totals?.retention || 0) + (retention.totals?.completed_retention || 0)), ctx: 'messages deleted by retention in the window',
      spark: toPoints(Object.values(retBuckets), 'bucket', (r) => r.retention + r.completed_retention, false), kind: 'bar',
      chart: [{ name: 'retention', points: toPoints(Object.values(retBuckets), 'bucket', (r) => r.retention, false) },
        { name: 'completed retention', points: toPoints(Object.values(retBuckets), 'bucket', (r) => r.completed_retention, false) },
        { name: 'cleanup', points: toPoints(Object.values(retBuckets), 'bucket', (r) => r.other, false) }] },
  ];
  const topQueues = [...queues].filter((q) => q.name).sort((a, b) => (b.messages?.pending || 0) - (a.messages?.pending || 0)).slice(0, 8);
  // Both cards read the broker's one lag rule (a partition a group never read counts from its first
  // message), so a queue with pending messages always has a group behind on it.
  const topGroups = [...groups].sort((a, b) => (b.maxTimeLag || 0) - (a.maxTimeLag || 0) || (b.totalLag || 0) - (a.totalLag || 0)).slice(0, 8);
  const behind = groups.some((g) => g.totalLag !== null && g.totalLag !== undefined);
  return (
    <>
      <div class="stats">
        <Stat id="stat-total" label="Messages" value={num(m.total)} />
        <Stat id="stat-queues" label="Queues" value={num(o.queues)} />
        <Stat id="stat-partitions" label="Partitions" value={num(partitions)} />
        <Stat id="stat-groups" label="Consumer groups" value={num(groups.length)} />
        <Stat id="stat-pending" label="Pending" hint="for each queue's slowest group" value={num(m.pending)} tone={m.pending > 10000 ? 'bad' : m.pending > 1000 ? 'warn' : ''} />
        <Stat id="stat-completed" label="Completed" hint="by every group of the queue" value={num(m.completed)} />
        <Stat id="stat-dlq" label="Dead letters" value={num(m.deadLetter)} tone={m.deadLetter ? 'warn' : ''} />
      </div>
      <Card title="Metrics" class="metrics" extra={<span class="muted small" title="messages per push / pop request">
        batch efficiency {num(status.messages?.batchEfficiency?.push, 1)} push · {num(status.messages?.batchEfficiency?.pop, 1)} pop</span>}>
        <MetricRows rows={rows.map((r) => ({ ...r, bucketMs: BUCKET(r.label === 'Retention' ? retention : status) }))} open={open} setOpen={setOpen} win={x.win} />
      </Card>
      <div class="grid2">
        <Card title="Top queues by pending" extra={<span class="muted small">pending for the slowest group</span>}>
          <BarList id="top-queues" rows={topQueues.map((q) => ({ label: q.name, value: q.messages?.pending || 0, href: '/queues/' + encodeURIComponent(q.name) }))} />
        </Card>
        <Card title="Consumer groups by lag">
          <div class="scroll"><table class="table" data-testid="groups-by-lag">
            <thead><tr><th>Group</th><th>Queue</th>{behind && <th class="num">Behind</th>}<th class="num">Max lag</th><th class="num">Lagging partitions</th></tr></thead>
            <tbody>
              {topGroups.map((g) => (
                <tr data-testid={'gl-' + g.name + '-' + g.queueName}><td>{g.name === QUEUE_MODE ? <span class="muted">queue mode</span> : g.name}</td>
                  <td><Link href={'/queues/' + encodeURIComponent(g.queueName)}>{g.queueName}</Link></td>
                  {behind && <td class="num" data-testid="gl-behind">{num(g.totalLag)}</td>}
                  <td class="num" data-testid="gl-lag">{dur((g.maxTimeLag || 0) * 1000)}</td><td class="num" data-testid="gl-lagging">{num(g.partitionsWithLag)}</td></tr>
              ))}
            </tbody>
          </table></div>
        </Card>
      </div>
    </>
  );
}

const sum = (rows, k) => rows.reduce((s, r) => s + (r[k] || 0), 0);
const fillOf = (r) => (r.popMessages + r.popEmpty > 0 ? (100 * r.popMessages) / (r.popMessages + r.popEmpty) : null);
function fill(rows) {
  const p = sum(rows, 'popMessages'), e = sum(rows, 'popEmpty');
  return p + e ? num((100 * p) / (p + e), 0) + '%' : '—';
}
