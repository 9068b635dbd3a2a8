import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { FakeSlackApi, type FakeSlackOptions } from '../../src/devkit/fake-slack-api.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { createStore, type Store } from '../../src/store/store.js';

// What the Slack layer's helpers read through: the real SDK's WebClient against the fake Slack Web API,
// and a store on the private Redis of test/global-setup.ts under a prefix of its own.

const TOKEN = 'xoxb-helpers';

export interface SlackWithStore {
  readonly slack: FakeSlackApi;
  readonly redis: Redis;
  readonly store: Store;
  /** The deps the helpers take: client, store, log. */
  readonly deps: { readonly client: WebClient; readonly store: Store; readonly log: Logger };
  close(): Promise<void>;
}

export async function startSlackWithStore(
  name: string,
  options: FakeSlackOptions = {},
): Promise<SlackWithStore> {
  const slack = await FakeSlackApi.start({ tokens: [TOKEN], ...options });
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  const store = createStore(redis, `${name}-${process.pid}-${Date.now()}`);
  const client = new WebClient(TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  return {
    slack,
    redis,
    store,
    deps: { client, store, log: createLogger({ level: 'silent' }) },
    async close() {
      const keys = await redis.keys(`${store.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await slack.close();
    },
  };
}
