import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSealer, SEALED_REF, sealKeyFrom } from '../../src/store/sealed.js';

const SECRET = '#cloud-config\npassword: hunter2-sealed-test\n';

describe('sealed secrets in Redis', () => {
  let redis: Redis;
  const prefix = `sealtest${randomBytes(3).toString('hex')}`;
  const key = Buffer.alloc(32, 1);

  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('stores only ciphertext under a random id, and gives the text back until discarded', async () => {
    const sealer = createSealer(redis, prefix, key);
    const ref = await sealer.seal(SECRET);
    expect(ref.sealedRef).toMatch(SEALED_REF);
    const stored = await redis.get(`${prefix}:sealed:${ref.sealedRef}`);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 20));
    const ttl = await redis.ttl(`${prefix}:sealed:${ref.sealedRef}`);
    expect(ttl).toBeGreaterThan(24 * 3600 - 10);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);
    expect(await sealer.unseal(ref)).toBe(SECRET);
    await sealer.discard(ref);
    expect(await sealer.unseal(ref)).toBeUndefined();
  });

  it('cannot be read with another key, moved to another id, or tampered with', async () => {
    const sealer = createSealer(redis, prefix, key);
    const ref = await sealer.seal(SECRET);
    expect(await createSealer(redis, prefix, Buffer.alloc(32, 2)).unseal(ref)).toBeUndefined();
    const other = await sealer.seal('other');
    const body = (await redis.get(`${prefix}:sealed:${ref.sealedRef}`))!;
    await redis.set(`${prefix}:sealed:${other.sealedRef}`, body);
    expect(await sealer.unseal(other)).toBeUndefined();
    const flipped = body.slice(0, -2) + (body.endsWith('A') ? 'BB' : 'AA');
    await redis.set(`${prefix}:sealed:${ref.sealedRef}`, flipped);
    expect(await sealer.unseal(ref)).toBeUndefined();
    expect(await sealer.unseal({ sealedRef: '../../etc/passwd' })).toBeUndefined();
  });

  it('lives only as long as asked', async () => {
    const sealer = createSealer(redis, prefix, key);
    const ref = await sealer.seal(SECRET, 60);
    const ttl = await redis.ttl(`${prefix}:sealed:${ref.sealedRef}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });
});

describe('the sealing key', () => {
  it('takes GPUOPS_SEAL_KEY as hex or base64', () => {
    const hex = 'ab'.repeat(32);
    expect(sealKeyFrom({ GPUOPS_SEAL_KEY: hex })).toEqual(Buffer.from(hex, 'hex'));
    const b64 = Buffer.alloc(32, 9).toString('base64');
    expect(sealKeyFrom({ GPUOPS_SEAL_KEY: b64 })).toEqual(Buffer.alloc(32, 9));
  });

  it('derives a stable key from the bot token when none is set, and a new one when the token changes', () => {
    const a = sealKeyFrom({ SLACK_BOT_TOKEN: 'xoxb-1' });
    expect(a).toHaveLength(32);
    expect(sealKeyFrom({ SLACK_BOT_TOKEN: 'xoxb-1' })).toEqual(a);
    expect(sealKeyFrom({ SLACK_BOT_TOKEN: 'xoxb-2' })).not.toEqual(a);
    expect(() => sealKeyFrom({})).toThrowError(/GPUOPS_SEAL_KEY or SLACK_BOT_TOKEN/);
  });
});
