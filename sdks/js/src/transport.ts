// The HTTP transport: both retry layers, backend health and failover. Every call of the SDK goes through
// Transport.request.

import { ApiError, QueenError, TransportError, MalformedResponseError } from "./errors.js";
import type { Logger } from "./types.js";

/** Layer two: in-place retries of 429 answers on the same backend. */
export interface Retry429Options {
  /**
   * Attempts made for a request answered 429. Unset (or 0) selects the default: 10 for ordinary requests and
   * unbounded for long-poll pops. An explicit positive value bounds both kinds; a negative value makes both
   * unbounded.
   */
  maxAttempts?: number;
  /** Exponential base in ms when the response has no Retry-After (default 500). */
  baseMs?: number;
  /** Ceiling of the computed delay in ms (default 30000). It does not shorten a Retry-After. */
  capMs?: number;
}

/** Client configuration. Only `url` or `urls` is required. */
export interface QueenConfig {
  /** One broker base URL, e.g. "http://localhost:6632". */
  url?: string;
  /** Several broker URLs: a backend answering 5xx or failing at the network level is marked unhealthy and requests fail over. */
  urls?: string[];
  /** Sent as `Authorization: Bearer …` (a JWT or a proxy API key). */
  bearerToken?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Layer one: attempts for 5xx answers and network failures, failing over between URLs (default 3). Any 4xx ends the loop. */
  retryAttempts?: number;
  /** Layer one: the first backoff in ms (default 1000); it doubles after every attempt. */
  retryDelayMillis?: number;
  /** Layer two: 429 only, in place, never failover. */
  retry429?: Retry429Options;
  /** Bound on one HTTP attempt of an ordinary request in ms (default 30000); a long-poll pop gets its poll timeout plus this. A timed-out attempt counts as a network failure. */
  timeoutMillis?: number;
  /** How long a failed backend is skipped before it is tried again, in ms (default 5000). */
  healthRetryAfterMillis?: number;
  /** Receives retry, failover and consumer diagnostics (default: silent). */
  logger?: Logger;
  /** Retries of the streams routes' own client (default 3: four attempts, 100 ms to 5 s backoff). */
  streamsRetryAttempts?: number;
  /** Test seam: the fetch implementation (default: the platform's). */
  fetch?: typeof fetch;
  /** Test seam: waits ms or rejects when signal aborts (default: a timer). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Test seam: a value in [0, 1) for jitter (default Math.random). */
  random?: () => number;
  /** Test seam: the clock in epoch ms used for backend health and HTTP-date Retry-After (default Date.now). */
  now?: () => number;
}

/** The effective configuration, defaults applied. */
export interface ResolvedConfig {
  urls: string[];
  bearerToken: string | undefined;
  headers: Record<string, string>;
  retryAttempts: number;
  retryDelayMillis: number;
  retry429: { maxAttempts: number; baseMs: number; capMs: number };
  timeoutMillis: number;
  healthRetryAfterMillis: number;
}

export const DEFAULTS = Object.freeze({
  retryAttempts: 3,
  retryDelayMillis: 1000,
  retry429MaxAttempts: 10,
  retry429BaseMs: 500,
  retry429CapMs: 30000,
  timeoutMillis: 30000,
  healthRetryAfterMillis: 5000,
});

/** One logical API call. */
export interface Request {
  method: string;
  /** Already escaped, starting with "/". */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  /** A pop with wait=true: unbounded 429 budget by default. */
  longPoll?: boolean;
  /** Bound on one attempt in ms (default config.timeoutMillis). */
  timeoutMillis?: number;
  signal?: AbortSignal | undefined;
}

export interface Response {
  status: number;
  headers: Headers;
  /** The body text ("" for a 204). */
  text: string;
}

interface Backend {
  base: string;
  downUntil: number; // 0 when healthy
}

const silent: Logger = {};

function positive(v: number | undefined, d: number): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : d;
}

export class Transport {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  private readonly backends: Backend[];
  private next = 0; // the preferred backend
  private readonly fetchFn: typeof fetch;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly now: () => number;

  constructor(cfg: QueenConfig) {
    const raw = [...(cfg.urls ?? []), ...(cfg.url ? [cfg.url] : [])];
    if (raw.length === 0) throw new QueenError("queen: no broker URL configured (url or urls)");
    this.backends = raw.map((u) => {
      const trimmed = u.replace(/\/+$/, "");
      let parsed: URL;
      try {
        parsed = new URL(trimmed);
      } catch {
        throw new QueenError(`queen: bad broker URL ${JSON.stringify(u)}`);
      }
      if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.host) {
        throw new QueenError(`queen: bad broker URL ${JSON.stringify(u)}`);
      }
      return { base: trimmed, downUntil: 0 };
    });
    const r = cfg.retry429 ?? {};
    this.config = {
      urls: this.backends.map((b) => b.base),
      bearerToken: cfg.bearerToken,
      headers: { ...(cfg.headers ?? {}) },
      retryAttempts: Math.floor(positive(cfg.retryAttempts, DEFAULTS.retryAttempts)),
      retryDelayMillis: positive(cfg.retryDelayMillis, DEFAULTS.retryDelayMillis),
      retry429: {
        maxAttempts: typeof r.maxAttempts === "number" && Number.isFinite(r.maxAttempts) ? Math.trunc(r.maxAttempts) : 0,
        baseMs: positive(r.baseMs, DEFAULTS.retry429BaseMs),
        capMs: positive(r.capMs, DEFAULTS.retry429CapMs),
      },
      timeoutMillis: positive(cfg.timeoutMillis, DEFAULTS.timeoutMillis),
      healthRetryAfterMillis: positive(cfg.healthRetryAfterMillis, DEFAULTS.healthRetryAfterMillis),
    };
    this.logger = cfg.logger ?? silent;
    this.fetchFn = cfg.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
    this.sleep = cfg.sleep ?? sleepTimer;
    this.random = cfg.random ?? Math.random;
    this.now = cfg.now ?? Date.now;
  }

  /** The layer-two attempt budget for one request; 0 means unbounded. */
  budget429(longPoll: boolean): number {
    const m = this.config.retry429.maxAttempts;
    if (m > 0) return m;
    if (m < 0 || longPoll) return 0;
    return DEFAULTS.retry429MaxAttempts;
  }

  /** Each configured URL and whether it is currently considered healthy. */
  backendHealth(): Record<string, boolean> {
    const now = this.now();
    const out: Record<string, boolean> = {};
    for (const b of this.backends) out[b.base] = now >= b.downUntil;
    return out;
  }

  /**
   * Runs r through both retry layers. Layer one (this loop): up to retryAttempts attempts; a 5xx or a network
   * failure marks the backend unhealthy, waits retryDelayMillis × 2^(attempt-1) and fails over to the next
   * healthy URL. Any 4xx ends the loop. Layer two (send429) runs inside each attempt and retries 429 in place.
   */
  async request(r: Request): Promise<Response> {
    const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
    let lastErr: unknown;
    for (let attempt = 0; attempt < this.config.retryAttempts; attempt++) {
      if (attempt > 0) {
        const d = this.config.retryDelayMillis * 2 ** (attempt - 1);
        this.logger.warn?.("queen: retrying after server or network failure", {
          method: r.method, path: r.path, attempt: attempt + 1, delayMs: d, error: String(lastErr),
        });
        await this.sleep(d, r.signal);
      }
      const i = this.pick();
      let resp: Response;
      try {
        resp = await this.send429(i, r, payload);
      } catch (e) {
        if (r.signal?.aborted) throw abortReason(r.signal);
        if (!(e instanceof TransportError)) throw e;
        this.markDown(i);
        lastErr = e;
        continue;
      }
      if (resp.status >= 500) {
        this.markDown(i);
        lastErr = this.apiError(i, r, resp);
        continue;
      }
      if (resp.status >= 400) throw this.apiError(i, r, resp);
      this.markUp(i);
      return resp;
    }
    throw lastErr;
  }

  /**
   * Layer two: repeats the attempt on backend i while the answer is 429, sleeping Retry-After (or
   * min(capMs, baseMs × 2^n)) jittered by ±20%, until the budget is spent. The last 429 is returned as a
   * response so that request() reports it as a terminal RateLimitedError without failing over.
   */
  private async send429(i: number, r: Request, payload: string | undefined): Promise<Response> {
    const budget = this.budget429(r.longPoll === true);
    for (let n = 0; ; n++) {
      const resp = await this.sendOnce(i, r, payload);
      if (resp.status !== 429) return resp;
      if (budget > 0 && n + 1 >= budget) return resp;
      let d = retryAfterMs(resp.headers.get("retry-after"), this.now());
      if (d === undefined) {
        const { baseMs, capMs } = this.config.retry429;
        d = Math.min(capMs, baseMs * 2 ** Math.min(n, 52));
      }
      d = jitter(d, this.random());
      this.logger.debug?.("queen: rate limited, retrying in place", { method: r.method, path: r.path, attempt: n + 1, delayMs: d });
      await this.sleep(d, r.signal);
    }
  }

  /** Exactly one HTTP attempt against backend i (a TransportError when no answer came). */
  async sendOnce(i: number, r: Request, payload: string | undefined): Promise<Response> {
    const url = this.endpoint(i, r);
    const timeout = AbortSignal.timeout(positive(r.timeoutMillis, this.config.timeoutMillis));
    const signal = r.signal ? anySignal(r.signal, timeout) : timeout;
    const headers: Record<string, string> = { Accept: "application/json" };
    if (payload !== undefined) headers["Content-Type"] = "application/json";
    if (this.config.bearerToken) headers["Authorization"] = `Bearer ${this.config.bearerToken}`;
    Object.assign(headers, this.config.headers);
    try {
      const res = await this.fetchFn(url, { method: r.method, headers, body: payload ?? null, signal });
      const text = res.status === 204 ? (await res.body?.cancel(), "") : await res.text();
      return { status: res.status, headers: res.headers, text };
    } catch (e) {
      if (r.signal?.aborted) throw abortReason(r.signal);
      throw new TransportError(r.method, url, e);
    }
  }

  endpoint(i: number, r: Request): string {
    let u = this.backends[i]!.base + r.path;
    const q = encodeQuery(r.query);
    if (q) u += "?" + q;
    return u;
  }

  private apiError(i: number, r: Request, resp: Response): ApiError {
    let message = resp.text.trim();
    let code: string | undefined;
    try {
      const env = JSON.parse(resp.text) as unknown;
      if (env && typeof env === "object" && "error" in env && (env as { error: unknown }).error != null) {
        const e = (env as { error: unknown }).error;
        message = typeof e === "string" ? e : resp.text;
        const c = (env as { code?: unknown }).code;
        if (typeof c === "string") code = c;
      }
    } catch {
      if (message.length > 512) message = message.slice(0, 512) + "…";
    }
    const retryAfter = resp.status === 429 ? retryAfterMs(resp.headers.get("retry-after"), this.now()) : undefined;
    return ApiError.from({ status: resp.status, code, message, method: r.method, url: this.endpoint(i, r), retryAfterMs: retryAfter, body: resp.text });
  }

  /** The first healthy backend at or after the preferred one, or the one whose quarantine ends first. */
  private pick(): number {
    const now = this.now();
    let best = -1;
    for (let k = 0; k < this.backends.length; k++) {
      const j = (this.next + k) % this.backends.length;
      const b = this.backends[j]!;
      if (now >= b.downUntil) return j;
      if (best < 0 || b.downUntil < this.backends[best]!.downUntil) best = j;
    }
    return best;
  }

  private markDown(i: number): void {
    this.backends[i]!.downUntil = this.now() + this.config.healthRetryAfterMillis;
    if (this.next === i) this.next = (i + 1) % this.backends.length;
  }

  private markUp(i: number): void {
    this.backends[i]!.downUntil = 0;
  }

  /** Runs a request and parses its JSON body (undefined for a 204 or an empty body). */
  async json<T>(r: Request): Promise<T> {
    const resp = await this.request(r);
    return parseBody<T>(resp, r);
  }
}

export function parseBody<T>(resp: Response, r: Request): T {
  if (resp.status === 204 || resp.text === "") return undefined as T;
  try {
    return JSON.parse(resp.text) as T;
  } catch (e) {
    throw new MalformedResponseError(`queen: malformed response: ${r.method} ${r.path}: ${(e as Error).message}`);
  }
}

/** Spreads d uniformly over [0.8d, 1.2d) given u in [0, 1). */
export function jitter(d: number, u: number): number {
  return d * (0.8 + 0.4 * u);
}

/** Parses Retry-After: delay-seconds (the proxy's form) or an HTTP date. Returns ms, or undefined. */
export function retryAfterMs(v: string | null, now: number): number | undefined {
  const s = (v ?? "").trim();
  if (s === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const t = Date.parse(s);
  if (!Number.isNaN(t) && /[a-z]/i.test(s)) return Math.max(t - now, 0);
  return undefined;
}

function encodeQuery(q: Request["query"]): string {
  if (!q) return "";
  const keys = Object.keys(q).filter((k) => q[k] !== undefined && q[k] !== "").sort();
  return keys.map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(String(q[k]))}`).join("&");
}

/** Escapes one path segment. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}

/** Aborts when either signal does (AbortSignal.any where the platform has it). */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const ctl = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) {
      ctl.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => ctl.abort(s.reason), { once: true });
  }
  return ctl.signal;
}

/** The default sleep: a timer that rejects with the signal's reason when it aborts. */
export function sleepTimer(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
