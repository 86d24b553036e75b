// Shared building blocks: routing, data loading with live refresh, formatting, dialogs and charts.
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState, useCallback } from 'preact/hooks';
import { api, rangeQuery } from './api.js';

// ---- routing (HTML5 history; the broker answers index.html for every page path)

const routeListeners = new Set();
export function navigate(to) {
  if (to === location.pathname + location.search) return;
  history.pushState(null, '', to);
  routeListeners.forEach((fn) => fn());
  window.scrollTo(0, 0);
}
addEventListener('popstate', () => routeListeners.forEach((fn) => fn()));

export function useLocation() {
  const [, set] = useState(0);
  useEffect(() => {
    const fn = () => set((n) => n + 1);
    routeListeners.add(fn);
    return () => routeListeners.delete(fn);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function Link({ href, children, ...rest }) {
  const onClick = (e) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={onClick} {...rest}>{children}</a>;
}

// ---- data loading

// The header's refresh button and the auth form fire this; every mounted useData reloads.
const refreshListeners = new Set();
export const refreshAll = () => refreshListeners.forEach((fn) => fn());

// useData loads fn() now, whenever deps change, on refreshAll, and every `every` ms when given.
export function useData(fn, deps = [], every = 0) {
  const [state, setState] = useState({ data: null, error: null, loading: true, at: 0 });
  const seq = useRef(0);
  const load = useCallback(async () => {
    const my = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await fn();
      if (my === seq.current) setState({ data, error: null, loading: false, at: Date.now() });
    } catch (error) {
      if (my === seq.current) setState((s) => ({ ...s, error, loading: false, at: Date.now() }));
    }
  }, deps);
  useEffect(() => {
    load();
    refreshListeners.add(load);
    const t = every ? setInterval(load, every) : 0;
    return () => { refreshListeners.delete(load); if (t) clearInterval(t); seq.current++; };
  }, [load, every]);
  return { ...state, reload: load };
}

export const get = (path, query) => () => api(path, { query });

// ---- what the caller may do (GET /api/v1/access), so pages offer only actions that can succeed

export const AccessContext = createContext(null);

// useCan answers whether the token passes an access level (consume, admin…). Until the broker has
// answered, nothing is offered; when it cannot answer, everything is, and the broker decides.
export function useCan() {
  const a = useContext(AccessContext);
  return (level) => !!a && (a.unknown || !!a[level]);
}

// ---- formatting

export function num(v, digits = 0) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  const n = Number(v);
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(1) + 'M';
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + 'k';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function dur(ms) {
  if (ms === null || ms === undefined) return '—';
  const s = ms / 1000;
  if (s < 1) return Math.round(ms) + ' ms';
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.round(s / 60) + ' min';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h';
  return (s / 86400).toFixed(1) + ' d';
}

export function ago(iso) {
  if (!iso) return '—';
  const ms = Date.now() - new Date(iso).getTime();
  return ms < 0 ? 'just now' : dur(ms) + ' ago';
}

export const time = (iso) => (iso ? new Date(iso).toLocaleString('en-GB', { hour12: false }) : '—');

export const short = (s, n = 8) => (s && s.length > n + 2 ? s.slice(0, n) + '…' : s || '—');

// Queue mode (no consumer group given) is the shared cursor; its reserved name is not for people.
export const QUEUE_MODE = '__QUEUE_MODE__';
export const groupName = (g) => (g === QUEUE_MODE ? 'queue mode' : g);

// FilterSelect offers the distinct non-empty values of a list ("" = any).
export function FilterSelect({ value, onChange, values, all, label, id }) {
  const opts = [...new Set(values.filter(Boolean))].sort();
  return (
    <select value={value} onChange={(e) => onChange(e.target.value)} aria-label={label} data-testid={id}>
      <option value="">{all}</option>{opts.map((v) => <option value={v}>{v}</option>)}
    </select>
  );
}

// ---- layout pieces

export function Page({ title, actions, children }) {
  return (
    <section class="page">
      <div class="page-head"><h1>{title}</h1><div class="actions">{actions}</div></div>
      {children}
    </section>
  );
}

export function Card({ title, extra, children, class: cls = '', ...rest }) {
  return (
    <div class={'card ' + cls} {...rest}>
      {(title || extra) && <div class="card-head"><h2>{title}</h2>{extra}</div>}
      {children}
    </div>
  );
}

export function Stat({ label, value, hint, tone, id }) {
  return (
    <div class={'stat ' + (tone || '')} data-testid={id}>
      <div class="stat-label">{label}</div>
      <div class="stat-value">{value}</div>
      {hint && <div class="stat-hint">{hint}</div>}
    </div>
  );
}

export function ErrorBox({ error }) {
  if (!error) return null;
  if (error.status === 401 || error.status === 403) {
    return <div class="banner err" role="alert">{error.status === 401 ? 'Sign-in required: ' : 'Not allowed: '}{error.message}</div>;
  }
  return <div class="banner err" role="alert">Could not load {error.path || 'data'}: {error.message}</div>;
}

export function Empty({ children }) {
  return <div class="empty">{children}</div>;
}

export function Segmented({ value, options, onChange, label, id }) {
  return (
    <div class="seg" role="group" aria-label={label} data-testid={id}>
      {options.map((o) => (
        <button type="button" class={o === value ? 'on' : ''} onClick={() => onChange(o)} key={o}>{o}</button>
      ))}
    </div>
  );
}

// useRange is a page's time window: a preset ending now, or a custom from/to. It returns the key the
// page's loads depend on, q() giving the from/to of a load, and the control RangePicker draws.
export function useRange(def = '1h') {
  const [preset, setPreset] = useState(def);
  const [custom, setCustom] = useState(null); // {from, to} ISO strings
  const key = preset === 'custom' && custom ? 'custom:' + custom.from + '/' + custom.to : preset;
  const q = () => (preset === 'custom' && custom ? custom : rangeQuery(preset));
  return [key, setPreset, q, { preset, setPreset, custom, setCustom }];
}

// local formats a time for a datetime-local input (local clock, minutes).
const local = (iso) => {
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};

// RangePicker: the presets, and "custom" with a from/to pair applied together (from before to).
export function RangePicker({ ctl, options }) {
  const [draft, setDraft] = useState(null);
  const [err, setErr] = useState('');
  const pick = (o) => {
    if (o === 'custom') {
      const cur = ctl.custom || rangeQuery(ctl.preset === 'custom' ? '1h' : ctl.preset);
      setDraft({ from: local(cur.from), to: local(cur.to) });
      ctl.setCustom(cur);
    } else {
      setDraft(null);
    }
    setErr('');
    ctl.setPreset(o);
  };
  const apply = (e) => {
    e.preventDefault();
    const from = new Date(draft.from), to = new Date(draft.to);
    if (!(from < to)) { setErr('"from" must be before "to"'); return; }
    setErr('');
    ctl.setCustom({ from: from.toISOString(), to: to.toISOString() });
  };
  return (
    <div class="row" data-testid="range">
      <Segmented value={ctl.preset} options={[...options, 'custom']} onChange={pick} label="Range" />
      {ctl.preset === 'custom' && draft && (
        <form class="row" onSubmit={apply} data-testid="range-custom">
          <input type="datetime-local" value={draft.from} onInput={(e) => { const v = e.target.value; setDraft((x) => ({ ...x, from: v })); }} aria-label="From" data-testid="range-from" />
          <span class="muted">→</span>
          <input type="datetime-local" value={draft.to} onInput={(e) => { const v = e.target.value; setDraft((x) => ({ ...x, to: v })); }} aria-label="To" data-testid="range-to" />
          <button type="submit" class="small" data-testid="range-apply">Apply</button>
          {err && <span class="banner err small">{err}</span>}
        </form>
      )}
    </div>
  );
}

export function Badge({ tone = '', children }) {
  return <span class={'badge ' + tone}>{children}</span>;
}

// Modal renders a dialog over the page; onClose on Escape or a click outside.
export function Modal({ title, onClose, children, wide }) {
  useEffect(() => {
    const k = (e) => e.key === 'Escape' && onClose();
    addEventListener('keydown', k);
    return () => removeEventListener('keydown', k);
  }, [onClose]);
  return (
    <div class="modal-back" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class={'modal' + (wide ? ' wide' : '')} role="dialog" aria-modal="true" aria-label={title}>
        <div class="card-head"><h2>{title}</h2><button class="ghost" onClick={onClose} aria-label="Close">✕</button></div>
        {children}
      </div>
    </div>
  );
}

// Confirm is a modal with one dangerous action; run() may throw, its message is shown.
export function Confirm({ title, children, confirmLabel = 'Confirm', danger = true, run, onClose }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  const go = async () => {
    setBusy(true);
    setErr(null);
    try {
      await run();
      onClose(true);
    } catch (e) {
      setErr(e);
      setBusy(false);
    }
  };
  return (
    <Modal title={title} onClose={() => onClose(false)}>
      <div class="modal-body">{children}</div>
      <ErrorBox error={err} />
      <div class="modal-actions">
        <button class="ghost" onClick={() => onClose(false)}>Cancel</button>
        <button class={danger ? 'danger' : 'primary'} disabled={busy} onClick={go} data-testid="confirm">{busy ? 'Working…' : confirmLabel}</button>
      </div>
    </Modal>
  );
}

export function Json({ value }) {
  return <pre class="json" data-testid="payload">{JSON.stringify(value, null, 2)}</pre>;
}

// ---- charts (hand-drawn SVG: a chart library would triple the bundle for lines and bars)

export const PALETTE = ['#4f8cff', '#2bb673', '#f0a030', '#e5534b', '#a371f7', '#39c5cf', '#d4a017', '#8b949e'];

function useWidth() {
  const ref = useRef(null);
  const [w, setW] = useState(600);
  useEffect(() => {
    if (!ref.current) return;
    const ro = new ResizeObserver((es) => setW(Math.max(120, Math.floor(es[0].contentRect.width))));
    ro.observe(ref.current);
    return () => ro.disconnect();
  }, []);
  return [ref, w];
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const pad2 = (n) => String(n).padStart(2, '0');
const hhmm = (d) => pad2(d.getHours()) + ':' + pad2(d.getMinutes());
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// tickLabel names a tick exactly: ticks sit on whole minutes, so HH:MM is the tick's time, not a rounding of it.
function tickLabel(t, spanMs) {
  const d = new Date(t);
  return spanMs > 36 * 3600e3 ? pad2(d.getDate()) + ' ' + MONTHS[d.getMonth()] + ' ' + hhmm(d) : hhmm(d);
}

const TICK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * 60000);

// timeTicks are the round times (local clock) inside [x0, x1], at most max of them, evenly spaced.
export function timeTicks(x0, x1, max) {
  const step = TICK_STEPS.find((s) => (x1 - x0) / s <= max) || Math.ceil((x1 - x0) / max / 864e5) * 864e5;
  const day = new Date(x0);
  day.setHours(0, 0, 0, 0);
  const base = day.getTime();
  const out = [];
  for (let t = base + Math.ceil((x0 - base) / step) * step; t <= x1; t += step) out.push(t);
  return out;
}

// windowOf turns a from/to query into the [from, to] ms a chart's time axis spans.
export const windowOf = (r) => [new Date(r.from).getTime(), new Date(r.to).getTime()];

// series: [{name, color?, points: [[ms, value|null], ...]}]; gaps (null or a jump of more than 1.5
// buckets) break the line instead of drawing zeros. win = [from, to] ms is the time axis: the window
// the data was asked for, so the axis ends at the moment of the read, not at the last point. A point
// stands at its bucket's start; a bar covers its bucket, cut at the window's end.
export function LineChart({ series, height = 180, fmt = (v) => num(v, 2), bucketMs, kind = 'line', id, win }) {
  const [ref, width] = useWidth();
  const [hover, setHover] = useState(null);
  const all = series.flatMap((s) => s.points.filter((p) => p[1] !== null && p[1] !== undefined));
  const pad = { l: 44, r: 10, t: 8, b: 22 };
  const W = width, H = height;
  if (!all.length) {
    return <div ref={ref} class="chart" data-testid={id}><Empty>No data in this range yet.</Empty></div>;
  }
  const xs = all.map((p) => p[0]);
  let [x0, x1] = win || [Math.min(...xs), Math.max(...xs)];
  if (x0 === x1) { x0 -= 60000; x1 += 60000; }
  const inside = (p) => p[0] >= x0 && p[0] <= x1;
  const shown = all.filter(inside);
  const ymax = niceMax(Math.max(0, ...shown.map((p) => p[1])));
  const pl = pad.l, pr = W - pad.r;
  const X = (t) => pl + ((t - x0) / (x1 - x0)) * (pr - pl);
  const Y = (v) => pad.t + (1 - v / ymax) * (H - pad.t - pad.b);
  const bms = bucketMs || 60000;
  const gap = bms * 1.5;
  const paths = series.map((s, i) => {
    const color = s.color || PALETTE[i % PALETTE.length];
    const pts = s.points.filter(inside);
    if (kind === 'bar') {
      const n = series.length;
      return pts.filter((p) => p[1]).map((p) => {
        const a = X(p[0]), b = X(Math.min(p[0] + bms, x1));
        const bw = Math.max(0.5, (b - a) / n - (b - a > 2 * n ? 1 : 0));
        return <rect x={a + i * ((b - a) / n)} y={Y(p[1])} width={bw} height={Y(0) - Y(p[1])} fill={color} data-t={p[0]} />;
      });
    }
    let d = '', prev = null;
    for (const [t, v] of pts) {
      if (v === null || v === undefined) { prev = null; continue; }
      d += (prev === null || t - prev > gap ? 'M' : 'L') + X(t).toFixed(1) + ' ' + Y(v).toFixed(1);
      prev = t;
    }
    const dots = pts.length <= 40 ? pts.filter((p) => p[1] !== null && p[1] !== undefined)
      .map((p) => <circle cx={X(p[0])} cy={Y(p[1])} r="2.4" fill={color} data-t={p[0]} />) : null;
    return <g><path d={d} fill="none" stroke={color} stroke-width="1.8" stroke-linejoin="round" />{dots}</g>;
  });
  const ticks = [0, 0.5, 1].map((f) => ymax * f);
  const xt = timeTicks(x0, x1, Math.max(2, Math.min(8, Math.floor((pr - pl) / 80))));
  const onMove = (e) => {
    const r = e.currentTarget.getBoundingClientRect();
    const t = x0 + ((e.clientX - r.left - pl) / (pr - pl)) * (x1 - x0);
    let best = null;
    for (const p of shown) if (best === null || Math.abs(p[0] - t) < Math.abs(best - t)) best = p[0];
    setHover(best);
  };
  return (
    <div ref={ref} class="chart" data-testid={id}>
      <svg width={W} height={H} onMouseMove={onMove} onMouseLeave={() => setHover(null)} role="img"
        data-from={x0} data-to={x1} data-pl={pl} data-pr={pr}>
        {ticks.map((v) => (
          <g><line x1={pl} x2={pr} y1={Y(v)} y2={Y(v)} class="grid" />
            <text x={pl - 6} y={Y(v) + 4} text-anchor="end" class="axis">{fmt(v)}</text></g>
        ))}
        {xt.map((t) => (
          <g><line x1={X(t)} x2={X(t)} y1={H - pad.b} y2={H - pad.b + 4} class="grid" />
            <text x={X(t)} y={H - 6} text-anchor={X(t) - pl < 20 ? 'start' : pr - X(t) < 20 ? 'end' : 'middle'} class="axis xt" data-t={t}>{tickLabel(t, x1 - x0)}</text></g>
        ))}
        {paths}
        {hover !== null && <line x1={X(hover)} x2={X(hover)} y1={pad.t} y2={H - pad.b} class="cursor" />}
      </svg>
      <div class="legend">
        {series.map((s, i) => {
          const p = hover !== null ? s.points.find((q) => q[0] === hover) : s.points[s.points.length - 1];
          return (
            <span><i style={{ background: s.color || PALETTE[i % PALETTE.length] }} />{s.name}
              <b>{p && p[1] !== null && p[1] !== undefined ? fmt(p[1]) : '—'}</b></span>
          );
        })}
        {hover !== null && <span class="muted">{tickLabel(hover, 864e5 * 2)}</span>}
      </div>
    </div>
  );
}

// MetricRows: one row per metric (label, current value, what it means, a sparkline) that opens into its
// chart. rows: [{label, value, ctx, spark: points, chart: series, fmt?, kind?, bucketMs}].
export function MetricRows({ rows, open, setOpen, win, prefix = '' }) {
  return (
    <div class="mtable">
      {rows.map((r) => (
        <div class="mitem">
          <div class="mrow" onClick={() => setOpen({ ...open, [r.label]: !open[r.label] })} data-testid={'metric-' + prefix + r.label}>
            <span class="mlabel"><i class="dot ok" /> {r.label}</span>
            <span class="num">{r.value}</span>
            <span class="muted hide-sm">{r.ctx}</span>
            <span class="hide-sm"><Sparkline values={r.spark.map((p) => p[1])} /></span>
            <span class="muted">{open[r.label] ? '▾' : '▸'}</span>
          </div>
          {open[r.label] && <LineChart id={'chart-' + prefix + r.label} series={r.chart} bucketMs={r.bucketMs} fmt={r.fmt} kind={r.kind} win={win} />}
        </div>
      ))}
    </div>
  );
}

export function Sparkline({ values, color = PALETTE[0], width = 90, height = 24 }) {
  const v = values.filter((x) => x !== null && x !== undefined);
  if (v.length < 2) return <svg width={width} height={height} />;
  const max = Math.max(...v, 1e-9);
  const d = v.map((y, i) => (i ? 'L' : 'M') + ((i / (v.length - 1)) * width).toFixed(1) + ' ' + (height - 2 - (y / max) * (height - 4)).toFixed(1)).join('');
  return <svg width={width} height={height} class="spark"><path d={d} fill="none" stroke={color} stroke-width="1.5" /></svg>;
}

// BarList draws labelled horizontal bars (top-N lists, status distributions).
export function BarList({ rows, fmt = num, id }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  if (!rows.length) return <Empty>Nothing to show.</Empty>;
  return (
    <div class="barlist" data-testid={id}>
      {rows.map((r, i) => (
        <div class="barrow">
          <span class="barlabel" title={r.label}>{r.href ? <Link href={r.href}>{r.label}</Link> : r.label}</span>
          <span class="bartrack"><span class="barfill" style={{ width: (100 * r.value) / max + '%', background: r.color || PALETTE[i % PALETTE.length] }} /></span>
          <span class="barval">{fmt(r.value)}</span>
        </div>
      ))}
    </div>
  );
}

// series helpers: drop the still-filling last bucket, turn rows into [ms, value] points.
export function toPoints(rows, tsKey, valueFn, dropLast = true) {
  const sorted = [...(rows || [])].sort((a, b) => new Date(a[tsKey]) - new Date(b[tsKey]));
  const pts = sorted.map((r) => [new Date(r[tsKey]).getTime(), valueFn(r)]);
  return dropLast && pts.length > 2 ? pts.slice(0, -1) : pts;
}

// usePaged shows `size` rows of a long list at a time: a queue of thousands of partitions must not
// render thousands of rows. The page resets when the list shrinks below it.
export function usePaged(rows, size = 50) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const p = Math.min(page, pages - 1);
  return { rows: rows.slice(p * size, (p + 1) * size), page: p, pages, size, total: rows.length, setPage };
}

export function Pager({ pg, id }) {
  if (pg.pages <= 1) return null;
  const first = pg.page * pg.size + 1, last = Math.min(pg.total, (pg.page + 1) * pg.size);
  return (
    <div class="row pager" data-testid={id}>
      <button class="small" disabled={pg.page === 0} onClick={() => pg.setPage(0)} aria-label="First page">«</button>
      <button class="small" disabled={pg.page === 0} onClick={() => pg.setPage(pg.page - 1)}>← Previous</button>
      <span class="muted" data-testid={id && id + '-label'}>{num(first)}–{num(last)} of {num(pg.total)}</span>
      <button class="small" disabled={pg.page >= pg.pages - 1} onClick={() => pg.setPage(pg.page + 1)} data-testid={id && id + '-next'}>Next →</button>
      <button class="small" disabled={pg.page >= pg.pages - 1} onClick={() => pg.setPage(pg.pages - 1)} aria-label="Last page">»</button>
    </div>
  );
}
