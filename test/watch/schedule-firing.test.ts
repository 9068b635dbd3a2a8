import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveSchedule } from '../../src/store/schedules.js';
import { createWatchWorker } from '../../src/watch/create-watch-worker.js';
import { schedulerIdOf, watchScheduleTimers } from '../../src/watch/schedule-timers.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// A power schedule's timer lives in Redis as a BullMQ job scheduler: made while no watch worker runs
// (a restart), it fires once two "replicas" come up, and each firing acts once however many workers
// compete for it. The parser refuses a pattern this frequent; the timer takes it, so the test waits
// for seconds, not for 20:00.

const CHANNEL = 'C0GPU';
const ID = 's-0000aa';

describe('a power schedule across a restart and two replicas', () => {
  let stack: BotStack;
  let connection: Redis;
  const replicas: Worker[] = [];
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { schedulers: false } });
    // The replicas share the stack's own Redis, as a scaled-out deployment shares one.
    connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    await Promise.all(replicas.map((w) => w.close()));
    connection?.disconnect();
    await stack?.close();
  });

  it('fires from Redis after a restart, and stops the machine once with two workers', async () => {
    const projectId = stack.sim.info.projectId;
    const machine = await stack.cloud.createInstance(
      { name: 'gpu-a', type: 'h100-hgx-80gb.1x' },
      { projectId },
    );
    await until('gpu-a running', async () =>
      (await stack.cloud.getInstance({ id: machine.id })).state === 'running' ? true : undefined,
    );
    // Every watch worker goes away; the schedule is made meanwhile.
    await Promise.all(stack.watch!.workers.map((w) => w.close()));
    const timers = watchScheduleTimers(stack.watch!.queue);
    await saveSchedule(stack.store, {
      id: ID,
      action: 'stop',
      target: { instance: machine.id, name: 'gpu-a' },
      when: 'every second',
      pattern: '* * * * * *',
      tz: 'UTC',
      channelId: CHANNEL,
      projectId,
      ownerId: 'U0ADA',
      createdAt: Date.now(),
    });
    await timers.upsert({ id: ID, pattern: '* * * * * *', tz: 'UTC' });
    expect(await stack.watch!.queue.getJobScheduler(schedulerIdOf(ID))).toMatchObject({
      pattern: '* * * * * *',
    });

    // Two replicas come up, on a connection of their own, and find the timer in Redis.
    const firings: string[] = [];
    for (let i = 0; i < 2; i++) {
      const worker = createWatchWorker(connection, stack.watch!.deps, {
        prefix: stack.queuePrefix,
        concurrency: 8,
      });
      worker.on('completed', (job) => {
        if (job.name === 'watch.schedule') firings.push(String(job.id));
      });
      replicas.push(worker);
    }
    const alarms = () =>
      stack.slack
        .channelView(CHANNEL)
        .filter((m) => String(m.text).startsWith(`:alarm_clock: Schedule \`${ID}\``));
    await until('gpu-a stopped', async () =>
      (await stack.cloud.getInstance({ id: machine.id })).state === 'stopped' ? true : undefined,
    );
    // One more firing after it stopped, then the timer goes.
    const seen = firings.length;
    await until('a firing after the stop', () => (firings.length > seen ? true : undefined));
    expect(await timers.remove(ID)).toBe(true);
    // Each firing ran on one worker only, and told the channel once.
    await until('a notice per firing', () => (alarms().length === firings.length ? true : undefined));
    expect(new Set(firings).size).toBe(firings.length);

    // One stop, however many firings and workers: the first firing's request; the later ones found the
    // machine stopping or stopped and said so.
    const audit = (await stack.guardrails.audit.latest(100)).filter((e) => e.parameters?.schedule === ID);
    expect(audit.map((e) => e.outcome)).toEqual(['queued']);
    expect(alarms()[0]!.text).toContain('fired: stopping gpu-a as <@U0ADA>.');
    expect(
      alarms()
        .slice(1)
        .every((m) => String(m.text).includes('fired: nothing to do.')),
    ).toBe(true);
    await until('the stop done', () =>
      stack.slack.channelView(CHANNEL).some((m) => String(m.text).startsWith('Done: /gpu stop gpu-a'))
        ? true
        : undefined,
    );
    expect(
      stack.slack.channelView(CHANNEL).filter((m) => String(m.text).includes('/gpu stop gpu-a')),
    ).toHaveLength(1);
  });
});
