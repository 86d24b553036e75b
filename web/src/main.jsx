import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, getToken, setToken, onAuthError } from './api.js';
import { Link, useLocation, useData, refreshAll, Confirm, Modal, num, AccessContext, useCan, navigate, groupName } from './ui.jsx';
import { Dashboard } from './pages/dashboard.jsx';
import { Operations } from './pages/operations.jsx';
import { Queues, QueueDetail } from './pages/queues.jsx';
import { Consumers } from './pages/consumers.jsx';
import { Messages } from './pages/messages.jsx';
import { Traces } from './pages/traces.jsx';
import { Analytics } from './pages/analytics.jsx';
import { DeadLetters } from './pages/dlq.jsx';
import { System } from './pages/system.jsx';
import { Migration } from './pages/migration.jsx';
import './style.css';

const NAV = [
  ['Overview', [['/', 'Dashboard'], ['/operations', 'Queue operations']]],
  ['Routing', [['/queues', 'Queues'], ['/consumers', 'Consumers'], ['/messages', 'Messages']]],
  ['Observability', [['/traces', 'Traces'], ['/analytics', 'Analytics'], ['/dlq', 'Dead letter']]],
  ['Infrastructure', [['/system', 'System'], ['/migration', 'Migration']]],
];

function route(path) {
  const m = path.match(/^\/queues\/(.+)$/);
  if (m) return <QueueDetail name={decodeURIComponent(m[1])} />;
  switch (path.replace(/\/+$/, '') || '/') {
    case '/': return <Dashboard />;
    case '/operations': return <Operations />;
    case '/queues': return <Queues />;
    case '/consumers': return <Consumers />;
    case '/messages': return <Messages />;
    case '/traces': return <Traces />;
    case '/analytics': return <Analytics />;
    case '/dlq': return <DeadLetters />;
    case '/system': return <System />;
    case '/migration': return <Migration />;
  }
  return <section class="page"><h1>Not found</h1><p>No page at {path}. <Link href="/">Back to the dashboard</Link>.</p></section>;
}

// Health shows the outcome of the latest /health read only: an earlier answer says nothing about now,
// so a failed read turns the dot red however healthy the broker was before.
function Health() {
  const h = useData(() => api('/health'), [], 10000);
  const ok = !h.error && h.data && (h.data.status === 'healthy' || h.data.status === 'ok');
  let label = '…', tone = 'bad', why = '';
  if (h.error) {
    // 503 is the broker answering that PostgreSQL is unreachable; status 0 is no answer at all.
    label = h.error.status === 0 ? 'Offline' : 'Unhealthy';
    why = h.error.status === 0 ? 'the broker does not answer' : h.error.message;
  } else if (h.data) {
    label = ok ? 'Healthy' : 'Degraded';
    tone = ok ? 'ok' : 'warn';
  }
  const at = h.at ? new Date(h.at).toLocaleTimeString('en-GB', { hour12: false }) : '';
  return (
    <div class="health" data-testid="health" title={(why ? why + ' · ' : '') + (at ? 'checked ' + at : '')}>
      <i class={tone} /><span data-testid="health-label">{label}</span>
      {!h.error && h.data && h.data.version && <span class="muted"> · v{h.data.version}</span>}
    </div>
  );
}

// Maintenance shows the push/pop switches (with a confirmation) and the banners they cause.
function Maintenance() {
  // The switches are admin-only: other tokens see neither switches nor an error, and do not ask.
  const admin = useCan()('admin');
  const push = useData(() => (admin ? api('/api/v1/system/maintenance', { quiet: true }) : null), [admin], 30000);
  const pop = useData(() => (admin ? api('/api/v1/system/maintenance/pop', { quiet: true }) : null), [admin], 30000);
  const [ask, setAsk] = useState(null);
  if (!admin || (push.error && (push.error.status === 401 || push.error.status === 403))) return null;
  const pushOn = !!(push.data && push.data.maintenanceMode);
  const popOn = !!(pop.data && pop.data.popMaintenanceMode);
  const buffered = (push.data && push.data.bufferedMessages) || 0;
  const failed = (push.data && push.data.failedReplays) || 0;
  const toggle = (kind, on) => setAsk({ kind, on });
  return (
    <>
      <div class="switches">
        <label class="switch" title="Push maintenance: pushes go to the disk spool">
          <input type="checkbox" checked={pushOn} onClick={(e) => { e.preventDefault(); toggle('push', !pushOn); }} data-testid="toggle-push" />
          <span>Push</span>
        </label>
        <label class="switch" title="Pop maintenance: pops answer empty">
          <input type="checkbox" checked={popOn} onClick={(e) => { e.preventDefault(); toggle('pop', !popOn); }} data-testid="toggle-pop" />
          <span>Pop</span>
        </label>
      </div>
      {ask && (
        <Confirm title={`${ask.on ? 'Enable' : 'Disable'} ${ask.kind} maintenance`} confirmLabel={ask.on ? 'Enable' : 'Disable'}
          danger={ask.on}
          run={() => api(ask.kind === 'push' ? '/api/v1/system/maintenance' : '/api/v1/system/maintenance/pop', { method: 'POST', body: { enabled: ask.on } })}
          onClose={(done) => { setAsk(null); if (done) { push.reload(); pop.reload(); refreshAll(); } }}>
          {ask.kind === 'push'
            ? (ask.on ? 'Every broker will write new pushes to its disk spool instead of PostgreSQL until you turn this off.' : 'Brokers will write pushes to PostgreSQL again and replay what the spool holds.')
            : (ask.on ? 'Every pop on every broker will answer empty until you turn this off.' : 'Pops will deliver messages again.')}
        </Confirm>
      )}
      <div class="banners">
        {pushOn && <div class="banner warn" data-testid="banner-push">Push maintenance active · {num(buffered)} buffered on disk</div>}
        {popOn && <div class="banner warn" data-testid="banner-pop">Pop maintenance active: pops answer empty</div>}
        {failed > 0 && <div class="banner err">{num(failed)} buffered pushes failed to replay</div>}
        {!pushOn && buffered > 0 && <div class="banner info">{num(buffered)} messages still draining from the disk spool</div>}
      </div>
    </>
  );
}

// JumpBox (Ctrl-K / ⌘K, or the header's button) finds a queue or a consumer group by name and opens it.
function JumpBox({ onClose }) {
  const d = useData(async () => {
    const [qs, gs] = await Promise.all([api('/api/v1/resources/queues'), api('/api/v1/consumer-groups')]);
    return [
      ...(qs.queues || []).filter((q) => q.name).map((q) => ({ key: 'q:' + q.name, kind: 'queue', label: q.name,
        hint: [num(q.partitions) + ' partitions', q.namespace, q.task].filter(Boolean).join(' · '), href: '/queues/' + encodeURIComponent(q.name) })),
      ...(gs || []).map((g) => ({ key: 'g:' + g.name + '/' + g.queueName, kind: 'group', label: groupName(g.name),
        hint: 'on ' + g.queueName + ' · ' + g.state, href: '/consumers?queue=' + encodeURIComponent(g.queueName) + '&search=' + encodeURIComponent(g.name === '__QUEUE_MODE__' ? '' : g.name) })),
    ];
  }, []);
  const [text, setText] = useState('');
  const [sel, setSel] = useState(0);
  const t = text.trim().toLowerCase();
  const hits = (d.data || []).filter((x) => !t || x.label.toLowerCase().includes(t)).slice(0, 12);
  const go = (x) => { if (x) { onClose(); navigate(x.href); } };
  const key = (e) => {
    if (e.key === 'ArrowDown') { e.preventDefault(); setSel(Math.min(sel + 1, hits.length - 1)); }
    if (e.key === 'ArrowUp') { e.preventDefault(); setSel(Math.max(sel - 1, 0)); }
    if (e.key === 'Enter') { e.preventDefault(); go(hits[sel]); }
  };
  return (
    <Modal title="Jump to a queue or consumer group" onClose={onClose}>
      <input autoFocus type="search" placeholder="Name…" value={text} onInput={(e) => { setText(e.target.value); setSel(0); }} onKeyDown={key}
        aria-label="Jump to" data-testid="jump-input" style={{ width: '100%' }} />
      <div class="jump" data-testid="jump-results">
        {d.error && <div class="muted small">{d.error.message}</div>}
        {d.data && hits.length === 0 && <div class="muted small">Nothing named like that.</div>}
        {hits.map((x, i) => (
          <a href={x.href} class={'jumprow' + (i === sel ? ' on' : '')} onClick={(e) => { e.preventDefault(); go(x); }} onMouseEnter={() => setSel(i)} data-testid="jump-hit">
            <span class="badge">{x.kind}</span> <b>{x.label}</b> <span class="muted small">{x.hint}</span>
          </a>
        ))}
      </div>
    </Modal>
  );
}

// AuthGate asks for a token after a 401/403; the token is kept in localStorage and sent as a bearer.
function AuthGate() {
  const [err, setErr] = useState(null);
  const [val, setVal] = useState('');
  useEffect(() => onAuthError((e) => setErr(e)), []);
  if (!err) return null;
  const save = (e) => {
    e.preventDefault();
    setToken(val.trim());
    setVal('');
    setErr(null);
    refreshAll();
  };
  return (
    <div class="auth card" role="alert" data-testid="auth">
      <h2>{err.status === 401 ? 'This broker requires a token' : 'Your token is not allowed to do that'}</h2>
      <p>
        {err.status === 401
          ? 'The broker answered 401 (' + err.message + '). Paste a JWT issued for this broker; it is kept in this browser only.'
          : 'The broker answered 403 (' + err.message + ') for ' + err.path + '. Use a token with a role that may read (or administer) the broker.'}
      </p>
      <form onSubmit={save} class="row">
        <input type="password" placeholder="eyJhbGciOi…" value={val} onInput={(e) => setVal(e.target.value)} aria-label="Token" data-testid="token-input" />
        <button class="primary" type="submit" data-testid="token-save">Use token</button>
        {getToken() && <button type="button" class="ghost" onClick={() => { setToken(''); setErr(null); refreshAll(); }}>Forget token</button>}
      </form>
    </div>
  );
}

function App() {
  const { path } = useLocation();
  const [theme, setTheme] = useState(document.documentElement.dataset.theme || 'dark');
  const [menu, setMenu] = useState(false);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    try { localStorage.setItem('queen.theme', theme); } catch (e) { /* storage disabled */ }
  }, [theme]);
  useEffect(() => setMenu(false), [path]);
  const [jump, setJump] = useState(false);
  useEffect(() => {
    const k = (e) => { if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') { e.preventDefault(); setJump(true); } };
    addEventListener('keydown', k);
    return () => removeEventListener('keydown', k);
  }, []);
  // quiet: a 401 here is reported by the page's own reads; the token form then reloads this too.
  const acc = useData(() => api('/api/v1/access', { quiet: true }), []);
  const access = acc.data || (acc.error && acc.error.status !== 401 && acc.error.status !== 403 ? { unknown: true } : null);
  const active = (href) => (href === '/' ? path === '/' : path === href || path.startsWith(href + '/'));
  return (
    <AccessContext.Provider value={access}>
    <div class={'shell' + (menu ? ' menu-open' : '')} data-access={access ? 'known' : 'pending'}>
      <aside class="side">
        <div class="brand"><span class="logo">♛</span> Queen</div>
        <nav>
          {NAV.map(([group, links]) => (
            <div class="navgroup">
              <div class="navtitle">{group}</div>
              {links.map(([href, label]) => <Link href={href} class={active(href) ? 'on' : ''}>{label}</Link>)}
            </div>
          ))}
        </nav>
        <Health />
      </aside>
      <div class="main">
        <header class="top">
          <button class="ghost burger" onClick={() => setMenu(!menu)} aria-label="Menu">☰</button>
          <Maintenance />
          <div class="spacer" />
          <button class="ghost jumpbtn" onClick={() => setJump(true)} title="Jump to a queue or group (Ctrl-K)" data-testid="jump">⌕ <span class="muted small hide-sm">Ctrl-K</span></button>
          <button class="ghost" onClick={refreshAll} title="Refresh" data-testid="refresh">⟳</button>
          <button class="ghost" onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')} title="Theme" data-testid="theme">
            {theme === 'dark' ? '☀' : '☾'}
          </button>
        </header>
        <AuthGate />
        {/* Keyed on the URL: a jump to the same page with other filters starts it afresh. */}
        <main key={path + location.search}>{route(path)}</main>
        {jump && <JumpBox onClose={() => setJump(false)} />}
      </div>
    </div>
    </AccessContext.Provider>
  );
}

render(<App />, document.getElementById('app'));
