import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, Card, Stat, ErrorBox, Segmented, useRange, RangePicker, useData, LineChart, windowOf, BarList, toPoints, num, Empty } from '../ui.jsx';

export function Analytics() {
  const [range, , q, rangeCtl] = useRange('1h');
  const [f, setF] = useState({ queue: '', namespace: '', task: '' });
  const d = useData(async () => {
    const r = q();
    const [status, queues, ns, tasks] = await Promise.all([
      api('/api/v1/status', { query: { ...r, ...f } }),
      api('/api/v1/status/queues', { query: { limit: 500, namespace: f.namespace, task: f.task } }),
      api('/api/v1/resources/namespaces'), api('/api/v1/resources/tasks'),
    ]);
    return { status, queues: queues.queues || [], ns: ns.namespaces || [], tasks: tasks.tasks || [], win: windowOf(r) };
  }, [range, f.queue, f.namespace, f.task]);
  const x = d.data;
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  return (
    <Page title="Analytics" actions={<>
      <select value={f.queue} onChange={set('queue')} aria-label="Queue"><option value="">all queues</option>{x && x.queues.map((q) => <option>{q.name}</option>)}</select>
      <select value={f.namespace} onChange={set('namespace')} aria-label="Namespace"><option value="">all namespaces</option>{x && x.ns.map((n) => <option>{n.namespace}</option>)}</select>
      <select value={f.task} onChange={set('task')} aria-label="Task"><option value="">all tasks</option>{x && x.tasks.map((t) => <option>{t.task}</option>)}</select>
      <RangePicker ctl={rangeCtl} options={['1h', '6h', '24h', '7d']} />
    </>}>
      <ErrorBox error={d.error} />
      {x && <Body x={x} f={f} />}
    </Page>
  );
}

function Body({ x, f }) {
  const s = x.status;
  const tp = s.throughput || [];
  const b = (s.bucketMinutes || 1) * 60000;
  // /status scopes only its throughput to a filter: the counts come from the filtered queue list.
  const qs = f.queue ? x.queues.filter((q) => q.name === f.queue) : x.queues;
  const filtered = f.queue || f.namespace || f.task;
  const m = filtered ? qs.reduce((a, q) => ({ total: a.total + (q.messages?.total || 0), pending: a.pending + (q.messages?.pending || 0),
    processing: a.processing + (q.messages?.processing || 0) }), { total: 0, pending: 0, processing: 0 }) : s.messages || {};
  const completed = filtered ? Math.max(0, m.total - m.pending - m.processing) : m.completed;
  const ingested = tp.reduce((a, r) => a + (r.ingested || 0), 0), processed = tp.reduce((a, r) => a + (r.processed || 0), 0);
  const top = [...qs].sort((a, b2) => (b2.messages?.total || 0) - (a.messages?.total || 0)).slice(0, 10);
  return (
    <>
      <div class="stats">
        <Stat id="an-total" label="Messages" value={num(m.total)} />
        <Stat id="an-pending" label="Pending" value={num(m.pending)} />
        <Stat label="Processing" value={num(m.processing)} />
        <Stat label="Completed" value={num(completed)} />
        <Stat id="an-ingested" label="Ingested in range" value={num(ingested)} />
        <Stat label="Processed in range" value={num(processed)} />
      </div>
      <Card title="Message flow over time">
        <LineChart win={x.win} id="an-flow" bucketMs={b} series={[{ name: 'ingested', points: toPoints(tp, 'timestamp', (r) => r.ingested) }, { name: 'processed', points: toPoints(tp, 'timestamp', (r) => r.processed) }]} />
      </Card>
      <div class="grid2">
        <Card title="Top queues by volume">
          {top.length === 0 ? <Empty>No queues.</Empty> : (
            <div class="stack" data-testid="an-top">
              {top.map((q) => {
                const t = Math.max(1, q.messages?.total || 0), p = q.messages?.pending || 0, pr = q.messages?.processing || 0;
                return (
                  <div class="barrow"><span class="barlabel">{q.name}</span>
                    <span class="bartrack"><span class="barfill" style={{ width: (100 * p) / t + '%', background: '#f0a030' }} /><span class="barfill" style={{ width: (100 * pr) / t + '%', background: '#4f8cff' }} /><span class="barfill" style={{ width: (100 * (t - p - pr)) / t + '%', background: '#2bb673' }} /></span>
                    <span class="barval">{num(q.messages?.total)}</span></div>
                );
              })}
              <div class="legend"><span><i style={{ background: '#f0a030' }} />pending</span><span><i style={{ background: '#4f8cff' }} />processing</span><span><i style={{ background: '#2bb673' }} />completed</span></div>
            </div>
          )}
        </Card>
        <Card title="Status distribution">
          <BarList rows={[{ label: 'pending', value: m.pending || 0, color: '#f0a030' }, { label: 'processing', value: m.processing || 0, color: '#4f8cff' },
            { label: 'completed', value: completed || 0, color: '#2bb673' }, { label: 'dead letter', value: s.messages?.deadLetter || 0, color: '#e5534b' }]} />
        </Card>
        <Card title="Active leases">
          <dl class="kv"><dt>Leases</dt><dd data-testid="an-leases">{num(s.leases?.active)}</dd><dt>Partitions leased</dt><dd>{num(s.leases?.partitionsWithLeases)}</dd><dt>Messages in flight</dt><dd>{num(s.leases?.totalBatchSize)}</dd></dl>
        </Card>
        <Card title="Dead letter queue">
          <dl class="kv"><dt>Messages</dt><dd>{num(s.deadLetterQueue?.totalMessages)}</dd><dt>Partitions</dt><dd>{num(s.deadLetterQueue?.affectedPartitions)}</dd></dl>
          <BarList rows={(s.deadLetterQueue?.topErrors || []).map((e) => ({ label: e.error || '(none)', value: e.count, color: '#e5534b' }))} />
        </Card>
      </div>
    </>
  );
}
