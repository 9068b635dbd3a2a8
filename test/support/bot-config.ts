import { fileURLToPath } from 'node:url';
import { type Config, parseConfig } from '../../src/config.js';

// The configuration `gpuops start` reads, for the tests that start one bot of their own around a
// Redis they break (down, full) or a shutdown they time: pointed at a simulator, the Slack fake and
// that Redis, with a policy that prices nothing, so no request waits for an approver.

export const UNPRICED_POLICY = fileURLToPath(new URL('../fixtures/policy-unpriced.yaml', import.meta.url));

export interface BotEndpoints {
  readonly secret: string;
  readonly token: string;
  readonly slackApiUrl: string;
  readonly redisUrl: string;
  readonly sim: { readonly cloudUrl: string; readonly cloudToken: string; readonly projectId: string };
}

export function singleBotConfig(e: BotEndpoints): Config {
  return parseConfig(
    {
      SLACK_BOT_TOKEN: e.token,
      SLACK_SIGNING_SECRET: e.secret,
      SLACK_API_URL: e.slackApiUrl,
      PORT: '0',
      OPS_PORT: '0',
      REDIS_URL: e.redisUrl,
      CLOUD_API_URL: e.sim.cloudUrl,
      CLOUD_API_TOKEN: e.sim.cloudToken,
      CLOUD_PROJECT_ID: e.sim.projectId,
      GPUOPS_POLICY: UNPRICED_POLICY,
    },
    'bot',
  );
}
