import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CloudAuthError,
  CloudBadRequestError,
  CloudNotFoundError,
  createPlatformClient,
  type PlatformClient,
} from '../../src/cloud/index.js';
import { ValidationError } from '../../src/errors.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { ed25519PublicKey, mislabelledKey, rsaPublicKey } from './ssh-key-fixtures.js';

// The platform client (SSH keys, configurations, create by gpu_type) against the simulator.

let sim: RunningSim;
let client: PlatformClient;

beforeAll(async () => {
  sim = await startSim({ shape: 'B', clock: 'manual', metrics: false, log: () => {} });
  client = createPlatformClient({ baseUrl: sim.info.platformUrl, apiKey: sim.info.platformApiKey });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

describe('contract: platform API against the simulator', () => {
  it('SSH keys: add, list, delete (URL-encoded name), 404 for a key that is gone', async () => {
    const laptop = ed25519PublicKey('alice@laptop');
    const desk = rsaPublicKey('alice@desk');
    expect(await client.addSshKey({ name: 'alice laptop', public_key: laptop })).toEqual({
      name: 'alice laptop',
      public_key: laptop,
    });
    await client.addSshKey({ name: 'alice-desk', public_key: desk });
    const keys = await client.listSshKeys();
    expect(keys.map((k) => k.name).sort()).toEqual(['alice laptop', 'alice-desk']);

    // The simulator refuses a second key of the same name with FastAPI's 422.
    const dup = await client.addSshKey({ name: 'alice-desk', public_key: desk }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(CloudBadRequestError);
    expect((dup as CloudBadRequestError).details[0]?.field).toBe('name');
    expect((dup as Error).message).toMatch(/^addSshKey failed with HTTP 422: name: .*already exists/);

    await client.deleteSshKey('alice laptop');
    expect((await client.listSshKeys()).map((k) => k.name)).toEqual(['alice-desk']);
    await expect(client.deleteSshKey('alice laptop')).rejects.toBeInstanceOf(CloudNotFoundError);
  });

  it('a mislabelled key is refused before sending', async () => {
    const err = await client
      .addSshKey({ name: 'bad', public_key: mislabelledKey() })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(sim.control.creates().attempts.createSshKey?.bad).toBeUndefined();
  });

  it('configurations carry decimal prices, regions and provisioning estimates', async () => {
    const configs = await client.listConfigurations();
    expect(configs.length).toBeGreaterThan(0);
    for (const c of configs) {
      expect(c.price_per_gpu_hr).toMatch(/^\d+(\.\d+)?$/);
      expect(c.regions.length).toBeGreaterThan(0);
      expect(c.estimated_provisioning_time_minutes).toBeGreaterThan(0);
    }
  });

  it('creates by gpu_type with gpu_count 1 by default; a bad gpu_type is a 422 naming the field', async () => {
    await client.addSshKey({ name: 'ops', public_key: ed25519PublicKey() }).catch(() => {});
    const gpuType = (await client.listConfigurations())[0]!.gpu_type;
    const created = await client.createInstanceByGpuType({
      name: 'by-gpu',
      gpu_type: gpuType,
      ssh_key: 'ops',
    });
    expect(created).toMatchObject({ name: 'by-gpu', gpu_type: gpuType, id: expect.any(String) });
    expect(sim.control.createCount('createInstanceByGpuType', 'by-gpu')).toBe(1);

    const bad = await client
      .createInstanceByGpuType({ name: 'nope', gpu_type: 'TPU_V9', ssh_key: 'ops' })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(CloudBadRequestError);
    expect((bad as CloudBadRequestError).details[0]?.field).toBe('gpu_type');
  });

  it('a wrong api-key is a 401 auth error; so is none', async () => {
    const wrong = createPlatformClient({ baseUrl: sim.info.platformUrl, apiKey: 'not-the-key' });
    try {
      const err = await wrong.listSshKeys().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CloudAuthError);
      expect((err as Error).message).not.toContain('not-the-key');
    } finally {
      await wrong.close();
    }
    const res = await request(`${sim.info.platformUrl}/ssh_keys`);
    expect(res.statusCode).toBe(401);
    await res.body.dump();
  });
});
