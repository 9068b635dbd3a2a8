import { type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import type { TokenProvider } from '../cloud/token-provider.js';
import { ValidationError } from '../errors.js';
import { MetricsError } from './metrics-error.js';
import {
  envelopeSchema,
  type Labels,
  type MatrixData,
  type MetricsResult,
  matrixDataSchema,
  type QueryData,
  queryDataSchema,
  seriesListSchema,
  stringListSchema,
} from './prometheus-schemas.js';

// The metrics read client: the Prometheus HTTP API under METRICS_URL (…/read), with a bearer from a
// TokenProvider (static key or OAuth client credentials) and one retry after a 401.

/** A point in time: a Date, unix seconds, or an RFC 3339 string as Prometheus takes it. */
export type TimeInput = Date | number | string;
/** A duration: seconds, or a Prometheus duration string such as "15s" or "1m". */
export type DurationInput = number | string;

export interface QueryOptions {
  readonly time?: TimeInput;
  readonly timeout?: DurationInput;
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface RangeOptions {
  readonly start: TimeInput;
  readonly end: TimeInput;
  readonly step: DurationInput;
  readonly timeout?: DurationInput;
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface LabelOptions {
  readonly match?: readonly string[];
  readonly start?: TimeInput;
  readonly end?: TimeInput;
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface SeriesOptions {
  readonly start?: TimeInput;
  readonly end?: TimeInput;
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface MetricsClient {
  /** Instant query: GET/POST /api/v1/query. */
  query(expr: string, options?: QueryOptions): Promise<MetricsResult<QueryData>>;
  /** Range query: GET/POST /api/v1/query_range; always a matrix. */
  queryRange(expr: string, options: RangeOptions): Promise<MetricsResult<MatrixData>>;
  /** Label values: GET /api/v1/label/<label>/values. */
  labelValues(label: string, options?: LabelOptions): Promise<MetricsResult<readonly string[]>>;
  /** Label names: GET/POST /api/v1/labels. */
  labelNames(options?: LabelOptions): Promise<MetricsResult<readonly string[]>>;
  /** Series metadata: GET/POST /api/v1/series. */
  series(match: readonly string[], options?: SeriesOptions): Promise<MetricsResult<readonly Labels[]>>;
}

export interface MetricsClientOptions {
  /** METRICS_URL: the read API base, ending in /read. */
  readonly baseUrl: string;
  readonly tokens: TokenProvider;
  /** Per HTTP request, for headers and body alike. Default 30 s. */
  readonly timeoutMs?: number;
  readonly dispatcher?: Dispatcher;
  /** Switch from GET to a POST form body when the URL would be longer than this. Default 4000. */
  readonly maxUrlLength?: number;
}

export function createMetricsClient(options: MetricsClientOptions): MetricsClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxUrl = options.maxUrlLength ?? 4000;

  async function call<T>(
    path: string,
    params: URLSearchParams,
    schema: z.ZodType<T>,
    opts: { postAllowed: boolean; signal?: AbortSignal | undefined },
  ): Promise<MetricsResult<T>> {
    const query = params.toString();
    const getUrl = query === '' ? `${base}${path}` : `${base}${path}?${query}`;
    const post = opts.postAllowed && getUrl.length > maxUrl;
    const send = async (token: string) => {
      try {
        return await request(post ? `${base}${path}` : getUrl, {
          method: post ? 'POST' : 'GET',
          headers: {
            accept: 'application/json',
            authorization: `Bearer ${token}`,
            ...(post ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          ...(post ? { body: query } : {}),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        });
      } catch (err) {
        throw networkError(err, base);
      }
    };
    let token = await options.tokens.token(opts.signal);
    let res = await send(token);
    if (res.statusCode === 401) {
      // The key may have been rotated or the token revoked: fetch a fresh one and try once more.
      await res.body.dump();
      options.tokens.invalidate(token);
      token = await options.tokens.token(opts.signal);
      res = await send(token);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw networkError(err, base);
    }
    return parseAnswer(res.statusCode, text, schema, path);
  }

  return {
    query(expr, opts = {}) {
      const params = new URLSearchParams({ query: expr });
      setTime(params, 'time', opts.time);
      setDuration(params, 'timeout', opts.timeout);
      setLimit(params, opts.limit);
      return call('/api/v1/query', params, queryDataSchema, { postAllowed: true, signal: opts.signal });
    },
    queryRange(expr, opts) {
      const params = new URLSearchParams({ query: expr });
      setTime(params, 'start', opts.start);
      setTime(params, 'end', opts.end);
      setDuration(params, 'step', opts.step);
      setDuration(params, 'timeout', opts.timeout);
      setLimit(params, opts.limit);
      return call('/api/v1/query_range', params, matrixDataSchema, {
        postAllowed: true,
        signal: opts.signal,
      });
    },
    labelValues(label, opts = {}) {
      if (label.trim() === '') throw new ValidationError('label', 'a label name is required');
      const params = labelParams(opts);
      // Prometheus serves label values over GET only.
      return call(`/api/v1/label/${encodeURIComponent(label)}/values`, params, stringListSchema, {
        postAllowed: false,
        signal: opts.signal,
      });
    },
    labelNames(opts = {}) {
      return call('/api/v1/labels', labelParams(opts), stringListSchema, {
        postAllowed: true,
        signal: opts.signal,
      });
    },
    series(match, opts = {}) {
      if (match.length === 0) {
        throw new ValidationError(
          'match',
          'at least one series selector is required, e.g. {instance_id="…"}',
        );
      }
      const params = labelParams({ ...opts, match });
      return call('/api/v1/series', params, seriesListSchema, { postAllowed: true, signal: opts.signal });
    },
  };
}

function labelParams(opts: LabelOptions): URLSearchParams {
  const params = new URLSearchParams();
  for (const m of opts.match ?? []) params.append('match[]', m);
  setTime(params, 'start', opts.start);
  setTime(params, 'end', opts.end);
  setLimit(params, opts.limit);
  return params;
}

function setTime(params: URLSearchParams, name: string, value: TimeInput | undefined): void {
  if (value === undefined) return;
  params.set(name, formatTime(value));
}

/** Unix seconds with millisecond decimals, which every Prometheus version accepts. */
export function formatTime(value: TimeInput): string {
  if (value instanceof Date) return (value.getTime() / 1000).toFixed(3).replace(/\.?0+$/, '');
  if (typeof value === 'number') return String(value);
  return value;
}

function setDuration(params: URLSearchParams, name: string, value: DurationInput | undefined): void {
  if (value === undefined) return;
  params.set(name, typeof value === 'number' ? String(value) : value);
}

function setLimit(params: URLSearchParams, limit: number | undefined): void {
  if (limit === undefined) return;
  if (!Number.isInteger(limit) || limit < 0)
    throw new ValidationError('limit', 'limit is a whole number, 0 for none');
  params.set('limit', String(limit));
}

function parseAnswer<T>(status: number, text: string, schema: z.ZodType<T>, path: string): MetricsResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (status === 401) throw new MetricsError('unauthorized', 'unauthorized', { status });
    if (status === 403) throw new MetricsError('forbidden', 'forbidden', { status });
    if (status === 404) throw new MetricsError('not_found', `HTTP 404 for ${path}`, { status });
    throw new MetricsError('bad_response', `HTTP ${status} for ${path} with a body that is not JSON`, {
      status,
    });
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    if (status === 401) throw new MetricsError('unauthorized', 'unauthorized', { status });
    throw new MetricsError('bad_response', `HTTP ${status} for ${path} without a Prometheus status field`, {
      status,
    });
  }
  const body = envelope.data;
  if (body.status === 'error' || status >= 400) {
    const errorType =
      status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : (body.errorType ?? 'internal');
    throw new MetricsError(errorType, body.error ?? `HTTP ${status}`, { status });
  }
  const data = schema.safeParse(body.data);
  if (!data.success) {
    const where = data.error.issues[0]?.path.join('.') ?? '';
    throw new MetricsError('bad_response', `unexpected data for ${path}${where ? ` at data.${where}` : ''}`, {
      status,
    });
  }
  return { data: data.data, warnings: body.warnings ?? [], infos: body.infos ?? [] };
}

function networkError(err: unknown, base: string): MetricsError {
  if (err instanceof MetricsError) return err;
  const code = (err as { code?: string }).code;
  const name = (err as { name?: string }).name;
  const origin = safeOrigin(base);
  if (name === 'AbortError' || code === 'UND_ERR_ABORTED') {
    return new MetricsError('canceled', 'the request was aborted', { cause: err });
  }
  if (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return new MetricsError('timeout', `no answer from ${origin} in time`, {
      cause: err,
      message: `The metrics API at ${origin} did not answer in time: try again, or a shorter range.`,
    });
  }
  return new MetricsError('network', `${origin}: ${(err as Error).message ?? String(err)}`, { cause: err });
}

function safeOrigin(base: string): string {
  try {
    return new URL(base).origin;
  } catch {
    return 'METRICS_URL';
  }
}
