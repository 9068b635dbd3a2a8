import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalid } from './read-fields.js';

// Small request/response helpers for the simulator's node:http server.

/** Bodies above this are refused: nothing in the simulated APIs comes close. */
export const MAX_BODY_BYTES = 1_048_576;

export class BodyTooLarge extends Error {}

let requestSeq = 0;

/** A request id like the real service's, so clients can show one in errors. */
export function nextRequestId(): string {
  requestSeq = (requestSeq + 1) % 1_000_000_000;
  return `sim-${Date.now().toString(36)}-${requestSeq.toString(36)}`;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge(`the request body is larger than ${MAX_BODY_BYTES} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Reads the body when the method carries one; otherwise drains it so the connection stays usable. */
export async function readBodyIf(req: IncomingMessage, wanted: boolean): Promise<string> {
  if (wanted) return readBody(req);
  req.resume();
  return '';
}

/** Parses a JSON body; an empty body is `undefined`. Throws a 400-kind error naming the body. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid('body', 'is not valid JSON');
  }
}

/** Parses JSON, or a form-encoded body (some OAuth clients send one); undefined when unreadable. */
export function parseLooseBody(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (contentType?.includes('application/x-www-form-urlencoded'))
      return Object.fromEntries(new URLSearchParams(text));
    return undefined;
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The error body every infrastructure operation uses (spec: Errors). */
export function sendMessage(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  sendJson(res, status, { message }, headers);
}
