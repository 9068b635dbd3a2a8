import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { stepFunction } from '../../src/commands/workflow/step-manifest.js';
import { parseConfig } from '../../src/config.js';
import { FakeSlackApi, type FunctionDefinition } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { FakeSocketModeServer } from '../fakes/socket-mode-server.js';
import { redisDb } from '../support/gpuops-process.js';
import {
  eventCallbackBody,
  filledValues,
  ResponseUrlServer,
  slashCommandBody,
  viewSubmissionPayload,
} from '../support/slack-driver.js';

const UNPRICED_POLICY = fileURLToPath(new URL('../fixtures/policy-unpriced.yaml', import.meta.url));

// The bot over Socket Mode, end to end: apps.connections.open on the fake Web API hands out a local
// WebSocket that speaks Slack's envelope protocol; slash commands arrive as envelopes, the app acks
// each one with its answer, and the jobs run through real Redis, workers and the simulator. The bot
// logs at debug, where the SDK reports every WebSocket message: no payload may reach the log.

const BOT_TOKEN = 'xoxb-socket';
const APP_TOKEN = 'xapp-socket';
const CHANNEL = 'C0SOCK';
const DB = 6;

describe('Socket Mode end to end', () => {
  let sim: RunningSim;
  let slack: FakeSlackApi;
  let socket: FakeSocketModeServer;
  let responses: ResponseUrlServer;
  let redis: Redis;
  let bot: RunningBot;
  const logLines: string[] = [];

  beforeAll(async () => {
    sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 300, log: () => {} });
    socket = await FakeSocketModeServer.start();
    slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], appToken: APP_TOKEN, socketModeUrl: socket.url });
    responses = await ResponseUrlServer.start();
    const redisUrl = redisDb(inject('redisUrl'), DB);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    const config = parseConfig(
      {
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_APP_TOKEN: APP_TOKEN,
        SLACK_SOCKET_MODE: 'true',
        SLACK_API_URL: slack.apiUrl,
        PORT: '0',
        OPS_PORT: '0',
        LOG_LEVEL: 'debug',
        REDIS_URL: redisUrl,
        CLOUD_API_URL: sim.info.cloudUrl,
        CLOUD_API_TOKEN: sim.info.cloudToken,
        CLOUD_PROJECT_ID: sim.info.projectId,
        // Not a guardrails test: nothing waits for an approver over a price not (yet) known.
        GPUOPS_POLICY: UNPRICED_POLICY,
      },
      'bot',
    );
    bot = await startBot(config, {
      log: createLogger({ level: config.LOG_LEVEL, destination: { write: (l: string) => logLines.push(l) } }),
      host: '127.0.0.1',
      workerTiming: { pollStartMs: 50, pollMaxMs: 200 },
    });
    await socket.connected();
  });

  afterAll(async () => {
    await bot?.stop();
    await socket?.close();
    await redis?.flushdb().catch(() => {});
    redis?.disconnect();
    await responses?.close();
    await slack?.close();
    await sim?.close();
  });

  const slashFields = (text: string, responseUrl = responses.newUrl()) =>
    Object.fromEntries(new URLSearchParams(slashCommandBody({ text, responseUrl, channelId: CHANNEL })));

  it('warns at start that a policy with no approvers and no admins lets any member approve', () => {
    const warning = logLines
      .map((l) => JSON.parse(l) as { level: string; msg: string })
      .find((l) => l.level === 'warn' && l.msg.includes('names no approvers and no admins'));
    expect(warning?.msg).toContain('approvals.approvers or roles.admin');
  });

  it('opened the connection through apps.connections.open with the app token, on the fake', () => {
    const opens = slack.callsTo('apps.connections.open');
    expect(opens).toHaveLength(1);
    expect(opens[0]!.token).toBe(APP_TOKEN);
    expect(socket.connections).toBe(1);
  });

  it('acks a slash command envelope with the answer as its payload', async () => {
    const envelopeId = socket.sendSlashCommand(slashFields('help'));
    const ack = await socket.waitForAck(envelopeId);
    expect(ack.payload).toMatchObject({ response_type: 'ephemeral' });
    expect(String(ack.payload?.text)).toContain('/gpu');
  });

  it('runs the job an envelope asked for: the channel message ends Done with the machine running', async () => {
    const since = slack.mark();
    const envelopeId = socket.sendSlashCommand(slashFields('create sock-1 h100-hgx-80gb.1x'));
    const ack = await socket.waitForAck(envelopeId);
    expect(ack.envelope_id).toBe(envelopeId);
    const posted = await slack.waitFor('chat.postMessage', (c) => c.body.channel === CHANNEL, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && String(c.body.text).startsWith('Done:'),
      15_000,
      since,
    );
    const message = slack.message(CHANNEL, ts)!;
    expect(message.history[0]!.text).toMatch(/^Queued:/);
    expect(message.text).toMatch(/sock-1 is running at \d+\.\d+\.\d+\.\d+/);
    expect(sim.control.createCount('createInstance', 'sock-1')).toBe(1);
    expect(socket.unexpected).toEqual([]);
  });

  it('publishes the Home tab when an app_home_opened envelope arrives, with the machine just made', async () => {
    const since = slack.mark();
    const envelopeId = socket.send({
      type: 'events_api',
      payload: eventCallbackBody({ type: 'app_home_opened', user: 'U0ADA', channel: 'D0ADA', tab: 'home' }),
      accepts_response_payload: false,
    });
    await socket.waitForAck(envelopeId);
    const published = await slack.waitFor('views.publish', (c) => c.body.user_id === 'U0ADA', 10_000, since);
    const view = JSON.stringify(published.body.view);
    expect(view).toContain('*sock-1*');
    expect(view).toContain(`made in <#${CHANNEL}>`);
    // The composition root found fonts: the week's chart is an uploaded picture.
    expect(view).toContain('"slack_file"');
    expect(socket.unexpected).toEqual([]);
  });

  it('runs a Workflow Builder step from an events_api envelope and completes it with its outputs', async () => {
    const definition = stepFunction('stop_instance') as unknown as FunctionDefinition;
    // Running since the test above; Ada used the workflow.
    const { run, event } = slack.functionRuns.start(
      'stop_instance',
      definition,
      { instance: 'sock-1' },
      'U0ADA',
    );
    const envelopeId = socket.send({
      type: 'events_api',
      payload: eventCallbackBody(event),
      accepts_response_payload: false,
    });
    await socket.waitForAck(envelopeId);
    await expect(slack.functionRuns.ended(run.executionId)).resolves.toMatchObject({
      state: 'completed',
      outputs: { instance_name: 'sock-1', state: 'stopped' },
    });
    const ended = slack
      .callsTo('functions.completeSuccess')
      .find((c) => c.body.function_execution_id === run.executionId);
    expect(ended?.token).toBe(BOT_TOKEN);
    // The event's one-off token is a secret: not in the log, even at debug.
    expect(logLines.join('\n')).not.toContain(run.token);
  });

  it('answers a read-only command on its response_url, in place of the ack', async () => {
    const responseUrl = responses.newUrl();
    const envelopeId = socket.sendSlashCommand(slashFields('ls', responseUrl));
    const ack = await socket.waitForAck(envelopeId);
    expect(String(ack.payload?.text)).toMatch(/Looking that up/);
    const post = await responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
    expect(JSON.stringify(post.body.blocks)).toContain('sock-1');
  });

  it('creates from a form with user data and a pasted kubeconfig, and logs neither at debug', async () => {
    const secret = `ud-${randomBytes(8).toString('hex')}`;
    const userData = `#cloud-config\nwrite_files:\n- path: /etc/app.env\n  content: API_PASSWORD=${secret}\n`;
    const kubeSecret = `kc-${randomBytes(8).toString('hex')}`;
    const kubeconfig = `apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: ${kubeSecret}\n`;
    const triggerId = slack.issueTriggerId();
    const since = slack.mark();
    const fields = { ...slashFields('create'), trigger_id: triggerId };
    await socket.waitForAck(socket.sendSlashCommand(fields));
    const opened = await slack.waitFor('views.open', (c) => c.body.trigger_id === triggerId, 5_000, since);
    const view = slack.views.get((opened.response as { view: { id: string } }).view.id)!;
    const blocks = view.view.blocks as Array<{
      block_id?: string;
      element?: { type: string; action_id: string };
    }>;
    const payload = viewSubmissionPayload({
      callbackId: String(view.view.callback_id),
      values: {
        ...filledValues(blocks, { name: 'sock-logs', type: 'h100-hgx-80gb.1x', user_data: userData }),
        // A kubeconfig pasted where it does not belong still travels in the envelope.
        pasted: { paste: { type: 'plain_text_input', value: kubeconfig } },
      },
      privateMetadata: String(view.view.private_metadata),
      viewId: view.id,
      blocks,
    });
    const submitted = slack.mark();
    await socket.waitForAck(socket.send({ type: 'interactive', payload, accepts_response_payload: true }));
    const posted = await slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === CHANNEL,
      10_000,
      submitted,
    );
    const ts = String((posted.response as { ts: string }).ts);
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && /^Done: .*sock-logs is running/.test(String(c.body.text)),
      20_000,
      submitted,
    );
    const log = logLines.join('');
    // The debug log is on and says what the SDK did, without the messages themselves.
    expect(log).toContain('Received a message on the WebSocket');
    for (const leaked of [secret, kubeSecret, 'API_PASSWORD', 'kind: Config', '#cloud-config']) {
      expect(log).not.toContain(leaked);
    }
  });

  it('refuses to start with a clear sentence when Slack refuses the app token', async () => {
    const config = parseConfig(
      {
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_APP_TOKEN: 'xapp-wrong',
        SLACK_SOCKET_MODE: 'true',
        SLACK_API_URL: slack.apiUrl,
        PORT: '0',
        OPS_PORT: '0',
        ROLE: 'web',
        REDIS_URL: redisDb(inject('redisUrl'), DB),
        CLOUD_API_URL: sim.info.cloudUrl,
        CLOUD_API_TOKEN: sim.info.cloudToken,
      },
      'bot',
    );
    await expect(
      startBot(config, { log: createLogger({ level: 'silent' }), host: '127.0.0.1' }),
    ).rejects.toThrow(/^Slack refused SLACK_APP_TOKEN \(invalid_auth\)/);
  });

  it('still serves the probes and /metrics on OPS_PORT, and no /slack/events', async () => {
    const base = `http://127.0.0.1:${bot.opsPort}`;
    expect((await request(`${base}/healthz`)).statusCode).toBe(200);
    expect((await request(`${base}/readyz`)).statusCode).toBe(200);
    const metrics = await request(`${base}/metrics`);
    const text = await metrics.body.text();
    expect(text).toContain('gpuops_commands_total{subcommand="create"} 2');
    expect(text).toContain('gpuops_info{role="all",shape="B",mode="socket"} 1');
    expect((await request(`${base}/slack/events`, { method: 'POST', body: '{}' })).statusCode).toBe(404);
  });
});
