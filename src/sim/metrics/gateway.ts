import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';

// The metrics read gateway at …/read/api/v1/*: checks the bearer, then proxies to the real Prometheus
// and streams its answer back unchanged.

/** The Prometheus HTTP API paths the metrics read interface exposes (spec: Metrics read interface). */
const ALLOWED = [
  /^\/api\/v1\/query$/,
  /^\/api\/v1\/query_range$/,
  /^\/api\/v1\/labels$/,
  /^\/api\/v1\/label\/[^/]+\/values$/,
  /^\/api\/v1\/series$/,
  /^\/api\/v1\/metadata$/,
];

export interface GatewayOptions {
  readonly prefix: string; // '/read'
  verifyBearer(token: string): boolean;
  /** Prometheus base ending in /read, or undefined with the reason when it is not running. */
  upstream(): { url: string } | { reason: string };
}

/** Handles any request under the prefix; returns false for other paths. */
export async function handleGateway(
  req: IncomingMessage,
  res: ServerResponse,
  options: GatewayOptions,
): Promise<boolean> {
  const target = new URL(req.url ?? '/', 'http://gateway');
  const path = target.pathname;
  if (path !== options.prefix && !path.startsWith(`${options.prefix}/`)) return false;
  const rest = path.slice(options.prefix.length);
  if (!ALLOWED.some((re) => re.test(rest))) {
    sendError(
      res,
      404,
      'not_found',
      `No such metrics endpoint: ${path}. The read API offers ${options.prefix}/api/v1/query, query_range, labels, label/<name>/values, series and metadata.`,
    );
    return true;
  }
  const token = bearerOf(req.headers.authorization);
  if (token === undefined || !options.verifyBearer(token)) {
    res.setHeader('www-authenticate', 'Bearer');
    sendError(
      res,
      401,
      'unauthorized',
      token === undefined
        ? 'Missing Authorization: Bearer header: send the metrics API key or an OAuth access token.'
        : 'The bearer token is not a valid metrics API key or an unexpired access token for this audience.',
    );
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'POST') {
    res.setHeader('allow', 'GET, POST');
    sendError(res, 405, 'bad_data', `Method ${req.method} is not allowed here: use GET or POST.`);
    return true;
  }
  const upstream = options.upstream();
  if (!('url' in upstream)) {
    sendError(res, 503, 'unavailable', upstream.reason);
    return true;
  }
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'accept', 'accept-encoding'] as const) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    answer = await request(`${upstream.url}${rest}${target.search}`, {
      method: req.method,
      headers,
      ...(req.method === 'POST' ? { body: req } : {}),
      signal: abort.signal,
    });
  } catch (err) {
    if (!res.headersSent && !abort.signal.aborted) {
      sendError(res, 502, 'unavailable', `The metrics store did not answer: ${(err as Error).message}.`);
    }
    return true;
  }
  const out: Record<string, string> = {};
  for (const name of ['content-type', 'content-encoding', 'vary'] as const) {
    const value = answer.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  res.writeHead(answer.statusCode, out);
  try {
    await pipeline(answer.body, res);
  } catch {
    // the client went away mid-answer; pipeline already closed both sides
  }
  return true;
}

function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

export function sendError(res: ServerResponse, status: number, errorType: string, error: string): void {
  const body = JSON.stringify({ status: 'error', errorType, error });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
