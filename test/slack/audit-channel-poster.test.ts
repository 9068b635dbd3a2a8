import { Writable } from 'node:stream';
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { createAuditChannelPoster, MAX_PENDING } from '../../src/slack/audit-channel-poster.js';
import type { AuditEntry } from '../../src/store/audit.js';

// The audit channel's copy of the trail, against the local fake of Slack with the real SDK client:
// while Slack rate-limits the channel, entries are skipped (not queued), posting resumes when the
// limit ends, and no more than MAX_PENDING posts are ever waiting on a slow Slack.

const TOKEN = 'xoxb-audit-poster';
const AUDIT = 'C0AUDITPOST';

const entry = (n: number): AuditEntry => ({
  id: `${n}-0`,
  at: n,
  event: 'request',
  actor: 'U0ADA',
  operation: 'ls',
  target: `entry-${n}`,
  outcome: 'done',
  parameters: {},
});

describe('the audit channel poster', () => {
  let slack: FakeSlackApi;
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });
  beforeAll(async () => {
    slack = await FakeSlackApi.start({ tokens: [TOKEN] });
  });
  afterAll(async () => {
    await slack?.close();
  });
  const client = () =>
    new WebClient(TOKEN, {
      slackApiUrl: slack.apiUrl,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
    });
  const posted = (n: number) => slack.messages(AUDIT).some((m) => String(m.text).includes(`entry-${n}`));

  it('skips entries while Slack rate-limits the channel and posts again once Retry-After has passed', async () => {
    let clock = 1_000_000;
    const post = createAuditChannelPoster(client(), AUDIT, log, () => clock);
    slack.rateLimit('chat.postMessage', 30, 1);
    await post(entry(1));
    await post(entry(2));
    await post(entry(3));
    expect(slack.callsTo('chat.postMessage').filter((c) => c.body.channel === AUDIT)).toHaveLength(1);
    expect([1, 2, 3].some(posted)).toBe(false);
    expect(lines.join('')).toContain('Slack rate-limits it for 30 s');
    clock += 30_001;
    await post(entry(4));
    expect(posted(4)).toBe(true);
    expect(lines.join('')).toContain('"skipped":3');
  });

  it(`keeps at most ${MAX_PENDING} posts waiting on a slow Slack and skips the rest`, async () => {
    const post = createAuditChannelPoster(client(), AUDIT, log);
    slack.slow('chat.postMessage', 300, MAX_PENDING + 5);
    const since = slack.mark();
    const all = Array.from({ length: MAX_PENDING + 5 }, (_, i) => post(entry(100 + i)));
    await Promise.all(all);
    const calls = slack.callsTo('chat.postMessage').filter((c) => /entry-1\d\d/.test(String(c.body.text)));
    expect(calls).toHaveLength(MAX_PENDING);
    expect(slack.mark() - since).toBe(MAX_PENDING);
    expect(lines.join('')).toContain(`${MAX_PENDING} posts are already waiting`);
  });
});
