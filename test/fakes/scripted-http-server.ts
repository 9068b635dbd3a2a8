import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server on 127.0.0.1:0 that answers from a script. A request nobody scripted gets 599
// and is kept in `unexpected`, so a test can fail listing what it got. Waiting is by events.

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** Parsed JSON body, when there is one. */
  readonly json: unknown;
}

export interface Reply {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as application/json. */
  readonly json?: unknown;
  /** Sent as-is (set content-type in headers). */
  readonly text?: string;
  /** Never answer: the request stays open until the client gives up or the server closes. */
  readonly hang?: boolean;
}

/** Handler of one route; `n` counts the requests this route got, from 1. */
export type Handler = (req: RecordedRequest, n: number) => Reply | Promise<Reply>;

export interface ScriptedServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly unexpected: RecordedRequest[];
  /** Scripts `METHOD /path` (exact path, query ignored). A later call for the same route replaces it. */
  on(method: string, path: string, handler: Handler | Reply): void;
  /** Requests received for one route so far. */
  count(method: string, path: string): number;
  /** Resolves with the next request received. */
  nextRequest(): Promise<RecordedRequest>;
  /** Throws, listing them, if any request was not scripted. */
  assertNoUnexpected(): void;
  close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const routes = new Map<string, { handler: Handler; n: number }>();
  const requests: RecordedRequest[] = [];
  const unexpected: RecordedRequest[] = [];
  const waiters: Array<(r: RecordedRequest) => void> = [];
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        text,
        json,
      };
      requests.push(recorded);
      for (const w of waiters.splice(0)) w(recorded);
      const route = routes.get(`${recorded.method} ${recorded.path}`);
      if (!route) {
        unexpected.push(recorded);
        res.writeHead(599, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `unexpected ${recorded.method} ${recorded.path}` }));
        return;
      }
      route.n += 1;
      let reply: Reply;
      try {
        reply = await route.handler(recorded, route.n);
      } catch (err) {
        res.writeHead(598, { 'content-type': 'text/plain' });
        res.end(`handler failed: ${(err as Error).message}`);
        return;
      }
      if (reply.hang) {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const headers: Record<string, string> = { ...reply.headers };
      let body = reply.text ?? '';
      if (reply.json !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = JSON.stringify(reply.json);
      }
      res.writeHead(reply.status ?? 200, headers);
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    on(method, path, handler) {
      const h: Handler = typeof handler === 'function' ? handler : () => handler;
      routes.set(`${method.toUpperCase()} ${path}`, { handler: h, n: 0 });
    },
    count(method, path) {
      return requests.filter((r) => r.method === method.toUpperCase() && r.path === path).length;
    },
    nextRequest() {
      return new Promise((resolve) => waiters.push(resolve));
    },
    assertNoUnexpected() {
      if (unexpected.length > 0) {
        throw new Error(`unexpected requests: ${unexpected.map((r) => `${r.method} ${r.path}`).join(', ')}`);
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
