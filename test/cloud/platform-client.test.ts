import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CloudAuthError,
  CloudBadRequestError,
  CloudSchemaError,
  createPlatformClient,
  type PlatformClient,
} from '../../src/cloud/index.js';
import { ValidationError } from '../../src/errors.js';
import { type ScriptedServer, startScriptedServer } from '../fakes/scripted-http-server.js';
import { ed25519PublicKey, mislabelledKey } from './ssh-key-fixtures.js';

let api: ScriptedServer;
let client: PlatformClient;

beforeEach(async () => {
  api = await startScriptedServer();
  client = createPlatformClient({ baseUrl: api.url, apiKey: 'pk-123', retry: { maxAttempts: 1 } });
});
afterEach(async () => {
  await client.close();
  api.assertNoUnexpected();
  await api.close();
});

describe('platform client', () => {
  it('sends the key in the api-key header and reads configurations with prices', async () => {
    api.on('GET', '/list_available_configurations', {
      json: [
        {
          gpu_type: 'H100_SXM5_80GB',
          gpu_counts: [1, 8],
          price_per_gpu_hr: '2.89',
          stopped_price_per_hour: '0.12',
          regions: ['NORWAY'],
        },
      ],
    });
    const configs = await client.listConfigurations();
    expect(api.requests[0]!.headers['api-key']).toBe('pk-123');
    expect(api.requests[0]!.headers.authorization).toBeUndefined();
    // Prices stay decimal strings; the legacy default of 5 minutes fills a missing estimate.
    expect(configs[0]).toMatchObject({ price_per_gpu_hr: '2.89', estimated_provisioning_time_minutes: 5 });
  });

  it('creates by gpu_type with gpu_count defaulting to 1 and returns the 202 answer', async () => {
    api.on('POST', '/instances', (req) => ({
      status: 202,
      json: { id: 'i-1', name: (req.json as { name: string }).name, gpu_type: 'RTX_A5000_24GB' },
    }));
    const created = await client.createInstanceByGpuType({
      name: 'box',
      gpu_type: 'RTX_A5000_24GB',
      ssh_key: 'laptop',
    });
    expect(created).toMatchObject({ id: 'i-1', name: 'box' });
    expect(api.requests[0]!.json).toEqual({
      name: 'box',
      gpu_type: 'RTX_A5000_24GB',
      gpu_count: 1,
      ssh_key: 'laptop',
    });
  });

  it('turns a FastAPI 422 into one sentence naming the fields', async () => {
    api.on('POST', '/instances', {
      status: 422,
      json: {
        detail: [
          {
            loc: ['body', 'gpu_type'],
            msg: "value is not a valid enumeration member; permitted: 'H100'",
            type: 'x',
          },
        ],
      },
    });
    const err = await client
      .createInstanceByGpuType({ gpu_type: 'NOPE', ssh_key: 'k' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudBadRequestError);
    expect((err as CloudBadRequestError).details).toEqual([
      { field: 'gpu_type', message: "value is not a valid enumeration member; permitted: 'H100'" },
    ]);
    expect((err as Error).message).toBe(
      "createInstanceByGpuType failed with HTTP 422: gpu_type: value is not a valid enumeration member; permitted: 'H100' — check the values given.",
    );
    expect(api.requests).toHaveLength(1);
  });

  it('checks an SSH key before sending it and URL-encodes names on delete', async () => {
    const err = await client.addSshKey({ name: 'k', public_key: mislabelledKey() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('public_key');
    expect(api.requests).toHaveLength(0);

    const key = ed25519PublicKey();
    api.on('POST', '/ssh_keys', (req) => ({ json: req.json }));
    api.on('DELETE', '/ssh_keys/my%20key%2F2', { json: {} });
    expect(await client.addSshKey({ name: 'my key/2', public_key: key })).toEqual({
      name: 'my key/2',
      public_key: key,
    });
    await client.deleteSshKey('my key/2');
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /ssh_keys',
      'DELETE /ssh_keys/my%20key%2F2',
    ]);
  });

  it('a wrong key is an auth error, a key list without names a schema error', async () => {
    api.on('GET', '/ssh_keys', { status: 401, json: { message: 'Invalid API key' } });
    const err = await client.listSshKeys().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudAuthError);
    expect((err as Error).message).toMatch(/listSshKeys failed with HTTP 401: Invalid API key/);
    // A static key gets no second try.
    expect(api.requests).toHaveLength(1);
    api.on('GET', '/ssh_keys', { json: [{ public_key: 'x' }] });
    await expect(client.listSshKeys()).rejects.toMatchObject({ path: '[0].name', operation: 'listSshKeys' });
    await expect(client.listSshKeys()).rejects.toBeInstanceOf(CloudSchemaError);
  });
});
