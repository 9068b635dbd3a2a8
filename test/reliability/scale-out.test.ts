import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAME, QUEUE_PREFIX } from '../../src/jobs/queue.js';
import { until } from '../support/gpuops-process.js';
import type { Bot, Rig, Sent } from './support/reliability-rig.js';
import { finalOf, finals, messageOf, slash, startRig, TYPE } from './support/reliability-rig.js';

// Two listeners and three workers on one Redis, each a gpuops of its own (as `gpuops web` and
// `gpuops worker` compose them) with its own connections. Requests arrive at either listener; the
// work spreads over all three workers, and no job and no Slack message happens twice.

const LANES = 30;

describe('two listeners and three workers on one Redis', () => {
  let rig: Rig;
  let webs: Bot[];
  let workers: Bot[];

  beforeAll(async () => {
    rig = await startRig({ sim: { transitionMs: 100 } });
    webs = await Promise.all([rig.start('web'), rig.start('web')]);
    workers = await Promise.all([0, 1, 2].map(() => rig.start('worker', { workerConcurrency: 4 })));
    await rig.catalogue();
  });

  afterAll(async () => {
    await rig?.close();
  });

  it('spreads the work over every worker and runs each job and each message once', async () => {
    const channel: Array<{ sent: Sent; ts: string }> = [];
    const ephemeral: Sent[] = [];
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        const name = `sc-${lane}`;
        const channelId = `C0SC${lane}`;
        const plan = [`create ${name} ${TYPE}`, 'ls', `stop ${name}`, `show ${name}`, `start ${name}`];
        for (const [k, text] of plan.entries()) {
          const web = webs[(lane + k) % webs.length]!;
          const sent = await slash(rig, web.url, text, { channelId, userId: `U0S${lane}X${k}` });
          expect(sent.response.status).toBe(200);
          if (text === 'ls' || text.startsWith('show')) {
            await rig.responses.waitForPost((p) => sent.responseUrl.endsWith(p.id), 30_000);
            ephemeral.push(sent);
            continue;
          }
          const ts = await messageOf(rig, sent);
          const message = await finalOf(rig, channelId, ts, 30_000);
          expect(message.text, text).toMatch(/^Done:/);
          channel.push({ sent, ts });
        }
      }),
    );
    await until(async () => (await rig.pendingRequests()) === 0, 'the queue to empty', 20_000);

    // Every worker did some of it, and no job was done twice.
    const done = workers.map((w) =>
      w.logLines
        .map((l) => JSON.parse(l) as { msg?: string; jobId?: string })
        .filter((r) => r.msg === 'job done')
        .map((r) => r.jobId!),
    );
    for (const [i, ids] of done.entries()) expect(ids.length, `worker ${i + 1}`).toBeGreaterThan(0);
    const all = done.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(LANES * 5);

    // One message per channel request, each with one final answer; one private answer per lookup.
    for (const { sent, ts } of channel) {
      expect(finals(rig.slack.message(sent.channelId, ts)!)).toBe(1);
    }
    for (let lane = 0; lane < LANES; lane++) {
      expect(rig.slack.channelView(`C0SC${lane}`)).toHaveLength(3);
    }
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(channel.length);
    for (const sent of ephemeral) expect(rig.responses.postsTo(sent.responseUrl)).toHaveLength(1);
    for (let lane = 0; lane < LANES; lane++) {
      expect(rig.sim.control.createCount('createInstance', `sc-${lane}`)).toBe(1);
    }
    // Both listeners took requests (the lanes alternate between them) and counted them.
    for (const web of webs) {
      const { body } = await web.metrics.render();
      expect(body).toMatch(/gpuops_commands_total\{subcommand="create"\} \d+/);
    }
    // Each of the three workers set up the catalogue refresh schedule; it still ran once.
    const queue = new Queue(QUEUE_NAME, { connection: rig.redis, prefix: QUEUE_PREFIX });
    try {
      const refreshes = (await queue.getJobs(['completed', 'active', 'failed'])).filter(
        (j) => j?.name === 'catalog.refresh',
      );
      expect(refreshes).toHaveLength(1);
    } finally {
      await queue.close();
    }
    console.info(
      `[reliability] scale-out: ${all.length} jobs through 2 listeners; workers did ${done
        .map((ids) => ids.length)
        .join(' / ')}; no job or message twice`,
    );
  });
});
