import { useState } from 'preact/hooks';
import { api, paths } from '../api.js';
import { FilterSelect, useCan, Page, Card, ErrorBox, Segmented, useData, useLocation, num, dur, time, Link, Confirm, Modal, Badge, Empty, groupName } from '../ui.jsx';

const LAG_PRESETS = { any: 0, '1m': 60, '5m': 300, '30m': 1800, '1h': 3600, '6h': 21600, '24h': 86400 };
const STATE_TONE = { Stable: 'ok', Lagging: 'warn', Dead: 'bad' };

export function Consumers() {
  const { query } = useLocation();
  const [search, setSearch] = useState(query.get('search') || '');
  const [laggingOnly, setLaggingOnly] = useState(false);
  const [preset, setPreset] = useState('1h');
  const [dialog, setDialog] = useState(null);
  const can = useCan();
  const [ns, setNs] = useState(query.get('namespace') || '');
  const [task, setTask] = useState(query.get('task') || '');
  const [queue, setQueue] = useState(query.get('queue') || '');
  const groups = useData(() => api('/api/v1/consumer-groups'), []);
  // A group's namespace and task are its queue's.
  const queues = useData(() => api('/api/v1/resources/queues'), []);
  const qinfo = Object.fromEntries(((queues.data && queues.data.queues) || []).map((q) => [q.name, q]));
  const lagging = useData(() => api('/api/v1/consumer-groups/lagging', { query: { minLagSeconds: LAG_PRESETS[preset] } }), [preset]);
  const reload = () => { groups.reload(); lagging.reload(); };
  const rows = (groups.data || []).filter((g) => (!laggingOnly || g.partitionsWithLag > 0) && (!queue || g.queueName === queue) &&
    (!ns || (qinfo[g.queueName] || {}).namespace === ns) && (!task || (qinfo[g.queueName] || {}).task === task) &&
    (!search || (g.name + ' ' + g.queueName).toLowerCase().includes(search.toLowerCase())))
    .sort((a, b) => (b.maxTimeLag || 0) - (a.maxTimeLag || 0));
  return (
    <Page title="Consumer groups" actions={<>
      <input type="search" placeholder="Search groups or queues" value={search} onInput={(e) => setSearch(e.target.value)} aria-label="Search" />
      <FilterSelect value={ns} onChange={setNs} values={Object.values(qinfo).map((q) => q.namespace)} all="all namespaces" label="Namespace" id="group-ns" />
      <FilterSelect value={task} onChange={setTask} values={Object.values(qinfo).map((q) => q.task)} all="all tasks" label="Task" id="group-task" />
      <FilterSelect value={queue} onChange={setQueue} values={(groups.data || []).map((g) => g.queueName)} all="all queues" label="Queue" id="group-queue" />
      <label class="check"><input type="checkbox" checked={laggingOnly} onChange={(e) => setLaggingOnly(e.target.checked)} /> lagging only</label>
    </>}>
      <ErrorBox error={groups.error} />
      {groups.data && rows.length === 0 && <Empty>No consumer groups{search || ns || task || queue || laggingOnly ? ' match' : ' yet'}.</Empty>}
      <div class="cards">
        {rows.map((g) => (
          <div class={'qcard ' + (STATE_TONE[g.state] || '')} data-testid={`group-${g.name}-${g.queueName}`}>
            <div class="qhead"><b>{groupName(g.name)}</b><Badge tone={STATE_TONE[g.state]}>{g.state}</Badge></div>
            <div class="muted small">on <Link href={'/queues/' + encodeURIComponent(g.queueName)}>{g.queueName}</Link>{g.subscriptionMode ? ' · subscribed ' + g.subscriptionMode : ''}</div>
            {/* Every figure is this group's own, from its position on each partition (never-read ones included). */}
            <div class="qnums">
              {g.messages && <span><b data-testid="g-pending">{num(g.messages.pending)}</b> pending</span>}
              {g.messages && <span><b data-testid="g-completed">{num(g.messages.completed)}</b> completed</span>}
              <span><b data-testid="g-lagging">{num(g.partitionsWithLag)}</b> of {num(g.partitions ?? g.members)} partitions lagging</span>
              <span><b data-testid="g-maxlag">{dur((g.maxTimeLag || 0) * 1000)}</b> max lag</span>
              {g.totalLag !== null && g.totalLag !== undefined && <span><b data-testid="g-behind">{num(g.totalLag)}</b> messages behind</span>}
              <span><b data-testid="g-consumed">{num(g.totalConsumed)}</b> consumed</span>
            </div>
            <div class="row wrap">
              {can('consume') && <button class="small" onClick={() => setDialog({ kind: 'end', g })} data-testid="seek-end">Seek to end</button>}
              {can('consume') && <button class="small" onClick={() => setDialog({ kind: 'ts', g })} data-testid="seek-ts">Seek to time…</button>}
              {can('admin') && <button class="small danger" onClick={() => setDialog({ kind: 'delete', g })} data-testid="group-delete">Delete</button>}
            </div>
          </div>
        ))}
      </div>
      <Card title="Lagging partitions" extra={<Segmented value={preset} options={Object.keys(LAG_PRESETS)} id="lag-presets" onChange={setPreset} label="Lag threshold" />}>
        <ErrorBox error={lagging.error} />
        {lagging.data && lagging.data.length === 0 ? <Empty>{preset === 'any' ? 'No partition has unconsumed messages.' : `No partition lags more than ${preset}.`}</Empty> : (
          <div class="scroll"><table class="table" data-testid="lagging">
            <thead><tr><th>Group</th><th>Queue</th><th>Partition</th><th class="num">Offset lag</th><th class="num">Time lag</th><th>Oldest unconsumed</th><th /></tr></thead>
            <tbody>{(lagging.data || []).map((r) => (
              <tr><td>{groupName(r.consumer_group)}</td><td>{r.queue_name}</td><td>{r.partition_name}</td>
                <td class="num">{num(r.offset_lag)}</td><td class="num">{dur(r.time_lag_seconds * 1000)}</td><td>{time(r.oldest_unconsumed_at)}</td>
                <td>{can('consume') && <button class="small" onClick={() => setDialog({ kind: 'skip', r })} data-testid="skip">Skip</button>}</td></tr>
            ))}</tbody>
          </table></div>
        )}
      </Card>
      {dialog && <GroupDialog d={dialog} onClose={(ok) => { setDialog(null); if (ok) reload(); }} />}
    </Page>
  );
}

function GroupDialog({ d, onClose }) {
  const [ts, setTs] = useState(() => new Date(Date.now() - 3600e3).toISOString().slice(0, 16));
  const [meta, setMeta] = useState(true);
  const g = d.g;
  const label = g && groupName(g.name);
  if (d.kind === 'end') {
    return <Confirm title={`Seek ${label} to the end of ${g.queueName}`} confirmLabel="Seek to end" run={() => api(paths.seek(g.name, g.queueName), { method: 'POST', body: { toEnd: true } })} onClose={onClose}>
      Every partition cursor of this group on <b>{g.queueName}</b> moves past the newest message: the backlog is skipped, not delivered.
    </Confirm>;
  }
  if (d.kind === 'ts') {
    return <Confirm title={`Seek ${label} to a time`} confirmLabel="Seek" danger={false}
      run={() => api(paths.seek(g.name, g.queueName), { method: 'POST', body: { timestamp: new Date(ts).toISOString() } })} onClose={onClose}>
      <p>Cursors move to the last message at or before this time; later messages are delivered again.</p>
      <label>Time (local)<input type="datetime-local" value={ts} onInput={(e) => setTs(e.target.value)} data-testid="seek-time" /></label>
    </Confirm>;
  }
  if (d.kind === 'skip') {
    const r = d.r;
    return <Confirm title={`Skip partition ${r.partition_name}`} confirmLabel="Skip to end" run={() => api(paths.seekPartition(r.consumer_group, r.queue_name, r.partition_name), { method: 'POST' })} onClose={onClose}>
      The cursor of <b>{r.consumer_group}</b> on <b>{r.queue_name}/{r.partition_name}</b> moves past its {num(r.offset_lag)} unconsumed messages.
    </Confirm>;
  }
  return <Confirm title={`Delete ${label} on ${g.queueName}`} confirmLabel="Delete"
    run={() => api(paths.groupQueue(g.name, g.queueName), { method: 'DELETE', query: { deleteMetadata: meta } })} onClose={onClose}>
    <p>The group's cursors on <b>{g.queueName}</b> are deleted; its next pop starts from its subscription point.</p>
    <label class="check"><input type="checkbox" checked={meta} onChange={(e) => setMeta(e.target.checked)} /> also delete the subscription metadata</label>
  </Confirm>;
}
