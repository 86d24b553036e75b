import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, Card, Stat, ErrorBox, Segmented, useRange, RangePicker, useData, LineChart, windowOf, toPoints, num, dur, ago, time, Empty, BarList } from '../ui.jsx';

export function System() {
  const [tab, setTab] = useState('resources');
  return (
    <Page title="System" actions={<Segmented value={tab} options={['resources', 'postgres']} onChange={setTab} label="Tab" />}>
      <HealthCard />
      {tab === 'resources' ? <Resources /> : <Postgres />}
    </Page>
  );
}

function HealthCard() {
  const h = useData(() => api('/health'), [], 30000);
  const b = useData(() => api('/api/v1/status/buffers'), [], 30000);
  return (
    <div class="stats">
      <Stat id="sys-health" label="Broker" value={h.data ? h.data.status : h.error ? 'offline' : '…'} tone={h.data && h.data.status === 'healthy' ? 'good' : 'bad'} hint={h.data && 'database ' + h.data.database} />
      <Stat label="Version" value={h.data ? h.data.version : '—'} />
      <Stat id="sys-spool" label="Spooled pushes" value={num(b.data && b.data.pending)} hint={b.data && (b.data.spoolEnabled ? 'disk spool on' : 'no disk spool')} />
      <Stat label="Failed replays" value={num(b.data && b.data.failed)} tone={b.data && b.data.failed ? 'bad' : ''} />
    </div>
  );
}

const AGG = ['avg', 'max', 'min'];

function Resources() {
  const [range, , q, rangeCtl] = useRange('1h');
  const [agg, setAgg] = useState('avg');
  const d = useData(async () => { const r = q(); return { ...(await api('/api/v1/analytics/system-metrics', { query: r })), win: windowOf(r) }; }, [range]);
  const reps = (d.data && d.data.replicas) || [];
  const b = ((d.data && d.data.bucketMinutes) || 1) * 60000;
  const per = (group, key, name) => reps.map((r) => ({
    name: (reps.length > 1 ? r.hostname + ':' + r.port + ' ' : '') + name,
    points: toPoints(r.timeSeries, 'timestamp', (p) => (p.metrics[group] && p.metrics[group][key] ? p.metrics[group][key][agg] : null)),
  }));
  return (
    <>
      <div class="row end">
        <Segmented value={agg} options={AGG} onChange={setAgg} label="Aggregation" />
        <RangePicker ctl={rangeCtl} options={['15m', '1h', '6h', '24h']} />
      </div>
      <ErrorBox error={d.error} />
      {d.data && reps.length === 0 && <Empty>No broker samples in this range yet (one is taken every STATS_INTERVAL_MS).</Empty>}
      {reps.length > 0 && (
        <>
          <div class="grid2">
            <Card title="CPU %"><LineChart win={d.data.win} id="sys-cpu" bucketMs={b} fmt={(v) => num(v, 1) + '%'} series={[...per('cpu', 'user_pct', 'user'), ...per('cpu', 'system_pct', 'system')]} /></Card>
            <Card title="Memory (RSS, MB)"><LineChart win={d.data.win} id="sys-mem" bucketMs={b} fmt={(v) => num(v, 0)} series={per('memory', 'rss_mb', 'RSS')} /></Card>
            <Card title="Database pool"><LineChart win={d.data.win} bucketMs={b} series={[...per('database', 'pool_active', 'active'), ...per('database', 'pool_idle', 'idle')]} /></Card>
            <Card title="Goroutines and waits"><LineChart win={d.data.win} bucketMs={b} series={[...per('threadpool', 'goroutines', 'goroutines'), ...per('threadpool', 'db_queue_size', 'waited acquires'), ...per('registries', 'parked', 'parked polls')]} /></Card>
          </div>
          <Card title="Brokers">
            <div class="scroll"><table class="table" data-testid="servers">
              <thead><tr><th>Host</th><th>Port</th><th>PID</th><th class="num">CPU user/sys</th><th class="num">RSS</th><th class="num">Pool active/idle/size</th><th>Last seen</th></tr></thead>
              <tbody>{reps.map((r) => {
                const last = r.timeSeries[r.timeSeries.length - 1].metrics;
                return (
                  <tr><td>{r.hostname}</td><td>{r.port}</td><td>{r.pid}</td>
                    <td class="num">{num(last.cpu.user_pct.last, 1)}% / {num(last.cpu.system_pct.last, 1)}%</td>
                    <td class="num">{num(last.memory.rss_mb.last, 0)} MB</td>
                    <td class="num">{num(last.database.pool_active.last)} / {num(last.database.pool_idle.last)} / {num(last.database.pool_size.last)}</td>
                    <td>{ago(r.lastSeen)}</td></tr>
                );
              })}</tbody>
            </table></div>
          </Card>
        </>
      )}
    </>
  );
}

function Postgres() {
  const d = useData(() => api('/api/v1/analytics/postgres-stats'), []);
  const x = d.data;
  if (!x) return <ErrorBox error={d.error} />;
  const db = x.database || {};
  return (
    <>
      <ErrorBox error={d.error} />
      <div class="stats">
        <Stat id="pg-hit" label="Cache hit ratio" value={db.cacheHitRatio === null || db.cacheHitRatio === undefined ? '—' : num(db.cacheHitRatio, 2) + '%'} tone={db.cacheHitRatio < 90 ? 'warn' : 'good'} />
        <Stat label="Database size" value={db.sizeBytes === undefined ? db.size : bytes(db.sizeBytes)} hint={db.name} />
        <Stat label="Connections" value={num(db.connections)} />
        <Stat label="Commits / rollbacks" value={`${num(db.commits)} / ${num(db.rollbacks)}`} />
        <Stat label="Deadlocks" value={num(db.deadlocks)} tone={db.deadlocks ? 'warn' : ''} />
        <Stat id="pg-version" label="PostgreSQL" value={pgVersion(db.version).short} hint={pgVersion(db.version).rest} />
      </div>
      <div class="grid2">
        <Card title="Table sizes"><BarList id="pg-sizes" rows={(x.tableSizes || []).slice(0, 10).map((t) => ({ label: t.table, value: t.totalBytes }))} fmt={bytes} /></Card>
        <Card title="Dead tuples">
          <div class="scroll"><table class="table" data-testid="pg-dead"><thead><tr><th>Table</th><th class="num">Live</th><th class="num">Dead</th><th class="num">Dead %</th></tr></thead>
            <tbody>{(x.deadTuples || []).filter((t) => t.liveTuples || t.deadTuples).map((t) => <tr><td>{t.table}</td><td class="num">{num(t.liveTuples)}</td><td class="num">{num(t.deadTuples)}</td><td class="num">{t.deadRatio === null ? '—' : num(t.deadRatio, 1)}</td></tr>)}</tbody></table></div>
        </Card>
        <Card title="Table cache">
          <div class="scroll"><table class="table"><thead><tr><th>Table</th><th class="num">Hit</th><th class="num">Read</th><th class="num">Hit %</th></tr></thead>
            <tbody>{(x.tableCache || []).slice(0, 12).map((t) => <tr><td>{t.table}</td><td class="num">{num(t.heapHit)}</td><td class="num">{num(t.heapRead)}</td><td class="num">{t.hitRatio === null ? '—' : num(t.hitRatio, 1)}</td></tr>)}</tbody></table></div>
        </Card>
        <Card title="HOT updates">
          <div class="scroll"><table class="table"><thead><tr><th>Table</th><th class="num">Updates</th><th class="num">HOT</th><th class="num">HOT %</th></tr></thead>
            <tbody>{(x.hotUpdates || []).filter((t) => t.updates).map((t) => <tr><td>{t.table}</td><td class="num">{num(t.updates)}</td><td class="num">{num(t.hotUpdates)}</td><td class="num">{num(t.hotRatio, 1)}</td></tr>)}</tbody></table></div>
        </Card>
        <Card title="Autovacuum">
          <div class="scroll"><table class="table"><thead><tr><th>Table</th><th>Autovacuumed</th><th>Autoanalyzed</th><th class="num">Runs</th></tr></thead>
            <tbody>{(x.autovacuumStatus || []).map((t) => <tr><td>{t.table}</td><td>{t.lastAutovacuum ? ago(t.lastAutovacuum) : 'never'}</td><td>{t.lastAutoanalyze ? ago(t.lastAutoanalyze) : 'never'}</td><td class="num">{num(t.autovacuumCount)}</td></tr>)}</tbody></table></div>
        </Card>
        <Card title="Active queries">
          {(x.activeQueries || []).length === 0 ? <Empty>No other statement is running.</Empty> : (
            <div class="scroll"><table class="table fit"><thead><tr><th style="width:64px">PID</th><th style="width:120px">State</th><th class="num" style="width:80px">Running</th><th>Query</th></tr></thead>
              <tbody>{x.activeQueries.map((q) => <tr><td>{q.pid}</td><td class="trunc" title={q.state}>{q.state}</td><td class="num">{dur(q.durationMs)}</td><td class="mono trunc" title={q.query}>{q.query}</td></tr>)}</tbody></table></div>
          )}
        </Card>
      </div>
      <Card title="Settings"><dl class="kv" data-testid="pg-settings">{Object.entries(x.bufferConfig || {}).map(([k, v]) => <><dt>{k}</dt><dd data-setting={k} title={'pg_settings: ' + v}>{pgSetting(v)}</dd></>)}</dl>
        <div class="muted small">Read {time(x.timestamp)}. Buffer-cache contents need the pg_buffercache extension, which the broker does not install.</div></Card>
    </>
  );
}

function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  const i = Math.min(u.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return (n / Math.pow(1024, i)).toFixed(i ? 1 : 0).replace(/\.0$/, '') + ' ' + u[i];
}

// pgVersion splits server_version ("15.14 (Debian 15.14-1.pgdg120+1)") into the number a tile can show
// in full and the build note under it.
function pgVersion(v) {
  const m = /^(\S+)\s*(.*)$/.exec(v || '');
  return m ? { short: m[1], rest: m[2].replace(/^\((.*)\)$/, '$1') } : { short: '—', rest: '' };
}

const SIZE_UNITS = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };
const TIME_UNITS = { us: 1e-3, ms: 1, s: 1000, min: 60000, h: 3600e3, d: 864e5 };

// pgSetting reads pg_settings' "setting unit" pair ("16384 8kB" is 16384 blocks of 8 kB) as a size or
// a duration people read; unit-less settings (on, 100, 0.2) are shown as they are.
export function pgSetting(v) {
  const m = /^(-?[\d.]+) (\d*)(B|kB|MB|GB|TB|us|ms|s|min|h|d)$/.exec(v || '');
  if (!m) return v;
  const n = Number(m[1]) * (m[2] ? Number(m[2]) : 1);
  if (SIZE_UNITS[m[3]]) return n < 0 ? 'unlimited' : bytes(n * SIZE_UNITS[m[3]]);
  return n < 0 ? 'off' : dur(n * TIME_UNITS[m[3]]);
}
