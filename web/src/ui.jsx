// Shared building blocks: routing, data loading with live refresh, formatting, dialogs and charts.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
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

export function useRange(def = '1h') {
  const [range, setRange] = useState(def);
  return [range, setRange, () => rangeQuery(range)];
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

function tickLabel(t, spanMs) {
  const d = new Date(t);
  const hm = d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false });
  return spanMs > 36 * 3600e3 ? d.toLocaleDateString('en-GB', { day: '2-digit', month: 'short' }) + ' ' + hm : hm;
}

// series: [{name, color?, points: [[ms, value|null], ...]}]; gaps (null or a jump of more than 1.5
// buckets) break the line instead of drawing zeros.
export function LineChart({ series, height = 180, fmt = (v) => num(v, 2), bucketMs, kind = 'line', id }) {
  const [ref, width] = useWidth();
  const [hover, setHover] = useState(null);
  const all = series.flatMap((s) => s.points.filter((p) => p[1] !== null && p[1] !== undefined));
  const pad = { l: 44, r: 10, t: 8, b: 22 };
  const W = width, H = height;
  if (!all.length) {
    return <div ref={ref} class="chart" data-testid={id}><Empty>No data in this range yet.</Empty></div>;
  }
  const xs = all.map((p) => p[0]);
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (x0 === x1) { x0 -= 60000; x1 += 60000; }
  const ymax = niceMax(Math.max(...all.map((p) => p[1])));
  const X = (t) => pad.l + ((t - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const Y = (v) => pad.t + (1 - v / ymax) * (H - pad.t - pad.b);
  const gap = (bucketMs || 60000) * 1.5;
  const paths = series.map((s, i) => {
    const color = s.color || PALETTE[i % PALETTE.length];
    if (kind === 'bar') {
      const n = series.length;
      const bw = Math.max(1, ((W - pad.l - pad.r) / Math.max(1, (x1 - x0) / (bucketMs || 60000) + 1)) / n - 1);
      return s.points.filter((p) => p[1]).map((p) => (
        <rect x={X(p[0]) - (bw * n) / 2 + i * bw} y={Y(p[1])} width={bw} height={Y(0) - Y(p[1])} fill={color} />
      ));
    }
    let d = '', prev = null;
    for (const [t, v] of s.points) {
      if (v === null || v === undefined) { prev = null; continue; }
      d += (prev === null || t - prev > gap ? 'M' : 'L') + X(t).toFixed(1) + ' ' + Y(v).toFixed(1);
      prev = t;
    }
    const dots = s.points.length <= 40 ? s.points.filter((p) => p[1] !== null && p[1] !== undefined)
      .map((p) => <circle cx={X(p[0])} cy={Y(p[1])} r="2.4" fill={color} />) : null;
    return <g><path d={d} fill="none" stroke={color} stroke-width="1.8" stroke-linejoin="round" />{dots}</g>;
  });
  const ticks = [0, 0.5, 1].map((f) => ymax * f);
  const nx = Math.max(2, Math.min(6, Math.floor(W / 110)));
  const xt = Array.from({ length: nx }, (_, i) => x0 + ((x1 - x0) * i) / (nx - 1));
  const onMove = (e) => {
    const r = e.currentTarget.getBoundingClientRect();
    const t = x0 + ((e.clientX - r.left - pad.l) / (W - pad.l - pad.r)) * (x1 - x0);
    let best = null;
    for (const x of xs) if (best === null || Math.abs(x - t) < Math.abs(best - t)) best = x;
    setHover(best);
  };
  return (
    <div ref={ref} class="chart" data-testid={id}>
      <svg width={W} height={H} onMouseMove={onMove} onMouseLeave={() => setHover(null)} role="img">
        {ticks.map((v) => (
          <g><line x1={pad.l} x2={W - pad.r} y1={Y(v)} y2={Y(v)} class="grid" />
            <text x={pad.l - 6} y={Y(v) + 4} text-anchor="end" class="axis">{fmt(v)}</text></g>
        ))}
        {xt.map((t, i) => (i > 0 && tickLabel(t, x1 - x0) === tickLabel(xt[i - 1], x1 - x0) ? null : (
          <text x={X(t)} y={H - 6} text-anchor={i === 0 ? 'start' : i === nx - 1 ? 'end' : 'middle'} class="axis">{tickLabel(t, x1 - x0)}</text>
        )))}
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
        {hover !== null && <span class="muted">{tickLabel(hover, x1 - x0 + 86400e3 * 2)}</span>}
      </div>
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
