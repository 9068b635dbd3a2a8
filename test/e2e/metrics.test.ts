import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Instance } from '../../src/cloud/index.js';
import type { StoredFile } from '../../src/devkit/fake-slack-api.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { pngHeader } from '../support/png.js';
import { until as waitUntil } from '../support/until.js';
import { CHANNEL, channelRequest, expectCleanSlack, finalMessage, listenerAnswer } from './answers.js';

// /gpu metrics and /gpu metrics query against the simulator's real Prometheus: a PNG chart uploaded
// (files upload v2) in the thread of the job's message, with the text summary, which the message ends with.

const until = <T>(what: string, read: () => Promise<T | undefined>) => waitUntil(what, read, 30_000, 200);

/** The chart files shared in the thread of a job's message. */
function chartsIn(stack: BotStack, ts: string): StoredFile[] {
  return [...stack.slack.files.values()].filter((f) => f.channel === CHANNEL && f.threadTs === ts);
}

describe.each(['A', 'B', 'C'] as const)('/gpu metrics end to end, shape %s', (shape) => {
  let stack: BotStack;
  let train: Instance;

  beforeAll(async () => {
    stack = await startBotStack({ shape, metrics: true });
    train = await stack.cloud.createInstance({ name: 'train-1', type: 'h100-hgx-80gb.1x' });
    await stack.cloud.createInstance({ name: 'cpu-1', type: 'cpu.16x' });
    await until('train-1 running', async () =>
      (await stack.cloud.getInstance({ id: train.id })).state === 'running' ? true : undefined,
    );
    // Prometheus shows its first sample about 6 s after start: poll for it through the bot's own client.
    const client = stack.snapshots!.client;
    await until('train-1 in Prometheus', async () => {
      const answer = await client.query(`count(DCGM_FI_DEV_GPU_UTIL{instance_name="train-1"})`);
      return answer.data.resultType === 'vector' && answer.data.result.length > 0 ? true : undefined;
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('posts the GPU chart of an instance by name in the thread, with the summary in the message', async () => {
    const ts = await channelRequest(stack, 'metrics train-1 --range 15m');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain(
      'GPU utilisation of train-1 over the last 15m: the chart is in the thread.',
    );
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toMatch(/```train-1 \([0-9a-f]{8}\) · GPU utilisation \(%\), .* UTC \(15m\)\\nGPU 0 /);
    expect(blocks).toContain('requested by <@U0ADA>');

    const charts = chartsIn(stack, ts);
    expect(charts).toHaveLength(1);
    const chart = charts[0]!;
    expect(chart.filename).toBe('metrics-train-1-15m.png');
    expect(chart.completed).toBe(true);
    expect(pngHeader(chart.bytes!)).toEqual({ width: 1000, height: 560 });
    expect(chart.title).toContain('train-1');
    expect(chart.initialComment).toMatch(/^```train-1 .*GPU 0 .*mean/s);
    expect(stack.slack.thread(CHANNEL, ts)).toHaveLength(1);
    expect(stack.slack.callsTo('files.getUploadURLExternal')).toHaveLength(1);
    expectCleanSlack(stack);
  });

  it('takes the instance id too', async () => {
    const ts = await channelRequest(stack, `metrics ${train.id}`);
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain('GPU utilisation of train-1 over the last 1h');
    expect(chartsIn(stack, ts).map((f) => f.filename)).toEqual(['metrics-train-1-1h.png']);
  });

  it('says clearly when an instance has no metrics yet, and posts no chart', async () => {
    const ts = await channelRequest(stack, 'metrics cpu-1');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain('No metrics yet for cpu-1 in the last 1h: it is');
    expect(chartsIn(stack, ts)).toEqual([]);
  });

  it('names the instances there are for an unknown one, to the requester alone', async () => {
    const since = stack.slack.mark();
    expect(await listenerAnswer(stack, 'metrics nope')).toMatch(
      /^No instance "nope" in this project\. This project has: /,
    );
    expect(stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= since)).toEqual([]);
  });

  it('charts a PromQL range query titled with the expression', async () => {
    const ts = await channelRequest(stack, 'metrics query avg(DCGM_FI_DEV_GPU_UTIL) --range 15m');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain('1 series over the last 15m: the chart is in the thread.');
    expect(JSON.stringify(message.blocks)).toContain('```avg(DCGM_FI_DEV_GPU_UTIL), ');
    const [chart] = chartsIn(stack, ts);
    expect(chart?.title).toBe('avg(DCGM_FI_DEV_GPU_UTIL)');
    expect(chart?.filename).toBe('metrics-query-15m.png');
    expect(pngHeader(chart!.bytes!).width).toBe(1000);
    expectCleanSlack(stack);
  });

  it('explains a query Prometheus cannot parse, at once and without retrying', async () => {
    const ts = await channelRequest(stack, 'metrics query sum((DCGM_FI_DEV_GPU_UTIL');
    const message = await finalMessage(stack, ts, 'Failed');
    expect(message.text).toContain('Prometheus could not parse the query');
    expect(message.history.some((v) => String(v.text).includes('Retrying'))).toBe(false);
    expect(chartsIn(stack, ts)).toEqual([]);
  });
});

describe('/gpu metrics without metrics configured', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
    await stack.cloud.createInstance({ name: 'train-1', type: 'h100-hgx-80gb.1x' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('says which settings turn metrics on, for both forms', async () => {
    const expected =
      'Metrics are not configured: set METRICS_URL and METRICS_API_KEY (or the METRICS_CLIENT_* settings).';
    const ts = await channelRequest(stack, 'metrics train-1');
    expect((await finalMessage(stack, ts, 'Failed')).text).toContain(expected);
    const query = await channelRequest(stack, 'metrics query up');
    expect((await finalMessage(stack, query, 'Failed')).text).toContain(expected);
    expect(stack.slack.files.size).toBe(0);
    expectCleanSlack(stack);
  });
});
