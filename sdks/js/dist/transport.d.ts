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
    retry429: {
        maxAttempts: number;
        baseMs: number;
        capMs: number;
    };
    timeoutMillis: number;
    healthRetryAfterMillis: number;
}
export declare const DEFAULTS: Readonly<{
    retryAttempts: 3;
    retryDelayMillis: 1000;
    retry429MaxAttempts: 10;
    retry429BaseMs: 500;
    retry429CapMs: 30000;
    timeoutMillis: 30000;
    healthRetryAfterMillis: 5000;
}>;
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
export declare class Transport {
    readonly config: ResolvedConfig;
    readonly logger: Logger;
    private readonly backends;
    private next;
    private readonly fetchFn;
    readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
    readonly random: () => number;
    readonly now: () => number;
    constructor(cfg: QueenConfig);
    /** The layer-two attempt budget for one request; 0 means unbounded. */
    budget429(longPoll: boolean): number;
    /** Each configured URL and whether it is currently considered healthy. */
    backendHealth(): Record<string, boolean>;
    /**
     * Runs r through both retry layers. Layer one (this loop): up to retryAttempts attempts; a 5xx or a network
     * failure marks the backend unhealthy, waits retryDelayMillis × 2^(attempt-1) and fails over to the next
     * healthy URL. Any 4xx ends the loop. Layer two (send429) runs inside each attempt and retries 429 in place.
     */
    request(r: Request): Promise<Response>;
    /**
     * Layer two: repeats the attempt on backend i while the answer is 429, sleeping Retry-After (or
     * min(capMs, baseMs × 2^n)) jittered by ±20%, until the budget is spent. The last 429 is returned as a
     * response so that request() reports it as a terminal RateLimitedError without failing over.
     */
    private send429;
    /** Exactly one HTTP attempt against backend i (a TransportError when no answer came). */
    sendOnce(i: number, r: Request, payload: string | undefined): Promise<Response>;
    endpoint(i: number, r: Request): string;
    private apiError;
    /** The first healthy backend at or after the preferred one, or the one whose quarantine ends first. */
    private pick;
    private markDown;
    private markUp;
    /** Runs a request and parses its JSON body (undefined for a 204 or an empty body). */
    json<T>(r: Request): Promise<T>;
}
export declare function parseBody<T>(resp: Response, r: Request): T;
/** Spreads d uniformly over [0.8d, 1.2d) given u in [0, 1). */
export declare function jitter(d: number, u: number): number;
/** Parses Retry-After: delay-seconds (the proxy's form) or an HTTP date. Returns ms, or undefined. */
export declare function retryAfterMs(v: string | null, now: number): number | undefined;
/** Escapes one path segment. */
export declare function seg(s: string): string;
export declare function abortReason(signal: AbortSignal): unknown;
/** The default sleep: a timer that rejects with the signal's reason when it aborts. */
export declare function sleepTimer(ms: number, signal?: AbortSignal): Promise<void>;
