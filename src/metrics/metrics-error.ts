import { AppError, ErrorCode } from '../errors.js';

/**
 * Prometheus's error types (HTTP API: bad_data, execution, timeout, canceled, internal, unavailable,
 * not_found, not_acceptable) plus ours for what happens before or around Prometheus.
 */
export type MetricsErrorType =
  | 'bad_data'
  | 'execution'
  | 'timeout'
  | 'canceled'
  | 'internal'
  | 'unavailable'
  | 'not_found'
  | 'not_acceptable'
  | 'unauthorized'
  | 'forbidden'
  | 'network'
  | 'bad_response'
  | (string & {});

const TRANSIENT = new Set(['timeout', 'canceled', 'internal', 'unavailable', 'network']);

/** A failed metrics read: `errorType` and `error` as Prometheus (or the gateway) gave them; `message` for people. */
export class MetricsError extends AppError {
  readonly errorType: MetricsErrorType;
  /** The server's own error text (never a credential). */
  readonly error: string;
  /** HTTP status, when an answer came back. */
  readonly status: number | undefined;
  /** Worth trying again later (timeouts, unavailability, network). */
  readonly retryable: boolean;

  constructor(
    errorType: MetricsErrorType,
    error: string,
    options: { status?: number; message?: string; cause?: unknown } = {},
  ) {
    super(ErrorCode.Metrics, options.message ?? describe(errorType, error, options.status), {
      cause: options.cause,
    });
    this.errorType = errorType;
    this.error = error;
    this.status = options.status;
    this.retryable =
      TRANSIENT.has(errorType) ||
      (options.status !== undefined && (options.status >= 500 || options.status === 429));
  }
}

/** One sentence a person can act on, from Prometheus's error type and text. */
function describe(errorType: string, error: string, status: number | undefined): string {
  const detail = error.replace(/\s+$/, '').replace(/\.$/, '');
  switch (errorType) {
    case 'bad_data':
      return /parse error|unexpected|could not parse|bad_data: 1:/i.test(detail)
        ? `Prometheus could not parse the query: ${detail}.`
        : `Prometheus rejected the request: ${detail}.`;
    case 'execution':
      return `Prometheus could not run the query: ${detail}.`;
    case 'timeout':
      return `The query timed out in Prometheus (${detail}): try a shorter range or a simpler query.`;
    case 'canceled':
      return `The metrics query was cancelled: ${detail}.`;
    case 'unauthorized':
      return `The metrics API refused the credentials (HTTP ${status ?? 401}): check METRICS_API_KEY, or the client id, secret and audience of the OAuth credentials.`;
    case 'forbidden':
      return `The metrics API does not allow this key to read metrics (HTTP ${status ?? 403}): ask the cloud's support to enable metrics access.`;
    case 'not_found':
      return `The metrics API has no such endpoint (${detail}): check that METRICS_URL ends in /read.`;
    case 'network':
      return `Could not reach the metrics API: ${detail}. Check METRICS_URL and that the server is up.`;
    case 'bad_response':
      return `The metrics API answered with something other than the Prometheus HTTP API: ${detail}.`;
    default:
      return `The metrics API failed (${errorType}${status ? `, HTTP ${status}` : ''}): ${detail}. Try again shortly.`;
  }
}
