// The HTTP transport: both retry layers, backend health and failover. Every call of the SDK goes through
// Transport.request.
import { ApiError, QueenError, TransportError, MalformedResponseError } from "./errors.js";
export const DEFAULTS = Object.freeze({
    retryAttempts: 3,
    retryDelayMillis: 1000,
    retry429MaxAttempts: 10,
    retry429BaseMs: 500,
    retry429CapMs: 30000,
    timeoutMillis: 30000,
    healthRetryAfterMillis: 5000,
});
const silent = {};
function positive(v, d) {
    return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : d;
}
export class Transport {
    config;
    logger;
    backends;
    next = 0; // the preferred backend
    fetchFn;
    sleep;
    random;
    now;
    constructor(cfg) {
        const raw = [...(cfg.urls ?? []), ...(cfg.url ? [cfg.url] : [])];
        if (raw.length === 0)
            throw new QueenError("queen: no broker URL configured (url or urls)");
        this.backends = raw.map((u) => {
            const trimmed = u.replace(/\/+$/, "");
            let parsed;
            try {
                parsed = new URL(trimmed);
            }
            catch {
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
        this.fetchFn = cfg.fetch ?? ((...a) => fetch(...a));
        this.sleep = cfg.sleep ?? sleepTimer;
        this.random = cfg.random ?? Math.random;
        this.now = cfg.now ?? Date.now;
    }
    /** The layer-two attempt budget for one request; 0 means unbounded. */
    budget429(longPoll) {
        const m = this.config.retry429.maxAttempts;
        if (m > 0)
            return m;
        if (m < 0 || longPoll)
            return 0;
        return DEFAULTS.retry429MaxAttempts;
    }
    /** Each configured URL and whether it is currently considered healthy. */
    backendHealth() {
        const now = this.now();
        const out = {};
        for (const b of this.backends)
            out[b.base] = now >= b.downUntil;
        return out;
    }
    /**
     * Runs r through both retry layers. Layer one (this loop): up to retryAttempts attempts; a 5xx or a network
     * failure marks the backend unhealthy, waits retryDelayMillis × 2^(attempt-1) and fails over to the next
     * healthy URL. Any 4xx ends the loop. Layer two (send429) runs inside each attempt and retries 429 in place.
     */
    async request(r) {
        const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
        let lastErr;
        for (let attempt = 0; attempt < this.config.retryAttempts; attempt++) {
            if (attempt > 0) {
                const d = this.config.retryDelayMillis * 2 ** (attempt - 1);
                this.logger.warn?.("queen: retrying after server or network failure", {
                    method: r.method, path: r.path, attempt: attempt + 1, delayMs: d, error: String(lastErr),
                });
                await this.sleep(d, r.signal);
            }
            const i = this.pick();
            let resp;
            try {
                resp = await this.send429(i, r, payload);
            }
            catch (e) {
                if (r.signal?.aborted)
                    throw abortReason(r.signal);
                if (!(e instanceof TransportError))
                    throw e;
                this.markDown(i);
                lastErr = e;
                continue;
            }
            if (resp.status >= 500) {
                this.markDown(i);
                lastErr = this.apiError(i, r, resp);
                continue;
            }
            if (resp.status >= 400)
                throw this.apiError(i, r, resp);
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
    async send429(i, r, payload) {
        const budget = this.budget429(r.longPoll === true);
        for (let n = 0;; n++) {
            const resp = await this.sendOnce(i, r, payload);
            if (resp.status !== 429)
                return resp;
            if (budget > 0 && n + 1 >= budget)
                return resp;
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
    async sendOnce(i, r, payload) {
        const url = this.endpoint(i, r);
        const timeout = AbortSignal.timeout(positive(r.timeoutMillis, this.config.timeoutMillis));
        const signal = r.signal ? anySignal(r.signal, timeout) : timeout;
        const headers = { Accept: "application/json" };
        if (payload !== undefined)
            headers["Content-Type"] = "application/json";
        if (this.config.bearerToken)
            headers["Authorization"] = `Bearer ${this.config.bearerToken}`;
        Object.assign(headers, this.config.headers);
        try {
            const res = await this.fetchFn(url, { method: r.method, headers, body: payload ?? null, signal });
            const text = res.status === 204 ? (await res.body?.cancel(), "") : await res.text();
            return { status: res.status, headers: res.headers, text };
        }
        catch (e) {
            if (r.signal?.aborted)
                throw abortReason(r.signal);
            throw new TransportError(r.method, url, e);
        }
    }
    endpoint(i, r) {
        let u = this.backends[i].base + r.path;
        const q = encodeQuery(r.query);
        if (q)
            u += "?" + q;
        return u;
    }
    apiError(i, r, resp) {
        let message = resp.text.trim();
        let code;
        try {
            const env = JSON.parse(resp.text);
            if (env && typeof env === "object" && "error" in env && env.error != null) {
                const e = env.error;
                message = typeof e === "string" ? e : resp.text;
                const c = env.code;
                if (typeof c === "string")
                    code = c;
            }
        }
        catch {
            if (message.length > 512)
                message = message.slice(0, 512) + "…";
        }
        const retryAfter = resp.status === 429 ? retryAfterMs(resp.headers.get("retry-after"), this.now()) : undefined;
        return ApiError.from({ status: resp.status, code, message, method: r.method, url: this.endpoint(i, r), retryAfterMs: retryAfter, body: resp.text });
    }
    /** The first healthy backend at or after the preferred one, or the one whose quarantine ends first. */
    pick() {
        const now = this.now();
        let best = -1;
        for (let k = 0; k < this.backends.length; k++) {
            const j = (this.next + k) % this.backends.length;
            const b = this.backends[j];
            if (now >= b.downUntil)
                return j;
            if (best < 0 || b.downUntil < this.backends[best].downUntil)
                best = j;
        }
        return best;
    }
    markDown(i) {
        this.backends[i].downUntil = this.now() + this.config.healthRetryAfterMillis;
        if (this.next === i)
            this.next = (i + 1) % this.backends.length;
    }
    markUp(i) {
        this.backends[i].downUntil = 0;
    }
    /** Runs a request and parses its JSON body (undefined for a 204 or an empty body). */
    async json(r) {
        const resp = await this.request(r);
        return parseBody(resp, r);
    }
}
export function parseBody(resp, r) {
    if (resp.status === 204 || resp.text === "")
        return undefined;
    try {
        return JSON.parse(resp.text);
    }
    catch (e) {
        throw new MalformedResponseError(`queen: malformed response: ${r.method} ${r.path}: ${e.message}`);
    }
}
/** Spreads d uniformly over [0.8d, 1.2d) given u in [0, 1). */
export function jitter(d, u) {
    return d * (0.8 + 0.4 * u);
}
/** Parses Retry-After: delay-seconds (the proxy's form) or an HTTP date. Returns ms, or undefined. */
export function retryAfterMs(v, now) {
    const s = (v ?? "").trim();
    if (s === "")
        return undefined;
    if (/^\d+(\.\d+)?$/.test(s))
        return Number(s) * 1000;
    const t = Date.parse(s);
    if (!Number.isNaN(t) && /[a-z]/i.test(s))
        return Math.max(t - now, 0);
    return undefined;
}
function encodeQuery(q) {
    if (!q)
        return "";
    const keys = Object.keys(q).filter((k) => q[k] !== undefined && q[k] !== "").sort();
    return keys.map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(String(q[k]))}`).join("&");
}
/** Escapes one path segment. */
export function seg(s) {
    return encodeURIComponent(s);
}
export function abortReason(signal) {
    return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}
/** Aborts when either signal does (AbortSignal.any where the platform has it). */
function anySignal(a, b) {
    if (typeof AbortSignal.any === "function")
        return AbortSignal.any([a, b]);
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
export function sleepTimer(ms, signal) {
    if (signal?.aborted)
        return Promise.reject(abortReason(signal));
    if (ms <= 0)
        return Promise.resolve();
    return new Promise((resolve, reject) => {
        const onAbort = () => {
            clearTimeout(t);
            reject(abortReason(signal));
        };
        const t = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
