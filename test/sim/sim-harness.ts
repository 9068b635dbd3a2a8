import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Shape } from '../../src/cloud/shape.js';
import { type RunningSim, type SimOptions, startSim } from '../../src/sim/start-sim.js';

// Starts a simulator on a free loopback port with a manual clock and talks to it over real HTTP.

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  json: any;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string;
  /** Bearer token; default the static cloud token. null sends no Authorization header. */
  token?: string | null;
  /** X-PROJECT-ID; default the sim's project. null sends none. */
  project?: string | null;
  headers?: Record<string, string>;
}

export interface TestSim {
  sim: RunningSim;
  /** Calls the infrastructure API: path relative to cloudUrl. */
  cloud(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Calls any URL on the simulator with no default headers. */
  http(
    method: string,
    url: string,
    options?: { body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<Reply>;
  control(method: string, path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export async function startTestSim(shape: Shape, options: Partial<SimOptions> = {}): Promise<TestSim> {
  const sim = await startSim({
    shape,
    clock: 'manual',
    metrics: false,
    transitionMs: 1000,
    log: () => {},
    ...options,
  });
  const agent = new Agent({ keepAliveTimeout: 1000 });

  const http: TestSim['http'] = async (method, url, o = {}) => {
    const body = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
    const res = await request(url, {
      method: method as 'GET',
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(o.headers ?? {}),
      },
      ...(body !== undefined ? { body } : {}),
      dispatcher: agent,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, json };
  };

  return {
    sim,
    http,
    cloud: (method, path, o = {}) => {
      const token = o.token === undefined ? sim.info.cloudToken : o.token;
      const project = o.project === undefined ? sim.info.projectId : o.project;
      return http(method, `${sim.info.cloudUrl}${path}`, {
        ...(o.body !== undefined ? { body: o.body } : {}),
        ...(o.raw !== undefined ? { raw: o.raw } : {}),
        headers: {
          ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
          ...(project !== null ? { 'x-project-id': project } : {}),
          ...(o.headers ?? {}),
        },
      });
    },
    control: (method, path, body) =>
      http(method, `${sim.info.controlUrl}${path}`, body === undefined ? {} : { body }),
    close: async () => {
      await sim.close();
      await agent.close();
    },
  };
}

/** A syntactically valid OpenSSH public key of the given type (random key material). */
export function fakeSshKey(type = 'ssh-ed25519', comment = 'test@example'): string {
  const name = Buffer.from(type);
  const len = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const material = randomBytes(type === 'ssh-ed25519' ? 32 : 300);
  const blob = Buffer.concat([len(name.length), name, len(material.length), material]);
  return `${type} ${blob.toString('base64')} ${comment}`;
}

export async function tokenFor(t: TestSim, audience: string): Promise<string> {
  const r = await t.http('POST', `${t.sim.info.authUrl}/oauth/token`, {
    body: {
      client_id: t.sim.info.clientId,
      client_secret: t.sim.info.clientSecret,
      audience,
      grant_type: 'client_credentials',
    },
  });
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return r.json.access_token as string;
}
