import { useState } from 'preact/hooks';
import { api, paths } from '../api.js';
import { FilterSelect, useLocation, QUEUE_MODE, groupName, useCan, Pager, usePaged, Page, Card, Stat, ErrorBox, Segmented, useRange, RangePicker, useData, MetricRows, windowOf, toPoints, num, dur, ago, time, Link, navigate, Confirm, Modal, Badge, Empty } from '../ui.jsx';

// severity of a queue card: lag and a push rate well above the pop rate are what operators act on.
function severity(q) {
  if (q.maxLag > 15 * 60e3 || (q.push > 1 && q.push > 3 * q.pop)) return 'bad';
  if (q.maxLag > 60e3 || (q.messages?.pending || 0) > 10000) return 'warn';
  return 'ok';
}
const RANK = { bad: 0, warn: 1, ok: 2 };

const groupLabel = (g) => (g === QUEUE_MODE ? 'queue-mode' : g);

export function Queues() {
  const { query } = useLocation();
  const [search, setSearch] = useState('');
  const [ns, setNs] = useState(query.get('namespace') || '');
  const [task, setTask] = useState(query.get('task') || '');
  const [sort, setSort] = useState('worst');
  const [del, setDel] = useState(null);
  const can = useCan();
  const d = useData(async () => {
    const to = new Date(), from = new Date(to - 15 * 60e3);
    const [qs, ops] = await Promise.all([api('/api/v1/resources/queues'),
      api('/api/v1/analytics/queue-ops', { query: { from: from.toISOString(), to: to.toISOString() } })]);
    const agg = {};
    for (const r of ops.series || []) {
      const a = (agg[r.queueName] = agg[r.queueName] || { push: 0, pop: 0, maxLag: 0, n: 0 });
      a.push += r.pushMessages; a.pop += r.popMessages; a.maxLag = Math.max(a.maxLag, r.maxLagMs || 0);
    }
    return (qs.queues || []).filter((q) => q.name).map((q) => {
      const a = agg[q.name] || { push: 0, pop: 0, maxLag: 0 };
      return { ...q, push: a.push / 900, pop: a.pop / 900, maxLag: a.maxLag };
    });
  }, []);
  let rows = (d.data || []).filter((q) => (!ns || q.namespace === ns) && (!task || q.task === task) &&
    (!search || (q.name + ' ' + q.namespace + ' ' + q.task).toLowerCase().includes(search.toLowerCase())));
  const by = {
    worst: (a, b) => RANK[severity(a)] - RANK[severity(b)] || (b.messages?.pending || 0) - (a.messages?.pending || 0),
    lag: (a, b) => b.maxLag - a.maxLag, partitions: (a, b) => b.partitions - a.partitions,
    density: (a, b) => (b.messages?.total || 0) / Math.max(1, b.partitions) - (a.messages?.total || 0) / Math.max(1, a.partitions),
    name: (a, b) => a.name.localeCompare(b.name),
  };
  rows = [...rows].sort(by[sort]);
  return (
    <Page title="Queues" actions={<>
      <input type="search" placeholder="Search queues" value={search} onInput={(e) => setSearch(e.target.value)} aria-label="Search" data-testid="queue-search" />
      <FilterSelect value={ns} onChange={setNs} values={(d.data || []).map((q) => q.namespace)} all="all namespaces" label="Namespace" id="queue-ns" />
      <FilterSelect value={task} onChange={setTask} values={(d.data || []).map((q) => q.task)} all="all tasks" label="Task" id="queue-task" />
      <select value={sort} onChange={(e) => setSort(e.target.value)} aria-label="Sort">{Object.keys(by).map((k) => <option value={k}>sort: {k}</option>)}</select>
    </>}>
      <ErrorBox error={d.error} />
      {d.data && rows.length === 0 && <Empty>No queues{search || ns || task ? ' match' : ' yet'}.</Empty>}
      <div class="cards">
        {rows.map((q) => (
          <div class={'qcard ' + severity(q)} data-testid={'queue-' + q.name}>
            <div class="qhead">
              <Link href={'/queues/' + encodeURIComponent(q.name)} class="qname">{q.name}</Link>
              {can('admin') && <button class="ghost small" onClick={() => setDel(q.name)} title="Delete queue" aria-label={'Delete ' + q.name}>🗑</button>}
            </div>
            <div class="muted small">{[q.namespace, q.task].filter(Boolean).join(' · ') || 'no namespace'}</div>
            <div class="qnums">
              <span><b data-testid="q-pending">{num(q.messages?.pending)}</b> pending</span>
              <span><b>{num(q.messages?.processing)}</b> processing</span>
              <span><b>{num(q.messages?.total)}</b> total</span>
              <span><b>{num(q.partitions)}</b> partitions</span>
            </div>
            <div class="muted small">{num(q.push, 2)}/s in · {num(q.pop, 2)}/s out · max lag {dur(q.maxLag)}</div>
          </div>
        ))}
      </div>
      {del && <DeleteQueue name={del} onClose={(ok) => { setDel(null); if (ok) d.reload(); }} />}
    </Page>
  );
}

function DeleteQueue({ name, onClose }) {
  return (
    <Confirm title={'Delete queue ' + name} confirmLabel="Delete queue" run={() => api(paths.queue(name), { method: 'DELETE' })} onClose={onClose}>
      This deletes <b>{name}</b> with all its partitions, messages, dead letters and consumer cursors. It cannot be undone.
    </Confirm>
  );
}

// Every option POST /api/v1/configure accepts, with the default configure applies when it is absent.
// Configure replaces the whole configuration, so the form and Purge send all of them.
const OPTION_FIELDS = [
  ['leaseTime', 'Lease time (s)', 300], ['retryLimit', 'Retry limit', 3], ['retryDelay', 'Retry delay (ms)', 1000],
  ['ttl', 'TTL (s)', 3600], ['maxSize', 'Max queue size (0 = none)', 0], ['priority', 'Priority', 0],
  ['delayedProcessing', 'Delayed processing (s)', 0], ['windowBuffer', 'Window buffer (s)', 0],
  ['maxWaitTimeSeconds', 'Max wait time (s)', 0], ['retentionSeconds', 'Retention (s)', 0],
  ['completedRetentionSeconds', 'Completed retention (s)', 0],
];
const BOOL_FIELDS = [['deadLetterQueue', 'Dead-letter queue', false], ['dlqAfterMaxRetries', 'DLQ after max retries', false],
  ['retentionEnabled', 'Retention enabled', false], ['encryptionEnabled', 'Encrypt payloads', false]];

// optionsOf reads a queue's options from its status read (queue.config). Older brokers named maxSize
// maxQueueSize and kept priority beside the config; an option the read lacks is listed in `missing`,
// because configuring without it would reset it to its default.
export function optionsOf(q) {
  const c = q.config || {};
  const options = {}, missing = [];
  for (const [k, , def] of [...OPTION_FIELDS, ...BOOL_FIELDS]) {
    let v = c[k];
    if (v === undefined && k === 'maxSize') v = c.maxQueueSize;
    if (v === undefined && k === 'priority') v = q.priority;
    if (v === undefined || v === null) { missing.push(k); v = def; }
    options[k] = v;
  }
  return { options, missing };
}

function MissingOptions({ missing }) {
  if (!missing.length) return null;
  return <div class="banner warn" data-testid="options-missing">The broker did not report {missing.join(', ')}: saving sets {missing.length > 1 ? 'them' : 'it'} to the default shown.</div>;
}

function Configure({ q, onClose }) {
  const read = optionsOf(q);
  const [v, setV] = useState(read.options);
  const [err, setErr] = useState(null);
  const save = async (e) => {
    e.preventDefault();
    setErr(null);
    const options = {};
    for (const [k] of OPTION_FIELDS) options[k] = Number(v[k]);
    for (const [k] of BOOL_FIELDS) options[k] = !!v[k];
    try {
      await api('/api/v1/configure', { method: 'POST', body: { queue: q.name, namespace: q.namespace || '', task: q.task || '', options } });
      onClose(true);
    } catch (e2) { setErr(e2); }
  };
  return (
    <Modal title={'Configure ' + q.name} onClose={() => onClose(false)} wide>
      <form onSubmit={save} class="form" data-testid="configure-form">
        <p class="muted small">Configure replaces every option; the form starts from the queue's current values, so saving it unchanged changes nothing.</p>
        <MissingOptions missing={read.missing} />
        <div class="fields">
          {OPTION_FIELDS.map(([k, label]) => (
            <label>{label}<input type="number" min={k === 'priority' ? undefined : '0'} name={k} value={v[k]} onInput={(e) => setV({ ...v, [k]: e.target.value })} /></label>
          ))}
          {BOOL_FIELDS.map(([k, label]) => (
            <label class="check"><input type="checkbox" name={k} checked={v[k]} onChange={(e) => setV({ ...v, [k]: e.target.checked })} />{label}</label>
          ))}
        </div>
        <ErrorBox error={err} />
        <div class="modal-actions"><button type="button" class="ghost" onClick={() => onClose(false)}>Cancel</button><button class="primary" type="submit" data-testid="configure-save">Save</button></div>
      </form>
    </Modal>
  );
}

export function QueueDetail({ name }) {
  const [range, , rq, rangeCtl] = useRange('1h');
  const [dialog, setDialog] = useState(null);
  const can = useCan();
  const d = useData(async () => {
    const r = rq();
    const [st, ops, parked] = await Promise.all([api(paths.statusQueue(name)),
      api('/api/v1/analytics/queue-ops', { query: { ...r, queue: name } }),
      api('/api/v1/analytics/queue-parked-replicas', { query: { ...r, queue: name } })]);
    return { st, ops, parked, win: windowOf(r) };
  }, [name, range], 30000);
  const parts = usePaged((d.data && d.data.st.partitions) || []);
  const [view, setView] = useState('');
  const [open, setOpen] = useState({ Throughput: true, 'Time lag': true });
  if (d.error && !d.data) return <Page title={name}><ErrorBox error={d.error} /><Link href="/queues">All queues</Link></Page>;
  if (!d.data) return <Page title={name}><div class="muted">Loading…</div></Page>;
  const { st, ops } = d.data;
  const q = st.queue, t = st.totals || {};
  const opts = optionsOf(q);
  const groups = st.consumerGroups || [];
  const series = ops.series || [];
  const b = (ops.bucketMinutes || 1) * 60000;
  const failed = series.reduce((a, r) => a + (r.ackFailed || 0), 0);
  const enc = encodeURIComponent(name);
  const purge = async () => {
    // No purge route exists: delete the queue and create it again with every option it had.
    const { options } = optionsOf(q);
    await api(paths.queue(name), { method: 'DELETE' });
    await api('/api/v1/configure', { method: 'POST', body: { queue: name, namespace: q.namespace || '', task: q.task || '', options } });
  };
  return (
    <Page title={<span data-testid="queue-title">{name}</span>} actions={<>
      <RangePicker ctl={rangeCtl} options={['1h', '6h', '24h']} />
      {can('consume') && <button onClick={() => setDialog('configure')} data-testid="configure">Configure</button>}
      {can('admin') && can('consume') && <button class="warn" onClick={() => setDialog('purge')} data-testid="purge">Purge</button>}
      {can('admin') && <button class="danger" onClick={() => setDialog('delete')} data-testid="delete-queue">Delete</button>}
    </>}>
      <div class="muted sub">{[q.namespace, q.task].filter(Boolean).join(' · ') || 'no namespace'} · {st.partitions.length} partitions · priority {q.priority} · created {time(q.createdAt)}</div>
      <div class="links">
        <Link href={'/messages?queue=' + enc}>Messages</Link><Link href={'/dlq?queue=' + enc}>Dead letters</Link><Link href={'/consumers?search=' + enc}>Consumer groups</Link>
      </div>
      <ErrorBox error={d.error} />
      {t.deadLetter > 0 && <div class="banner warn">{num(t.deadLetter)} messages in the dead-letter queue</div>}
      {failed > 0 && <div class="banner warn">{num(failed)} failed acks in this window</div>}
      <div class="stats">
        <Stat id="qd-pending" label="Pending" value={num(t.pending)} />
        <Stat id="qd-processing" label="Processing" value={num(t.processing)} />
        <Stat id="qd-completed" label="Completed" value={num(t.completed)} />
        <Stat id="qd-dlq" label="Dead letters" value={num(t.deadLetter)} tone={t.deadLetter ? 'warn' : ''} />
        <Stat id="qd-total" label="Total" value={num(t.total)} />
      </div>
      <Card title="Metrics" extra={<span class="muted small">this queue, {range.startsWith('custom') ? 'the chosen window' : 'the last ' + range}</span>}>
        <MetricRows rows={queueMetrics(series, d.data.parked, b, d.data.win)} open={open} setOpen={setOpen} win={d.data.win} prefix="q-" />
      </Card>
      <Card title="Configuration">
          <dl class="kv wide" data-testid="queue-config">
            {[...OPTION_FIELDS, ...BOOL_FIELDS].map(([k, label]) => {
              const val = opts.options[k];
              return <><dt>{label}</dt><dd data-testid={'cfg-' + k}>{opts.missing.includes(k) ? 'not reported' : typeof val === 'boolean' ? (val ? 'on' : 'off') : String(val)}</dd></>;
            })}
          </dl>
      </Card>
      {groups.length > 0 && (
          <Card title="Consumer groups" extra={<span class="muted small">counts from each group's position</span>}>
            <div class="scroll"><table class="table" data-testid="queue-groups">
              <thead><tr><th>Group</th><th class="num">Pending</th><th class="num">Processing</th><th class="num">Completed</th><th class="num">Dead letters</th><th class="num">Behind</th><th class="num">Lag</th></tr></thead>
              <tbody>{groups.map((g) => (
                <tr data-testid={'qg-' + groupLabel(g.consumerGroup)}><td>{groupName(g.consumerGroup)}</td>
                  <td class="num" data-testid="qg-pending">{num(g.messages?.pending)}</td><td class="num">{num(g.messages?.processing)}</td>
                  <td class="num" data-testid="qg-completed">{num(g.messages?.completed)}</td><td class="num">{num(g.messages?.deadLetter)}</td>
                  <td class="num">{num(g.lag?.messages)}{g.lag?.partitions ? <span class="muted"> · {num(g.lag.partitions)} part.</span> : null}</td>
                  <td class="num">{dur((g.lag?.seconds || 0) * 1000)}</td></tr>
              ))}</tbody>
            </table></div>
          </Card>
      )}
      <Card title={`Partitions (${num(st.partitions.length)})`} extra={groups.length > 0 && (
        <select value={view} onChange={(e) => setView(e.target.value)} aria-label="Counts of" data-testid="partitions-view">
          <option value="">counts of the slowest group</option>
          {groups.map((g) => <option value={g.consumerGroup}>counts of {groupName(g.consumerGroup)}</option>)}
        </select>
      )}>
        <div class="scroll"><table class="table" data-testid="partitions">
          <thead><tr><th>Partition</th><th class="num">Total</th><th class="num">Pending</th><th class="num">Processing</th><th class="num">Completed</th><th class="num">Dead letters</th>
            {view && <th class="num">Lag</th>}<th>Last activity</th></tr></thead>
          <tbody>{parts.rows.map((p) => {
            const g = view ? (p.consumerGroups || []).find((x) => x.consumerGroup === view) : null;
            const c = view ? (g && g.messages) || {} : p.stats || {};
            return (
              <tr><td><Link href={`/messages?queue=${enc}&partition=${encodeURIComponent(p.name)}`}>{p.name}</Link></td>
                <td class="num">{num(p.stats?.total)}</td><td class="num">{num(c.pending)}</td><td class="num">{num(c.processing)}</td>
                <td class="num">{num(c.completed)}</td><td class="num">{num(c.deadLetter)}</td>
                {view && <td class="num">{g && g.cursor === null ? <span class="muted" title="this group never read this partition">never read · </span> : null}{dur(((g && g.lag && g.lag.seconds) || 0) * 1000)}</td>}
                <td>{ago(p.lastActivity)}</td></tr>
            );
          })}</tbody>
        </table></div>
        <Pager pg={parts} id="partitions-pager" />
      </Card>
      {dialog === 'configure' && <Configure q={q} onClose={(ok) => { setDialog(null); if (ok) d.reload(); }} />}
      {dialog === 'delete' && <DeleteQueue name={name} onClose={(ok) => { setDialog(null); if (ok) navigate('/queues'); }} />}
      {dialog === 'purge' && (
        <Confirm title={'Purge ' + name} confirmLabel="Purge" run={purge} onClose={(ok) => { setDialog(null); if (ok) d.reload(); }}>
          Every message, dead letter and consumer cursor of <b>{name}</b> is deleted; the queue is created again with the same configuration.
          <MissingOptions missing={optionsOf(q).missing} />
        </Confirm>
      )}
    </Page>
  );
}

// queueMetrics are the queue page's metric rows, from its operation counters (queue-ops?queue=) and
// parked long-polls; every row's value is over the whole window unless it says otherwise.
function queueMetrics(series, parked, bucketMs, win) {
  const s = (f) => toPoints(series, 'bucket', f);
  const total = (k) => series.reduce((a, r) => a + (r[k] || 0), 0);
  let running = 0;
  const pendingDelta = toPoints(series, 'bucket', (r) => (running += (r.pushMessages || 0) - (r.ackSuccess || 0) - (r.ackFailed || 0)), false);
  const fillOf = (r) => (r.popMessages + r.popEmpty > 0 ? (100 * r.popMessages) / (r.popMessages + r.popEmpty) : null);
  const pops = total('popMessages'), empties = total('popEmpty');
  const perBucket = {};
  for (const r of (parked && parked.series) || []) perBucket[r.bucket] = (perBucket[r.bucket] || 0) + (r.parkedCount || 0);
  const parkedPts = toPoints(Object.entries(perBucket).map(([bucket, n]) => ({ bucket, n })), 'bucket', (r) => r.n);
  const secs = (win[1] - win[0]) / 1000;
  return [
    { label: 'Throughput', value: `${num(total('pushMessages') / secs, 2)}/s in · ${num((total('ackSuccess') + total('ackFailed')) / secs, 2)}/s out`,
      ctx: 'pushed in, acked out: average over the window', spark: s((r) => r.pushPerSecond),
      chart: [{ name: 'push/s', points: s((r) => r.pushPerSecond) }, { name: 'pop/s', points: s((r) => r.popPerSecond) }, { name: 'ack/s', points: s((r) => r.ackPerSecond) }] },
    { label: 'Pending Δ', value: num(running), ctx: 'pushed − acked over the window', spark: pendingDelta, chart: [{ name: 'pending Δ', points: pendingDelta }] },
    { label: 'Time lag', value: dur(Math.max(0, ...series.map((r) => r.maxLagMs || 0))), ctx: 'max wait from push to pop in the window', spark: s((r) => r.maxLagMs), fmt: dur,
      chart: [{ name: 'avg', points: s((r) => r.avgLagMs) }, { name: 'max', points: s((r) => r.maxLagMs) }] },
    { label: 'Fill ratio', value: pops + empties ? num((100 * pops) / (pops + empties), 0) + '%' : '—', ctx: 'share of pops that returned messages',
      spark: s(fillOf), fmt: (v) => num(v, 0) + '%', chart: [{ name: 'fill %', points: s(fillOf) }] },
    { label: 'Errors', value: `${num(total('ackFailed'))} failed acks · ${num(total('dlq'))} to DLQ`, ctx: 'per bucket', spark: s((r) => r.ackFailed), kind: 'bar',
      chart: [{ name: 'ack failed', points: s((r) => r.ackFailed) }, { name: 'dlq', points: s((r) => r.dlq) }] },
    { label: 'Consumed', value: num(total('ackSuccess')), ctx: 'messages acked in the window', spark: s((r) => r.ackSuccess),
      chart: [{ name: 'acked', points: s((r) => r.ackSuccess) }] },
    { label: 'Parked', value: num(parkedPts.length ? parkedPts[parkedPts.length - 1][1] : 0), ctx: 'long-polls waiting on this queue (last bucket)',
      spark: parkedPts, chart: [{ name: 'parked', points: parkedPts }] },
  ].map((r) => ({ ...r, bucketMs }));
}
