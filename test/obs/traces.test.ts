import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/app/tracing.js';
import { parseConfig } from '../../src/config.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { countSlackErrors } from '../../src/obs/count-slack-errors.js';
import { traceSlackCalls } from '../../src/obs/trace-slack-calls.js';
import { tracingOn } from '../../src/obs/trace-spans.js';
import { requestSpanOf } from '../../src/slack/request-span.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { channelRequest, finalMessage } from '../e2e/answers.js';
import { OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver.js';
import { UNPRICED_POLICY } from '../support/bot-config.js';
import { BOT_TOKEN, type BotStack, SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import { type GpuopsProcess, spawnGpuops } from '../support/gpuops-process.js';

// OpenTelemetry traces through the real stack (docs/operations.md, "Traces"): a signed `/gpu create`
// goes from the Slack request through the accept step, BullMQ (the trace crosses Redis in the job),
// the handler and its cloud and Slack calls to the answer, and a small OTLP/HTTP collector receives
// one tree of spans. No attribute anywhere carries a secret or what was typed.

const COLLECTOR_KEY = 'collector-key-4f9a1c';
const INSTANCE = 'train-otel';
const REFUSED = 'refused-otel';

describe('traces across the queue', () => {
  let receiver: OtlpReceiver;
  let stack: BotStack | undefined;
  const sshKey = ed25519PublicKey('ada@traced-laptop');
  let secrets: string[];
  let createJobId: string;
  let refusedText: string;
  let createTraceparent: string;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    stack = await startBotStack({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`,
        OTEL_SERVICE_NAME: 'gpuops-traced',
      },
    });
    secrets = [
      BOT_TOKEN,
      SIGNING_SECRET,
      stack.sim.info.cloudToken,
      stack.sim.info.platformApiKey,
      COLLECTOR_KEY,
      sshKey.split(' ')[1]!,
      'ada@traced-laptop',
      INSTANCE,
      REFUSED,
    ];
    // A create and a key added: the key is typed, the create names a machine; neither may reach a span.
    const createTs = await channelRequest(stack, `create ${INSTANCE} h100-hgx-80gb.1x`);
    expect((await finalMessage(stack, createTs, 'Done')).text).toMatch(/train-otel is running at/);
    const keyTs = await channelRequest(stack, `keys add laptop ${sshKey}`);
    expect((await finalMessage(stack, keyTs, 'Done')).text).toContain('Added SSH key laptop');
    // A create the cloud refuses: its answer names the machine, its spans must not.
    stack.sim.control.addFault({ operation: 'createInstance', status: 400, count: 1 });
    const refusedTs = await channelRequest(stack, `create ${REFUSED} h100-hgx-80gb.1x`);
    refusedText = String((await finalMessage(stack, refusedTs, 'Failed')).text);
    const job = (await stack.queue.getJobs(['completed'])).find((j) => j?.name === 'create')!;
    createJobId = job.id!;
    createTraceparent = String(JSON.parse(job.opts.telemetry?.metadata ?? '{}').traceparent);
    // Stopping the bot sends the spans still buffered.
    await stack.close();
    stack = undefined;
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  const named = (name: string) => receiver.spans.filter((s) => s.name === name);
  const parentOf = (s: ReceivedSpan) => receiver.spans.find((p) => p.spanId === s.parentSpanId);
  const ancestors = (s: ReceivedSpan): ReceivedSpan[] => {
    const up = parentOf(s);
    return up ? [up, ...ancestors(up)] : [];
  };
  const under = (child: ReceivedSpan, parent: ReceivedSpan) => ancestors(child).includes(parent);

  it('makes one trace of a create: Slack request, accept, the job across the queue, handler, cloud and Slack calls, answer', () => {
    expect(receiver.unexpected).toEqual([]);
    const accept = named('gpuops.accept').find((s) => s.attributes['gpuops.request.id'] === createJobId);
    expect(
      accept,
      `spans received: ${[...new Set(receiver.spans.map((s) => s.name))].join(', ')}`,
    ).toBeDefined();
    const trace = receiver.spans.filter((s) => s.traceId === accept!.traceId);
    const root = trace.find((s) => s.parentSpanId === undefined)!;
    expect(root.name).toBe('gpuops.slack.command');
    expect(root.attributes['slack.command']).toBe('/gpu');
    expect(parentOf(accept!)).toBe(root);
    expect(accept!.attributes).toMatchObject({
      'gpuops.outcome': 'queued',
      'gpuops.request.id': createJobId,
    });

    // The job, in a worker, continues the request's trace: through the context BullMQ stored in Redis.
    expect(createTraceparent).toContain(accept!.traceId);
    const jobSpans = named('gpuops.job create').filter((s) => s.attributes['gpuops.job.id'] === createJobId);
    expect(jobSpans).toHaveLength(1);
    const jobSpan = jobSpans[0]!;
    expect(jobSpan.traceId).toBe(root.traceId);
    expect(under(jobSpan, root)).toBe(true);
    expect(under(jobSpan, accept!)).toBe(true);
    expect(ancestors(jobSpan).map((s) => s.name)).toContain('process gpuops');
    expect(jobSpan.attributes).toMatchObject({ 'gpuops.job.id': createJobId, 'gpuops.outcome': 'done' });

    const handler = trace.find((s) => s.name === 'gpuops.handler create')!;
    expect(parentOf(handler)).toBe(jobSpan);
    // The job's cloud calls are the handler's (the catalogue the accept step asked for is a job of its own).
    const cloudCalls = trace.filter((s) => s.name.startsWith('gpuops.cloud ') && under(s, jobSpan));
    expect(cloudCalls.map((s) => s.name)).toContain('gpuops.cloud createInstance');
    for (const call of cloudCalls) expect(under(call, handler), call.name).toBe(true);
    const created = cloudCalls.find((s) => s.name === 'gpuops.cloud createInstance')!;
    expect(created.attributes['http.response.status_code']).toBeGreaterThanOrEqual(200);
    expect(created.attributes['http.response.status_code']).toBeLessThan(300);

    // The "Queued" post in the listener's part, the edits in the job's, the final one in the answer's.
    const slackCalls = trace.filter((s) => s.name.startsWith('gpuops.slack.api '));
    expect(slackCalls.some((s) => s.name === 'gpuops.slack.api chat.postMessage' && under(s, root))).toBe(
      true,
    );
    expect(slackCalls.some((s) => s.name === 'gpuops.slack.api chat.update' && under(s, jobSpan))).toBe(true);
    const answer = trace.find((s) => s.name === 'gpuops.answer')!;
    expect(parentOf(answer)).toBe(jobSpan);
    expect(answer.attributes['gpuops.outcome']).toBe('done');
    expect(slackCalls.some((s) => s.name === 'gpuops.slack.api chat.update' && parentOf(s) === answer)).toBe(
      true,
    );
  });

  it('marks a refused create failed in its trace: the cloud call with its status, the job and the answer', () => {
    expect(refusedText).toContain(REFUSED);
    const refusedJobId = named('gpuops.accept').find(
      (s) =>
        s.attributes['gpuops.command.kind'] === 'create' && s.attributes['gpuops.request.id'] !== createJobId,
    )?.attributes['gpuops.request.id'];
    const jobSpan = named('gpuops.job create').find((s) => s.attributes['gpuops.job.id'] === refusedJobId)!;
    expect(jobSpan.attributes).toMatchObject({ 'gpuops.outcome': 'failed', 'gpuops.job.attempt': 1 });
    const inJob = receiver.spans.filter((s) => s.traceId === jobSpan.traceId && under(s, jobSpan));
    const refused = inJob.find((s) => s.name === 'gpuops.cloud createInstance')!;
    expect(refused.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': '400' });
    const answer = inJob.find((s) => s.name === 'gpuops.answer')!;
    expect(answer.attributes['gpuops.outcome']).toBe('failed');
    expect(inJob.some((s) => s.name === 'gpuops.slack.api chat.update' && parentOf(s) === answer)).toBe(true);
    expect(ancestors(jobSpan).at(-1)?.name).toBe('gpuops.slack.command');
  });

  it('names the service and sends the collector its headers', () => {
    expect(receiver.headers.length).toBeGreaterThan(0);
    expect(receiver.spans.every((s) => s.resource['service.name'] === 'gpuops-traced')).toBe(true);
    expect(receiver.headers.every((h) => h['x-collector-key'] === COLLECTOR_KEY)).toBe(true);
  });

  it('puts no token, secret, typed key or typed name in any span', () => {
    const keyTrace = named('gpuops.accept').find((s) => s.attributes['gpuops.command.kind'] === 'keys.add');
    expect(keyTrace).toBeDefined();
    expect(named('gpuops.job keys.add')).toHaveLength(1);
    const leaks = receiver.spans.flatMap((s) =>
      s.allValues.filter((v) => secrets.some((secret) => v.includes(secret))).map((v) => `${s.name}: ${v}`),
    );
    expect(leaks).toEqual([]);
  });
});

describe('traces across processes', () => {
  let receiver: OtlpReceiver;
  let stack: BotStack | undefined;
  let worker: GpuopsProcess | undefined;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The web role here, the worker role in a process of its own: only Redis joins them.
    stack = await startBotStack({
      workers: 0,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gpuops-web' },
    });
    worker = spawnGpuops(['worker'], {
      ...stack.env(),
      GPUOPS_POLICY: UNPRICED_POLICY,
      OTEL_SERVICE_NAME: 'gpuops-worker',
    });
    await worker.waitForLog((r) => r.msg === 'gpuops ready', 60_000);
    const ts = await channelRequest(stack, 'create split-1 h100-hgx-80gb.1x');
    await finalMessage(stack, ts, 'Done', undefined, 60_000);
    // SIGTERM, as an orchestrator stops it: the worker sends its last spans before it exits.
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    await stack.close();
    stack = undefined;
  }, 120_000);
  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
    await receiver?.close();
  });

  it("continues the web process's trace in the worker process", () => {
    expect(receiver.unexpected).toEqual([]);
    const accept = receiver.spans.find(
      (s) => s.name === 'gpuops.accept' && s.attributes['gpuops.command.kind'] === 'create',
    )!;
    expect(accept.resource['service.name']).toBe('gpuops-web');
    const jobSpan = receiver.spans.find((s) => s.name === 'gpuops.job create')!;
    expect(jobSpan.resource['service.name']).toBe('gpuops-worker');
    expect(jobSpan.traceId).toBe(accept.traceId);
    const byId = new Map(receiver.spans.map((s) => [s.spanId, s]));
    const chain: string[] = [];
    for (let s = byId.get(jobSpan.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? ''))
      chain.push(s.name);
    expect(chain).toEqual(['process gpuops', 'add gpuops.create', 'gpuops.accept', 'gpuops.slack.command']);
    const cloud = receiver.spans.filter(
      (s) => s.traceId === accept.traceId && s.name === 'gpuops.cloud createInstance',
    );
    expect(cloud).toHaveLength(1);
    expect(cloud[0]!.resource['service.name']).toBe('gpuops-worker');
  });
});

describe('Slack calls in a trace', () => {
  it("carries Slack's error code on the call's span, and the SDK still gets the answer", async () => {
    const receiver = await OtlpReceiver.start();
    const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
    const tracing = await startTracing(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }),
      createLogger({ level: 'silent' }),
    );
    try {
      const counted: string[] = [];
      const client = new WebClient(BOT_TOKEN, {
        slackApiUrl: slack.apiUrl,
        fetch: traceSlackCalls(countSlackErrors((method, error) => counted.push(`${method} ${error}`))),
        retryConfig: { retries: 0 },
      });
      slack.failWith('chat.postMessage', 'not_in_channel');
      await expect(client.chat.postMessage({ channel: 'C0GPU', text: 'first' })).rejects.toMatchObject({
        data: { ok: false, error: 'not_in_channel' },
      });
      const posted = await client.chat.postMessage({ channel: 'C0GPU', text: 'second' });
      expect(posted.ok).toBe(true);
      expect(counted).toEqual(['chat.postMessage not_in_channel']);
    } finally {
      await tracing?.shutdown();
      await slack.close();
      await receiver.close();
    }
    const calls = receiver.spans.filter((s) => s.name === 'gpuops.slack.api chat.postMessage');
    expect(calls.map((s) => s.attributes['slack.error'])).toEqual(['not_in_channel', undefined]);
    expect(calls.every((s) => s.attributes['http.response.status_code'] === 200)).toBe(true);
  });
});

describe('tracing settings', () => {
  it('is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and names the service gpuops by default', async () => {
    const config = parseConfig({});
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(config.OTEL_SERVICE_NAME).toBe('gpuops');
    expect(await startTracing(config, createLogger({ level: 'silent' }))).toBeUndefined();
    expect(tracingOn()).toBe(false);
  });

  it('loads the OpenTelemetry SDK only on demand, from the composition root, so a bot without traces never does', () => {
    const src = new URL('../../src/', import.meta.url).pathname;
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const loads = walk(src).flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /^\s*import\s+(?!type\b)[^;]*?from\s+'(@opentelemetry\/[^']+|bullmq-otel)'/gm,
        ),
      ].map((m) => `${relative(src, file)} imports ${m[1]}`),
    );
    expect(loads).toEqual([]);
    const dynamic = walk(src).filter((file) =>
      /import\('(@opentelemetry\/|bullmq-otel)/.test(readFileSync(file, 'utf8')),
    );
    expect(dynamic.map((f) => relative(src, f))).toEqual(['app/tracing.ts']);
  });

  it('names the root span by what Slack delivered, with our own ids only, never what was typed or chosen', () => {
    const spans = [
      { command: '/gpu', text: `create ${INSTANCE} h100-hgx-80gb.1x`, user_id: 'U0ADA' },
      { type: 'block_actions', actions: [{ action_id: 'approval.approve', value: 'secret-value' }] },
      { type: 'view_submission', view: { callback_id: 'form.create', state: { values: { a: 'typed' } } } },
      {
        type: 'event_callback',
        event: { type: 'function_executed', function: { callback_id: 'create_instance' } },
      },
      { type: 'event_callback', event: { type: 'app_home_opened', user: 'U0ADA' } },
    ].map((body) => requestSpanOf(body));
    expect(spans).toEqual([
      { name: 'gpuops.slack.command', attributes: { 'slack.command': '/gpu' } },
      { name: 'gpuops.slack.action', attributes: { 'slack.action_id': 'approval.approve' } },
      {
        name: 'gpuops.slack.submission',
        attributes: { 'slack.type': 'view_submission', 'slack.callback_id': 'form.create' },
      },
      { name: 'gpuops.slack.step', attributes: { 'slack.callback_id': 'create_instance' } },
      { name: 'gpuops.slack.home', attributes: {} },
    ]);
  });

  it('refuses malformed collector headers by name, without echoing them', () => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'secret-without-a-key' })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS: expected comma-separated key=value pairs/,
    );
    try {
      parseConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'secret-without-a-key' });
    } catch (err) {
      expect((err as Error).message).not.toContain('secret-without-a-key');
    }
  });
});
