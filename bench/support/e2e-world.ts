import { type GpuopsProcess, spawnGpuops } from '../../test/support/gpuops-process.js';
import { BOT_TOKEN, SECRET } from './e2e-driver.js';
import { UNLIMITED_POLICY_FILE } from './unlimited-policy.js';

// What the end-to-end benchmarks start around the apps they measure: the simulator as a child process
// (transitions of 0 ms), and the environment gpuops runs with against it.

export interface SimInfo {
  readonly cloudUrl: string;
  readonly cloudToken: string;
  readonly projectId: string;
  readonly platformUrl: string;
  readonly platformApiKey: string;
  readonly controlUrl: string;
}

export async function startSimProcess(): Promise<{ sim: GpuopsProcess; info: SimInfo }> {
  const sim = spawnGpuops(['sim', '--shape', 'B', '--transition-ms', '0', '--no-metrics', '--seed', '7'], {});
  const info = (await sim.waitForLog((r) => typeof r.cloudUrl === 'string', 30_000)) as unknown as SimInfo;
  return { sim, info };
}

export function gpuopsEnvFor(info: SimInfo, slackApiUrl: string, redisUrl: string): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slackApiUrl,
    PORT: '0',
    OPS_PORT: '0',
    REDIS_URL: redisUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // The built-in policy less its rate limits: the benchmark sends thousands of commands a minute.
    GPUOPS_POLICY: UNLIMITED_POLICY_FILE,
    CLOUD_API_URL: info.cloudUrl,
    CLOUD_API_TOKEN: info.cloudToken,
    CLOUD_PROJECT_ID: info.projectId,
    // Prices come from the platform API: without them every create and start waits for an approver.
    PLATFORM_API_URL: info.platformUrl,
    PLATFORM_API_KEY: info.platformApiKey,
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  };
}
