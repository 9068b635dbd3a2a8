import { WebClient } from '@slack/web-api';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createBotMetrics, METRIC_NAMES } from '../../src/obs/bot-metrics.js';
import { countSlackErrors, slackMethodOf } from '../../src/obs/count-slack-errors.js';
import { healthRoutes } from '../../src/obs/health-routes.js';
import { startRouteServer } from '../../src/obs/route-server.js';

// The observability pieces on their own: Slack API errors counted through the real WebClient, and
// the probes' answers when Redis or the queue misbehave, over real HTTP.

describe('Slack API errors at /metrics', () => {
  let slack: FakeSlackApi;
  beforeAll(async () => {
    slack = await FakeSlackApi.start({ tokens: ['xoxb-obs'] });
  });
  afterAll(async () => {
    await slack?.close();
  });

  it('counts Slack error answers and HTTP errors by method, and passes every answer through', async () => {
    const metrics = createBotMetrics({ defaultMetrics: false });
    const client = new WebClient('xoxb-obs', {
      slackApiUrl: slack.apiUrl,
      fetch: countSlackErrors((m, e) => metrics.slackApiError(m, e)),
      retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 20 },
    });
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'hi' });
    expect(posted.ok).toBe(true);
    slack.failWith('chat.update', 'message_not_found');
    await expect(
      client.chat.update({ channel: 'C1', ts: String(posted.ts), text: 'x' }),
    ).rejects.toMatchObject({
      data: { error: 'message_not_found' },
    });
    slack.rateLimit('chat.postEphemeral', 0, 1);
    await client.chat.postEphemeral({ channel: 'C1', user: 'U1', text: 'later' }).catch(() => {});
    const { body } = await metrics.render();
    expect(body).toContain(`${METRIC_NAMES.slackErrors}{method="chat.update",error="message_not_found"} 1`);
    expect(body).toContain(`${METRIC_NAMES.slackErrors}{method="chat.postEphemeral",error="http_429"} 1`);
    expect(body).not.toContain('method="chat.postMessage"');
  });

  it('names the method from the URL, and anything else a file upload', () => {
    expect(slackMethodOf('https://slack.com/api/files.completeUploadExternal')).toBe(
      'files.completeUploadExternal',
    );
    expect(slackMethodOf('https://files.slack.com/upload/v1/ABC123')).toBe('file_upload');
  });
});

describe('/readyz', () => {
  it('names what failed: a Redis that refuses, a queue that hangs, a process shutting down', async () => {
    let redisPing: () => Promise<unknown> = async () => 'PONG';
    let queueCheck: () => Promise<unknown> = async () => ({});
    let shuttingDown = false;
    const server = await startRouteServer(
      healthRoutes({
        redisPing: () => redisPing(),
        queueCheck: () => queueCheck(),
        metrics: createBotMetrics({ defaultMetrics: false }),
        shuttingDown: () => shuttingDown,
        timeoutMs: 100,
      }),
      0,
      '127.0.0.1',
    );
    const readyz = async () => {
      const res = await request(`http://127.0.0.1:${server.port}/readyz`);
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    try {
      expect(await readyz()).toEqual({
        status: 200,
        body: { status: 'ready', checks: { redis: 'ok', queue: 'ok' } },
      });

      redisPing = async () => {
        throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      };
      const down = await readyz();
      expect(down.status).toBe(503);
      expect(down.body.reason).toMatch(/^Redis does not answer PING \(Stream isn't writeable/);

      redisPing = async () => 'PONG';
      queueCheck = () => new Promise(() => {});
      const hung = await readyz();
      expect(hung.status).toBe(503);
      expect(hung.body).toMatchObject({
        checks: { redis: 'ok', queue: 'The queue did not answer within 100 ms' },
      });

      queueCheck = async () => ({});
      shuttingDown = true;
      expect(await readyz()).toEqual({
        status: 503,
        body: { status: 'unavailable', reason: 'gpuops is shutting down.' },
      });
      expect((await request(`http://127.0.0.1:${server.port}/healthz`)).statusCode).toBe(200);
      expect((await request(`http://127.0.0.1:${server.port}/nowhere`)).statusCode).toBe(404);
    } finally {
      await server.close();
    }
  });
});
