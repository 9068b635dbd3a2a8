import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { startPrivateRedis } from '../../src/sys/private-redis.js';

describe('private redis', () => {
  it('serves a throwaway redis-server on a free port and removes its data when closed', async () => {
    const redis = await startPrivateRedis({ appendOnly: true });
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      await client.set('gpuops:test', 'kept');
      // A crash and restart keeps what the append-only file recorded.
      client.disconnect();
      await redis.kill();
      await redis.restart();
      const again = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      expect(await again.get('gpuops:test')).toBe('kept');
      expect(await again.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
      again.disconnect();
    } finally {
      await redis.close();
    }
    expect(existsSync(redis.dir)).toBe(false);
  });

  it('is provided to every test file by the global setup', async () => {
    const client = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });
});
