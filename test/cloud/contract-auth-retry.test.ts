import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CloudAuthError,
  CloudServerError,
  CloudTimeoutError,
  clientCredentials,
  createInfraClient,
  type InfraClient,
  type InfraClientOptions,
  staticToken,
} from '../../src/cloud/index.js';
import { ErrorCode } from '../../src/errors.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';

// Both authentication methods and the retry policy against the simulator's token server and its
// fault injection (POST /_sim/faults, used here in process through sim.control).

let sim: RunningSim;
const clients: InfraClient[] = [];

beforeAll(async () => {
  sim = await startSim({ shape: 'B', clock: 'manual', transitionMs: 1000, metrics: false, log: () => {} });
});
afterEach(async () => {
  sim.control.clearFaults();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  sim.control.reset();
});
afterAll(async () => {
  await sim.close();
});

function make(extra: Partial<InfraClientOptions> = {}): InfraClient {
  const c = createInfraClient({
    baseUrl: sim.info.cloudUrl,
    shape: 'B',
    projectId: sim.info.projectId,
    tokens: staticToken(sim.info.cloudToken),
    ...extra,
  });
  clients.push(c);
  return c;
}

/** A client that gets its tokens from the simulator's token server, for `audience`. */
function makeOauth(audience: string, clientSecret = sim.info.clientSecret): InfraClient {
  return make({
    tokens: clientCredentials({
      authUrl: sim.info.authUrl,
      clientId: sim.info.clientId,
      clientSecret,
      audience,
    }),
  });
}

describe('authentication against the simulator', () => {
  it('OAuth client credentials: a token for the API audience works for every call', async () => {
    const c = makeOauth(sim.info.cloudAudience);
    const created = await c.createInstance({ name: 'oauth-1', type: 'cpu.16x' });
    expect((await c.listInstances()).map((i) => i.id)).toContain(created.id);
  });

  it('OAuth: a token for the metrics audience is refused by the infrastructure API', async () => {
    const c = makeOauth(sim.info.metricsAudience);
    const err = await c.listInstances().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudAuthError);
    expect((err as CloudAuthError).serverMessage).toMatch(/audience/i);
  });

  it('OAuth: a wrong secret is an auth error from the token server, nothing reaches the API', async () => {
    const c = makeOauth(sim.info.cloudAudience, 'not-the-secret');
    const err = await c.createInstance({ name: 'never', type: 'cpu.16x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCode.Auth });
    expect((err as Error).message).not.toContain('not-the-secret');
    expect(sim.control.createCount('createInstance', 'never')).toBe(0);
  });

  it('static bearer: the right token works, a wrong one is a 401 auth error', async () => {
    await expect(make().listInstances()).resolves.toBeInstanceOf(Array);
    await expect(make({ tokens: staticToken('nope') }).listInstances()).rejects.toMatchObject({
      status: 401,
      code: ErrorCode.Auth,
    });
  });
});

describe('retries against the simulator', () => {
  it('429 with Retry-After, then success: waits what the simulator asked', async () => {
    const waits: number[] = [];
    sim.control.addFault({ operation: 'listInstances', status: 429, retryAfterSeconds: 3, count: 1 });
    const c = make({ retry: { sleep: async (ms) => void waits.push(ms) } });
    await expect(c.listInstances()).resolves.toEqual([]);
    expect(waits).toEqual([3000]);
  });

  it('503 then success on a GET', async () => {
    sim.control.addFault({ operation: 'listK8sClusters', status: 503, count: 2 });
    const c = make({ retry: { sleep: async () => {} } });
    await expect(c.listK8sClusters()).resolves.toEqual([]);
    expect(sim.control.faults()[0]?.hits).toBe(2);
  });

  it('a create answered 503 is not retried: the simulator saw one attempt and created nothing', async () => {
    sim.control.addFault({ operation: 'createInstance', status: 503 });
    const c = make({ retry: { sleep: async () => {} } });
    const err = await c.createInstance({ name: 'once-only', type: 'cpu.16x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudServerError);
    const counts = sim.control.creates();
    expect(counts.attempts.createInstance?.['once-only']).toBe(1);
    expect(sim.control.createCount('createInstance', 'once-only')).toBe(0);
  });

  it('a hanging request times out; a GET is tried again and succeeds', async () => {
    sim.control.addFault({ operation: 'listInstances', hang: true, count: 1 });
    const strict = make({ timeoutMs: 200, retry: { maxAttempts: 1 } });
    await expect(strict.listInstances()).rejects.toBeInstanceOf(CloudTimeoutError);
    sim.control.addFault({ operation: 'listInstances', hang: true, count: 1 });
    const patient = make({ timeoutMs: 200, retry: { sleep: async () => {} } });
    await expect(patient.listInstances()).resolves.toEqual([]);
  });
});
