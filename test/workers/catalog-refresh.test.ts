import { randomBytes } from 'node:crypto';
import { WebClient } from '@slack/web-api';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createInfraClient, createPlatformClient, staticToken } from '../../src/cloud/index.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { createReplyPort } from '../../src/slack/reply-port.js';
import { orderedTypes, readCatalog } from '../../src/store/catalog-cache.js';
import { createStore } from '../../src/store/store.js';
import { PRICES_NOT_CONFIGURED, refreshCatalog } from '../../src/workers/catalog-refresh.js';
import { processJob } from '../../src/workers/create-worker.js';
import type { WorkerDeps } from '../../src/workers/worker-deps.js';
import { testGuardrails } from '../support/guardrails.js';

/** What a worker gets, with clients of `sim` that never retry (a failure shows at once). */
function depsFor(shape: 'B' | 'C', sim: RunningSim, redis: Redis, prefix: string): WorkerDeps {
  const slack = new WebClient('xoxb-unused', { slackApiUrl: 'http://127.0.0.1:9/api/' });
  return {
    cloud: createInfraClient({
      baseUrl: sim.info.cloudUrl,
      shape,
      tokens: staticToken(sim.info.cloudToken),
      projectId: sim.info.projectId,
      retry: { maxAttempts: 1 },
    }),
    platform: createPlatformClient({
      baseUrl: sim.info.platformUrl,
      apiKey: sim.info.platformApiKey,
      retry: { maxAttempts: 1 },
    }),
    slack,
    store: createStore(redis, prefix),
    guardrails: testGuardrails(redis, prefix),
    log: createLogger({ level: 'silent' }),
    shape,
    defaultProjectId: sim.info.projectId,
    reply: createReplyPort({ client: slack, log: createLogger({ level: 'silent' }) }),
  };
}

describe('the catalogue refresh (shape C)', () => {
  let sim: RunningSim;
  let redis: Redis;
  let deps: WorkerDeps;
  const prefix = `cat${randomBytes(3).toString('hex')}`;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    sim = await startSim({ shape: 'C', port: 0, metrics: false, transitionMs: 50, log: () => {} });
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    deps = depsFor('C', sim, redis, prefix);
    await deps.cloud.createFilesystem({ name: 'datasets', size: '512Gi' });
    await deps.cloud.createInstance({ name: 'seen-1', type: 'rtx-a5000-24gb.1x' });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await deps.cloud.close();
    await deps.platform?.close();
    await sim.close();
  });

  it('writes prices, capacity, the types in use and the filesystems the forms offer', async () => {
    const { catalog } = await refreshCatalog(deps, sim.info.projectId, signal);
    expect(catalog.problems).toEqual([]);
    expect(catalog.configurations).toContainEqual({
      gpuType: 'H100_SXM5_80GB',
      gpuCounts: [1, 8],
      pricePerGpuHour: '2.89',
      stoppedPricePerHour: '0.12',
      regions: ['ICELAND', 'NORWAY'],
      provisioningMinutes: 12,
    });
    const types = orderedTypes(catalog.instanceTypes, Date.now());
    expect(types[0]).toMatchObject({ name: 'cpu.16x', capacity: 50 });
    expect(types.find((t) => t.name === 'rtx-a5000-24gb.1x')).toMatchObject({ inUse: 1 });
    expect(catalog.filesystems?.map((f) => f.name)).toEqual(['datasets']);
    // What a cluster or key named in a request is checked against before it is queued.
    expect(catalog.slurmClusters?.map((c) => c.name)).toEqual(['slurm-1']);
    expect(catalog.k8sClusters).toEqual([]);
    expect(catalog.sshKeys).toEqual([]);
    expect((await readCatalog(deps.store, sim.info.projectId))?.catalog).toEqual(catalog);
  });

  it('keeps what it knew when a part fails, and says which part in the form', async () => {
    sim.control.addFault({ operation: 'listConfigurations', status: 403, count: 1 });
    const { catalog } = await refreshCatalog(deps, sim.info.projectId, signal);
    expect(catalog.problems).toHaveLength(1);
    expect(catalog.problems[0]).toMatch(/^Prices could not be refreshed: /);
    expect(catalog.configurations?.some((c) => c.gpuType === 'H100_SXM5_80GB')).toBe(true);
  });

  it('says prices need the platform API when it is not configured', async () => {
    const { catalog } = await refreshCatalog({ ...deps, platform: undefined }, sim.info.projectId, signal);
    expect(catalog.problems).toEqual([PRICES_NOT_CONFIGURED]);
  });

  it('fails (so the job is retried) when every part fails', async () => {
    sim.control.addFault({ operation: '*', status: 403, count: 20 });
    await expect(refreshCatalog(deps, sim.info.projectId, signal)).rejects.toThrow();
    sim.control.clearFaults();
  });

  it('is dispatched by processJob as a system job, and bad system job data ends at once', async () => {
    const job = (data: unknown) =>
      ({ id: 'j1', name: 'catalog.refresh', data, attemptsMade: 0, opts: { attempts: 3 } }) as unknown as Job;
    const detail = await processJob(job({ v: 1, system: 'catalog.refresh' }) as never, deps, signal);
    expect(detail).toMatch(/^catalogue of .*: 4 configurations, 6 instance types$/);
    await expect(
      processJob(job({ v: 1, system: 'catalog.refresh', projectId: 'not-a-uuid' }) as never, deps, signal),
    ).rejects.toMatchObject({ name: 'UnrecoverableError' });
  });
});

describe('the catalogue refresh where the cloud lists no capacity (shape B)', () => {
  it('names the types the price list offers, so the create form can list them', async () => {
    const sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 50, log: () => {} });
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    const prefix = `catb${randomBytes(3).toString('hex')}`;
    const deps = depsFor('B', sim, redis, prefix);
    try {
      const { catalog } = await refreshCatalog(deps, sim.info.projectId, new AbortController().signal);
      const types = orderedTypes(catalog.instanceTypes, Date.now());
      expect(types.map((t) => t.name)).toEqual(
        expect.arrayContaining(['h100-hgx-80gb.1x', 'h100-hgx-80gb.8x', 'rtx-a5000-24gb.1x']),
      );
      expect(types.find((t) => t.name === 'h100-hgx-80gb.8x')).toMatchObject({ offered: true });
      expect(types.every((t) => t.capacity === undefined)).toBe(true);
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await deps.cloud.close();
      await deps.platform?.close();
      await sim.close();
    }
  });
});
