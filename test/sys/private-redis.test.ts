import { spawn } from 'node:child_process';
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

  it('restarts only a server that is down: one still running goes on, and kill() then stops it', async () => {
    const redis = await startPrivateRedis();
    try {
      await redis.restart();
      await redis.kill();
      // Nothing answers on its port any more: a client is refused rather than served.
      const client = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => {});
      await expect(client.ping()).rejects.toThrow();
      client.disconnect();
    } finally {
      await redis.close();
    }
  });

  it('refuses to restart on a port another server took while it was down, saying so', async () => {
    const redis = await startPrivateRedis();
    await redis.kill();
    const other = spawn('redis-server', ['--port', String(redis.port), '--bind', '127.0.0.1', '--save', ''], {
      stdio: 'ignore',
    });
    try {
      const client = new Redis(redis.url);
      client.on('error', () => {});
      await client.ping();
      client.disconnect();
      await expect(redis.restart()).rejects.toThrow(
        new RegExp(`^port ${redis.port} is held by another server`),
      );
    } finally {
      other.kill('SIGKILL');
      await redis.close();
    }
  });

  it('is provided to every test file by the global setup', async () => {
    const client = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });
});
