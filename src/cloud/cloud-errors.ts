import { AppError, ErrorCode } from '../errors.js';
import type { Shape } from './shape.js';

// Typed failures of the cloud clients. Each message is one sentence a person can act on; the
// structured fields (status, operation, requestId, cause) are for logs and for the retry policy.

/** What kind of HTTP failure the cloud answered with, so callers match on a word, not a number. */
export const CloudErrorKind = {
  BadRequest: 'bad_request',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  Conflict: 'conflict',
  RateLimited: 'rate_limited',
  NotAvailable: 'not_available',
  Server: 'server',
  Other: 'other',
} as const;
export type CloudErrorKind = (typeof CloudErrorKind)[keyof typeof CloudErrorKind];

/** One field-level complaint from the server (FastAPI's 422 `detail` items become these). */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export interface CloudApiErrorInit {
  readonly status: number;
  readonly operation: string;
  /** The server's `message` (or the best equivalent found in the body), if any. */
  readonly serverMessage?: string | undefined;
  readonly requestId?: string | undefined;
  /** Delay the server asked for with Retry-After, already converted to milliseconds. */
  readonly retryAfterMs?: number | undefined;
  readonly details?: readonly FieldProblem[] | undefined;
}

const MAX_SERVER_MESSAGE = 300;

function kindOf(status: number): CloudErrorKind {
  if (status === 400 || status === 422) return CloudErrorKind.BadRequest;
  if (status === 401) return CloudErrorKind.Unauthorized;
  if (status === 403) return CloudErrorKind.Forbidden;
  if (status === 404) return CloudErrorKind.NotFound;
  if (status === 409) return CloudErrorKind.Conflict;
  if (status === 429) return CloudErrorKind.RateLimited;
  if (status === 501) return CloudErrorKind.NotAvailable;
  if (status >= 500) return CloudErrorKind.Server;
  return CloudErrorKind.Other;
}

const HINT: Record<CloudErrorKind, string> = {
  bad_request: 'check the values given',
  unauthorized: 'the credentials were refused, check the configured token, API key or OAuth client',
  forbidden: 'the credentials lack permission for this project or operation',
  not_found: 'it does not exist or belongs to another project',
  conflict: 'the resource is in a state that does not allow this, look at its state and try again',
  rate_limited: 'the cloud is limiting requests, try again shortly',
  not_available: 'this cloud does not offer it',
  server: 'the cloud failed on its side, try again later',
  other: 'the cloud answered with an unexpected status',
};

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_SERVER_MESSAGE ? `${oneLine.slice(0, MAX_SERVER_MESSAGE - 1)}…` : oneLine;
}

function sentence(init: CloudApiErrorInit, kind: CloudErrorKind): string {
  if (kind === CloudErrorKind.NotAvailable) {
    const why = init.serverMessage ? ` (${clip(init.serverMessage).replace(/\.$/, '')})` : '';
    return `${init.operation} is not available on this cloud${why}.`;
  }
  const said = init.serverMessage ? `: ${clip(init.serverMessage).replace(/\.$/, '')}` : '';
  return `${init.operation} failed with HTTP ${init.status}${said} — ${HINT[kind]}.`;
}

/** The cloud answered with an error status. Use `kind` (or the subclass) to decide what to do. */
export class CloudApiError extends AppError {
  readonly status: number;
  readonly kind: CloudErrorKind;
  readonly operation: string;
  readonly serverMessage: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly details: readonly FieldProblem[];

  constructor(init: CloudApiErrorInit) {
    const kind = kindOf(init.status);
    const code =
      kind === CloudErrorKind.Unauthorized
        ? ErrorCode.Auth
        : kind === CloudErrorKind.NotAvailable
          ? ErrorCode.CloudUnavailable
          : ErrorCode.CloudApi;
    super(code, sentence(init, kind));
    this.status = init.status;
    this.kind = kind;
    this.operation = init.operation;
    this.serverMessage = init.serverMessage;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
    this.details = init.details ?? [];
  }

  /** Builds the subclass that matches the status (openai-node's APIError.generate pattern). */
  static from(init: CloudApiErrorInit): CloudApiError {
    switch (kindOf(init.status)) {
      case CloudErrorKind.BadRequest:
        return new CloudBadRequestError(init);
      case CloudErrorKind.Unauthorized:
        return new CloudAuthError(init);
      case CloudErrorKind.Forbidden:
        return new CloudForbiddenError(init);
      case CloudErrorKind.NotFound:
        return new CloudNotFoundError(init);
      case CloudErrorKind.Conflict:
        return new CloudConflictError(init);
      case CloudErrorKind.RateLimited:
        return new CloudRateLimitError(init);
      case CloudErrorKind.NotAvailable:
        return new CloudNotAvailableError(init);
      case CloudErrorKind.Server:
        return new CloudServerError(init);
      default:
        return new CloudApiError(init);
    }
  }
}

/** 400 (or FastAPI's 422): the request was malformed or broke a server-side rule. */
export class CloudBadRequestError extends CloudApiError {}
/** 401: the credential was refused even after one fresh token. */
export class CloudAuthError extends CloudApiError {}
/** 403: authenticated, but not allowed. */
export class CloudForbiddenError extends CloudApiError {}
/** 404: the resource (or the project) does not exist. */
export class CloudNotFoundError extends CloudApiError {}
/** 409: wrong state (start a running instance) or a name already taken. */
export class CloudConflictError extends CloudApiError {}
/** 429: slow down; `retryAfterMs` says how long if the server told. */
export class CloudRateLimitError extends CloudApiError {}
/** 501: the deployment does not implement this operation. */
export class CloudNotAvailableError extends CloudApiError {}
/** Any other 5xx. */
export class CloudServerError extends CloudApiError {}

/** The request never got an HTTP answer: refused connection, reset socket, DNS failure… */
export class CloudNetworkError extends AppError {
  readonly operation: string;
  /** undici's or Node's `err.code` (UND_ERR_SOCKET, ECONNREFUSED, ENOTFOUND…), if any. */
  readonly errCode: string | undefined;
  constructor(operation: string, cause: unknown, target?: string) {
    const errCode = networkCode(cause);
    const where = target ? ` at ${target}` : '';
    const what = errCode ?? (cause instanceof Error ? cause.message : 'unknown error');
    super(
      ErrorCode.CloudNetwork,
      `${operation} could not reach the cloud${where} (${what}) — check the API URL and that the service is up.`,
      { cause },
    );
    this.operation = operation;
    this.errCode = errCode;
  }
}

/** No complete answer within the per-request time limit. */
export class CloudTimeoutError extends AppError {
  readonly operation: string;
  readonly timeoutMs: number;
  constructor(operation: string, timeoutMs: number, cause?: unknown) {
    super(
      ErrorCode.CloudTimeout,
      `${operation} got no answer from the cloud within ${timeoutMs} ms — the service is slow or stuck, try again later.`,
      { cause },
    );
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/** A success answer whose body does not have the shape the API promises. */
export class CloudSchemaError extends AppError {
  readonly operation: string;
  /** Dotted path of the first offending field, e.g. `[0].state` or `nodes[2].instanceID`. */
  readonly path: string;
  readonly problem: string;
  constructor(operation: string, path: string, problem: string) {
    super(
      ErrorCode.CloudSchema,
      `${operation}: the cloud's answer is not what the API promises at ${path || 'the top level'} (${problem}) — check CLOUD_API_SHAPE and CLOUD_ROUTES.`,
    );
    this.operation = operation;
    this.path = path;
    this.problem = problem;
  }
}

/** The configured shape has no such operation; thrown before anything is sent. */
export class CloudUnsupportedError extends AppError {
  readonly operation: string;
  readonly shape: Shape;
  constructor(operation: string, shape: Shape) {
    super(ErrorCode.CloudUnavailable, `${operation} is not available in shape ${shape}.`);
    this.operation = operation;
    this.shape = shape;
  }
}

/** `err.code` of a network failure, following the cause chain (undici wraps Node's errors). */
export function networkCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Pulls a human message out of an error body: `{message}` (infrastructure API), FastAPI's
 * `{detail: string | [{loc, msg}]}` (platform API), OAuth's `{error, error_description}`.
 */
export function readErrorBody(body: unknown, text: string): { message?: string; details: FieldProblem[] } {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (Array.isArray(b.detail)) {
      const details = b.detail.flatMap((item): FieldProblem[] => {
        if (!item || typeof item !== 'object') return [];
        const { loc, msg } = item as { loc?: unknown; msg?: unknown };
        const path = Array.isArray(loc) ? loc.filter((p) => p !== 'body').join('.') : '';
        return [{ field: path || '(body)', message: typeof msg === 'string' ? msg : 'invalid' }];
      });
      const message = details.map((d) => `${d.field}: ${d.message}`).join('; ');
      return message ? { message, details } : { details };
    }
    for (const key of ['message', 'detail', 'error_description', 'error']) {
      const v = b[key];
      if (typeof v === 'string' && v.trim() !== '') return { message: v, details: [] };
    }
    return { details: [] };
  }
  const plain = text.trim();
  // A short plain-text body is probably a message; HTML error pages are not worth showing.
  if (plain && plain.length <= MAX_SERVER_MESSAGE && !plain.startsWith('<'))
    return { message: plain, details: [] };
  return { details: [] };
}
