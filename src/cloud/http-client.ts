import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher, request } from 'undici';
import {
  CloudApiError,
  CloudNetworkError,
  CloudSchemaError,
  CloudTimeoutError,
  readErrorBody,
} from './cloud-errors.js';
import { isRetrySafe, parseRetryAfter, type RetryEvent, type RetryOptions, withRetry } from './retry.js';
import type { HttpMethod } from './routes.js';
import type { TokenProvider } from './token-provider.js';

// The generic JSON-over-HTTP client under the infrastructure, platform and metrics clients:
// keep-alive connections, a time limit per try, the caller's AbortSignal, credentials, typed errors
// and the retry policy of retry.ts. It knows nothing of routes or schemas. Typical use:
//
//   const http = createHttpClient({ baseUrl: metricsUrl, auth: { kind: 'bearer', tokens }, timeoutMs: 10_000 });
//   const res = await http.send({ operation: 'instantQuery', method: 'GET', path: '/api/v1/query',
//                                 query: { query: 'up' }, signal });
//   parseResponse(schema, res.json, 'instantQuery');   // from schemas.ts, or your own zod parse
//   await http.close();

/** How requests are authenticated. */
export type HttpAuth =
  /** `Authorization: Bearer <token>`; after a 401 the token is invalidated and the request sent once more. */
  | { readonly kind: 'bearer'; readonly tokens: TokenProvider }
  /** A fixed header, e.g. the platform API's `api-key`. */
  | { readonly kind: 'header'; readonly name: string; readonly value: string }
  | { readonly kind: 'none' };

export interface HttpClientOptions {
  /** Base URL every request path is appended to, e.g. http://127.0.0.1:8080/api/v1alpha1. */
  readonly baseUrl: string;
  readonly auth?: HttpAuth;
  /** Time limit of one try (connect, headers and body), in ms. Default 15000. */
  readonly timeoutMs?: number;
  /** Shared undici dispatcher; when omitted the client owns a keep-alive Agent and `close()` ends it. */
  readonly dispatcher?: Dispatcher;
  readonly retry?: RetryOptions;
  /** Headers sent on every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called once per HTTP try with its outcome and latency (observability; must not throw). */
  readonly onCall?: (event: HttpCallEvent) => void;
}

/** One HTTP try as `onCall` sees it. */
export interface HttpCallEvent {
  readonly operation: string;
  readonly method: string;
  /** The HTTP status, or how the try failed without one. */
  readonly status: number | 'network' | 'timeout' | 'cancelled';
  readonly durationMs: number;
}

export interface HttpRequest {
  /** Names the call in errors and retry events, e.g. `createInstance`. */
  readonly operation: string;
  readonly method: HttpMethod | 'HEAD';
  /** Appended to the base URL; placeholders already filled and encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON when not undefined. */
  readonly body?: unknown;
  /** Accept header; default application/json. */
  readonly accept?: string;
  /** Whether a transient failure may be retried; default from the method (see retry.ts). */
  readonly idempotent?: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Overrides the client's time limit for this request. */
  readonly timeoutMs?: number;
  /** Called before each retry of this request, after the client's own `retry.onRetry`. */
  readonly onRetry?: (event: RetryEvent) => void;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly contentType: string;
  readonly text: string;
  /** The parsed body when the answer is JSON and not empty, else undefined. */
  readonly json: unknown;
  readonly requestId: string | undefined;
}

export interface HttpClient {
  readonly baseUrl: string;
  /** Sends the request; resolves with any 2xx, rejects with a CloudApiError/NetworkError/TimeoutError. */
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Closes the connection pool if this client created it. */
  close(): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 15_000;

/** A keep-alive agent sized for a bot: a few dozen parallel requests per origin at most. */
export function createKeepAliveAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connections: 32 });
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(baseUrl).origin;
  const dispatcher = options.dispatcher ?? createKeepAliveAgent();
  const ownsDispatcher = options.dispatcher === undefined;
  const auth = options.auth ?? { kind: 'none' };
  const defaultTimeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  function urlOf(req: HttpRequest): string {
    const url = new URL(`${baseUrl}${req.path.startsWith('/') ? '' : '/'}${req.path}`);
    for (const [k, v] of Object.entries(req.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    return url.toString();
  }

  async function once(req: HttpRequest, token: string | undefined): Promise<HttpResponse> {
    const timeoutMs = req.timeoutMs ?? defaultTimeout;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      'user-agent': 'gpuops',
      accept: req.accept ?? 'application/json',
      ...options.headers,
      ...req.headers,
    };
    if (auth.kind === 'bearer' && token !== undefined) headers.authorization = `Bearer ${token}`;
    if (auth.kind === 'header') headers[auth.name] = auth.value;
    let body: string | null = null;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    let status: number;
    let resHeaders: IncomingHttpHeaders;
    let text: string;
    const started = performance.now();
    const report = (outcome: HttpCallEvent['status']) => {
      try {
        options.onCall?.({
          operation: req.operation,
          method: req.method,
          status: outcome,
          durationMs: performance.now() - started,
        });
      } catch {}
    };
    try {
      const res = await request(urlOf(req), { method: req.method, headers, body, signal, dispatcher });
      status = res.statusCode;
      resHeaders = res.headers;
      text = await res.body.text();
    } catch (err) {
      // The caller cancelled: give back their reason untouched, it is not a cloud failure.
      if (req.signal?.aborted) {
        report('cancelled');
        throw req.signal.reason;
      }
      const code = (err as { code?: unknown }).code;
      if (timeout.aborted || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
        report('timeout');
        throw new CloudTimeoutError(req.operation, timeoutMs, err);
      }
      report('network');
      throw new CloudNetworkError(req.operation, err, origin);
    }
    report(status);
    const contentType = header(resHeaders, 'content-type') ?? '';
    const requestId = header(resHeaders, 'x-request-id') ?? header(resHeaders, 'request-id');
    let json: unknown;
    let jsonBroken = false;
    if (/\bjson\b/i.test(contentType) && text.trim() !== '') {
      try {
        json = JSON.parse(text);
      } catch {
        jsonBroken = true;
      }
    }
    if (status < 200 || status > 299) {
      const { message, details } = readErrorBody(json, jsonBroken ? '' : text);
      throw CloudApiError.from({
        status,
        operation: req.operation,
        serverMessage: message,
        requestId,
        retryAfterMs: parseRetryAfter(header(resHeaders, 'retry-after')),
        details,
      });
    }
    if (jsonBroken) throw new CloudSchemaError(req.operation, '', 'the body is not valid JSON');
    return { status, headers: resHeaders, contentType, text, json, requestId };
  }

  async function withAuth(req: HttpRequest): Promise<HttpResponse> {
    if (auth.kind !== 'bearer') return once(req, undefined);
    const token = await auth.tokens.token(req.signal);
    try {
      return await once(req, token);
    } catch (err) {
      // A 401 means the request was refused unprocessed, so even a create may go again once.
      if (!(err instanceof CloudApiError) || err.status !== 401) throw err;
      auth.tokens.invalidate(token);
      const fresh = await auth.tokens.token(req.signal);
      // A static token comes back unchanged: sending it again would only repeat the refusal.
      if (fresh === token) throw err;
      return once(req, fresh);
    }
  }

  return {
    baseUrl,
    send(req) {
      const safe = req.idempotent ?? isRetrySafe(req.method, req.operation);
      const own = req.onRetry;
      const shared = options.retry?.onRetry;
      const onRetry = own
        ? (event: RetryEvent) => {
            shared?.(event);
            own(event);
          }
        : shared;
      return withRetry(req.operation, safe, () => withAuth(req), {
        ...options.retry,
        ...(onRetry ? { onRetry } : {}),
        signal: req.signal,
      });
    },
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}
