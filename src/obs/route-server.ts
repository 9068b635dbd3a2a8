import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpRoute } from './health-routes.js';

// A small HTTP server for the probes and /metrics where Bolt's HTTP receiver does not run: the web
// role in Socket Mode, and the worker role (whose job and cloud metrics live in its own process).

export interface RouteServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startRouteServer(
  routes: readonly HttpRoute[],
  port: number,
  host = '0.0.0.0',
): Promise<RouteServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = routes.find((r) => r.path === path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Nothing at ${path}: this process serves ${routes.map((r) => r.path).join(', ')}.\n`);
      return;
    }
    if (!route.method.includes((req.method ?? 'GET').toUpperCase())) {
      res.writeHead(405, { allow: route.method.join(', ') });
      res.end();
      return;
    }
    route.handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
