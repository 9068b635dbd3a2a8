import type { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import type { RunningSim } from '../../src/sim/start-sim.js';

/**
 * The environment `gpuops start` reads, pointed at local stand-ins: the simulator (cloud and platform
 * API), the fake Slack Web API and a Redis. Ports are picked by the system.
 */
export function localEnv(parts: {
  readonly sim: RunningSim;
  readonly slack: FakeSlackApi;
  readonly redisUrl: string;
  readonly botToken: string;
  readonly signingSecret: string;
}): Record<string, string> {
  const { sim, slack } = parts;
  return {
    SLACK_BOT_TOKEN: parts.botToken,
    SLACK_SIGNING_SECRET: parts.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    OPS_PORT: '0',
    REDIS_URL: parts.redisUrl,
    CLOUD_API_URL: sim.info.cloudUrl,
    CLOUD_API_SHAPE: sim.info.shape,
    CLOUD_API_TOKEN: sim.info.cloudToken,
    CLOUD_PROJECT_ID: sim.info.projectId,
    // Prices come from the platform API; without them every create and start waits for an approver.
    PLATFORM_API_URL: sim.info.platformUrl,
    PLATFORM_API_KEY: sim.info.platformApiKey,
  };
}
