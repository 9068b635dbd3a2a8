import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { redisTargetOf } from '../src/app/redis-connections.js';
import { ConfigError, envSchema, parseConfig } from '../src/config.js';

const exampleEntries = readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
  .split('\n')
  .map((line) => /^([A-Z][A-Z0-9_]+)=(.*)$/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => [m[1]!, m[2]!] as const);
const exampleKeys = exampleEntries.map(([k]) => k);

describe('config', () => {
  it('documents every key of the schema in .env.example, and nothing else', () => {
    expect([...exampleKeys].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });

  it('parses the values .env.example ships with', () => {
    const config = parseConfig(Object.fromEntries(exampleEntries));
    expect(config.CLOUD_API_SHAPE).toBe('B');
    expect(config.SLACK_API_URL).toBe('https://slack.com/api/');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports every bad key by name with what it expects, never the value', () => {
    const secretish = 'xoxb-not-a-url-secret';
    let error: unknown;
    try {
      parseConfig({
        CLOUD_API_SHAPE: 'D',
        PORT: 'eighty',
        CLOUD_API_URL: secretish,
        SLACK_SOCKET_MODE: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain('CLOUD_API_SHAPE: expected A, B or C');
    expect(message).toContain('PORT: expected a port number');
    expect(message).toContain('CLOUD_API_URL: expected an http(s) URL');
    expect(message).toContain('SLACK_SOCKET_MODE: expected true or false');
    expect(message).not.toContain(secretish);
  });

  it('requires what the bot role needs, naming each missing key and why', () => {
    expect(() => parseConfig({}, 'bot')).toThrowError(/SLACK_BOT_TOKEN: required/);
    expect(() => parseConfig({ SLACK_SOCKET_MODE: 'true' }, 'bot')).toThrowError(/SLACK_APP_TOKEN: required/);
    expect(() =>
      parseConfig({ CLOUD_API_URL: 'http://x', CLOUD_CLIENT_ID: 'a', CLOUD_CLIENT_SECRET: 'b' }, 'cloud'),
    ).toThrowError(/CLOUD_AUTH_URL: required/);
    const ok = parseConfig({ CLOUD_API_URL: 'http://127.0.0.1:1/api', CLOUD_API_TOKEN: 't' }, 'cloud');
    expect(ok.CLOUD_API_TOKEN).toBe('t');
  });

  it('takes a Redis Cluster as host:port pairs, with the password from REDIS_URL, and never with Sentinel', () => {
    const config = parseConfig({
      REDIS_URL: 'redis://:s3cret@ignored:6379/2',
      REDIS_CLUSTER_NODES: 'redis-0:6379, redis-1:6380',
    });
    const target = redisTargetOf(config);
    expect(target.cluster).toEqual([
      { host: 'redis-0', port: 6379 },
      { host: 'redis-1', port: 6380 },
    ]);
    // A cluster has one database; the password applies to every node; messages never show it.
    expect(target.options).toEqual({ password: 's3cret' });
    expect(target.describe).not.toContain('s3cret');
    expect(() => parseConfig({ REDIS_CLUSTER_NODES: 'redis-0' })).toThrowError(
      /REDIS_CLUSTER_NODES: expected comma-separated host:port pairs/,
    );
    expect(() =>
      parseConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', REDIS_SENTINEL_MASTER: 'm' }),
    ).toThrowError(/set either it \(Redis Cluster\) or REDIS_SENTINELS/);
  });

  it('exits 1 with the problem list when the CLI is started with a bad environment', async () => {
    const { execFile } = await import('node:child_process');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', '-e', "import('./src/config.ts').then(m => m.loadConfig('cloud'))"],
        {
          env: { PATH: process.env.PATH, CLOUD_API_SHAPE: 'Z' },
          cwd: new URL('..', import.meta.url).pathname,
        },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('CLOUD_API_SHAPE: expected A, B or C');
    expect(result.stderr).toContain('CLOUD_API_URL: required');
  });
});
