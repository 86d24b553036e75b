// The broker's HTTP API as the pages use it: same origin, JSON in and out, a bearer token when the
// operator gave one (or when the auth proxy left a readable cookie), errors as Error(body.error).

const TOKEN_KEY = 'queen.token';

export function getToken() {
  try {
    const t = localStorage.getItem(TOKEN_KEY);
    if (t) return t;
  } catch (e) { /* storage disabled */ }
  const m = document.cookie.match(/(?:^|;\s*)(?:queen_token|token)=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : '';
}

export function setToken(t) {
  try {
    if (t) localStorage.setItem(TOKEN_KEY, t);
    else localStorage.removeItem(TOKEN_KEY);
  } catch (e) { /* storage disabled */ }
}

export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
}

// Listeners told about 401/403 answers, so the shell can ask for a token instead of showing nothing.
const authListeners = new Set();
export const onAuthError = (fn) => { authListeners.add(fn); return () => authListeners.delete(fn); };

// quiet: a 401/403 is the caller's business (the header's admin-only maintenance reads), not the token form's.
export async function api(path, { method = 'GET', body, query, quiet = false } = {}) {
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const s = q.toString();
    if (s) url += (url.includes('?') ? '&' : '?') + s;
  }
  const headers = {};
  const token = getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'broker unreachable: ' + e.message, path);
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text.slice(0, 200) }; }
  if (!res.ok) {
    const err = new ApiError(res.status, (data && data.error) || res.statusText || 'HTTP ' + res.status, path);
    if (!quiet && (res.status === 401 || res.status === 403)) authListeners.forEach((fn) => fn(err));
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;
export const paths = {
  queue: (q) => `/api/v1/resources/queues/${enc(q)}`,
  statusQueue: (q) => `/api/v1/status/queues/${enc(q)}`,
  message: (p, t) => `/api/v1/messages/${enc(p)}/${enc(t)}`,
  dlq: (p, t) => `/api/v1/dlq/${enc(p)}/${enc(t)}`,
  group: (g) => `/api/v1/consumer-groups/${enc(g)}`,
  groupQueue: (g, q) => `/api/v1/consumer-groups/${enc(g)}/queues/${enc(q)}`,
  seek: (g, q) => `/api/v1/consumer-groups/${enc(g)}/queues/${enc(q)}/seek`,
  seekPartition: (g, q, p) => `/api/v1/consumer-groups/${enc(g)}/queues/${enc(q)}/partitions/${enc(p)}/seek`,
  tracesByName: (n) => `/api/v1/traces/by-name/${enc(n)}`,
};

// rangeQuery turns a range key (15m, 1h, 6h, 24h, 7d) into from/to ISO timestamps.
export const RANGES = { '15m': 15, '1h': 60, '6h': 360, '24h': 1440, '7d': 10080 };
export function rangeQuery(key) {
  const to = new Date();
  const from = new Date(to.getTime() - (RANGES[key] || 60) * 60000);
  return { from: from.toISOString(), to: to.toISOString() };
}
