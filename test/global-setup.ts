import type { TestProject } from 'vitest/node';
import { ensureBinary } from '../src/sys/ensure-binary.js';
import { type PrivateRedis, startPrivateRedis } from '../src/sys/private-redis.js';

// Once per run: make sure the real servers the tests use exist (installing them with apt-get when
// running as root on Debian/Ubuntu, saying so), and start one private Redis unless REDIS_URL is set.
// Each test file isolates itself with its own queue names and key prefixes.

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let redis: PrivateRedis | undefined;

export async function setup(project: TestProject): Promise<void> {
  const log = (line: string) => process.stderr.write(`[test setup] ${line}\n`);
  await ensureBinary('prometheus', { debianPackage: 'prometheus', install: true, log });
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return;
  }
  redis = await startPrivateRedis({ install: true, log });
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.close();
}
