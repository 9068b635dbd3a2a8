import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/gpuops-process.js';
import type { Bot, Rig, Sent } from './support/reliability-rig.js';
import { finalOf, messageOf, slash, startRig, TYPE } from './support/reliability-rig.js';

// One noisy user cannot starve the rest: while one person floods 500 commands in a minute (here in
// about 10 s) and another channel fills with commands from many people, everyone else sends at a
// normal rate (first alone, for their usual latency). The flooders are slowed to the policy's rate_limits with an answer that says when to
// try again; the others are all accepted, and their acknowledgement times are recorded.

const FLOOD = 500;
const FLOOD_MS = 10_000;
const PER_USER = 20;
const PER_CHANNEL = 60;
const CALM_USERS = 10;
const CALM_EVERY_MS = 1_000;

const LIMITED =
  /the most gpuops takes from one (person|channel), so nothing was started\. Please try again in \d+ s/;

interface Answer {
  readonly sent: Sent;
  readonly text: string;
}

function answerOf(sent: Sent): Answer {
  const text = sent.response.text === '' ? '' : String((sent.response.json() as { text?: string }).text);
  return { sent, text };
}

/** `count` commands spread evenly over `overMs`, each from `user(i)`, all in flight together. */
async function burst(
  rig: Rig,
  url: string,
  count: number,
  overMs: number,
  target: (i: number) => { channelId: string; userId: string; text?: string },
): Promise<Answer[]> {
  const started = Date.now();
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await sleep(Math.max(0, started + (i * overMs) / count - Date.now()));
      const { text = 'ls', ...where } = target(i);
      return answerOf(await slash(rig, url, text, where));
    }),
  );
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

describe('one noisy user or channel cannot starve the rest', () => {
  let rig: Rig;
  let bot: Bot;

  beforeAll(async () => {
    rig = await startRig();
    const policy = await rig.policy(
      `rate_limits:\n  per_user: { requests: ${PER_USER}, per: 1m }\n  per_channel: { requests: ${PER_CHANNEL}, per: 1m }\n`,
    );
    bot = await rig.start('all', { env: { GPUOPS_POLICY: policy }, workerConcurrency: 8 });
    // Creates are priced from the cached catalogue; before it they would wait for an approver.
    await rig.catalogue();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('slows the flooders with a clear answer while everyone else is accepted', async () => {
    // The others' usual latency: the same calm traffic for 5 s with nobody flooding.
    const usual = await burst(rig, bot.url, CALM_USERS * 5, 5_000, (i) => ({
      channelId: `C0CALM${i % CALM_USERS}`,
      userId: `U0CALM${i % CALM_USERS}`,
      text: `create usual-${i} ${TYPE}`,
    }));
    for (const a of usual) expect(a.text).not.toMatch(LIMITED);
    const [flooder, crowd, calm] = await Promise.all([
      // One person, 500 commands.
      burst(rig, bot.url, FLOOD, FLOOD_MS, () => ({ channelId: 'C0FLOOD', userId: 'U0FLOODER' })),
      // One channel, 150 people with a command each.
      burst(rig, bot.url, 150, FLOOD_MS, (i) => ({ channelId: 'C0CROWD', userId: `U0CROWD${i}` })),
      // Ten people in ten channels, a create a second each.
      burst(rig, bot.url, CALM_USERS * (FLOOD_MS / CALM_EVERY_MS), FLOOD_MS, (i) => ({
        channelId: `C0CALM${i % CALM_USERS}`,
        userId: `U0CALM${i % CALM_USERS}`,
        text: `create calm-${i} ${TYPE}`,
      })),
    ]);
    for (const a of [...flooder, ...crowd, ...calm]) expect(a.sent.response.status).toBe(200);

    // The flooder: its first PER_USER taken, every other one told it is over its limit and when to retry.
    const floodTaken = flooder.filter((a) => !LIMITED.test(a.text));
    const floodSlowed = flooder.filter((a) => LIMITED.test(a.text));
    expect(floodTaken).toHaveLength(PER_USER);
    expect(floodSlowed).toHaveLength(FLOOD - PER_USER);
    for (const a of floodSlowed) expect(a.text).toMatch(/^You have sent 20 requests in a minute/);
    // Taken: looked up, or (the same `ls` again within 30 s) found to be the same request as before.
    for (const a of floodTaken) expect(a.text).toMatch(/Looking that up|Already on it: that same request/);
    // The crowded channel: PER_CHANNEL taken, the rest told the channel is over its limit.
    const crowdTaken = crowd.filter((a) => !LIMITED.test(a.text));
    expect(crowdTaken).toHaveLength(PER_CHANNEL);
    for (const a of crowd.filter((x) => LIMITED.test(x.text))) {
      expect(a.text).toMatch(/^This channel has sent 60 requests in a minute/);
    }
    // Everyone else: all accepted, each create made its machine and said so in its message.
    for (const a of calm) expect(a.text).not.toMatch(LIMITED);
    for (const a of calm) {
      const message = await finalOf(rig, a.sent.channelId, await messageOf(rig, a.sent, 30_000), 60_000);
      expect(message.text).toMatch(/^Done: .*calm-\d+ is running/);
    }
    const looked = [...floodTaken, ...crowdTaken].filter((a) => /Looking that up/.test(a.text));
    for (const a of looked) {
      const post = await rig.responses.waitForPost((p) => a.sent.responseUrl.endsWith(p.id), 60_000);
      expect(String(post.body.text)).toMatch(/Instances \(\d+\)/);
    }
    // Nothing left queued: the refused made no job.
    await until(
      async () => ((await rig.pendingRequests()) === 0 ? true : undefined),
      'the queue to empty',
      30_000,
    );

    const ms = (list: readonly Answer[]) =>
      list.map((a) => Math.round(a.sent.response.elapsedMs)).sort((x, y) => x - y);
    const calmMs = ms(calm);
    const floodMs = ms(flooder);
    for (const t of calmMs) expect(t).toBeLessThan(3_000);
    const summary = (xs: readonly number[]) =>
      `p50 ${percentile(xs, 50)} ms, p95 ${percentile(xs, 95)} ms, max ${xs.at(-1)} ms`;
    console.info(
      `[reliability] noisy user: ${FLOOD} commands from one person and 150 from one channel in ${FLOOD_MS / 1000} s, ` +
        `${calm.length} from ${CALM_USERS} others; flooder ${floodTaken.length} taken, ${floodSlowed.length} slowed; ` +
        `channel ${crowdTaken.length} taken, ${crowd.length - crowdTaken.length} slowed; others all ${calm.length} taken, ` +
        `acknowledged in ${summary(calmMs)} (${summary(ms(usual))} with nobody flooding; the flooder's answers ${summary(floodMs)})`,
    );
  }, 120_000);
});
