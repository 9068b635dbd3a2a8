import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { listSchedules, type Schedule, saveSchedule } from '../../src/store/schedules.js';
import type { WatchJobData } from '../../src/watch/watch-queue.js';
import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { type Cell, cellsOf, type TrickId } from './matrix.js';
import {
  ADA,
  CHANNEL,
  freshViewer,
  nextOperator,
  OPS,
  runCell,
  type Seen,
  startSecurityStack,
  TRICK_PERSON,
} from './security-kit.js';

// The security matrix at a power schedule's firing: no signed request, no person at the keyboard; the
// schedule acts as its owner, whose standing and own roles are read again when it fires. A trick that
// worked would stop a machine; a refusal is told in the schedule's channel and kept on the audit trail.

const BOX = 'sched-box';
let boxId = '';
let made = 0;
let firings = 0;

/** A schedule as `/gpu schedule stop …` stores it, owned by `ownerId`, stopping BOX or a tag's machines. */
async function schedule(
  stack: BotStack,
  ownerId: string,
  target: Schedule['target'] = { instance: boxId, name: BOX },
  channelId = CHANNEL,
): Promise<Schedule> {
  const s: Schedule = {
    id: `s-5ec000000${String(++made).padStart(3, '0')}`,
    action: 'stop',
    target,
    when: 'weekdays 20:00',
    pattern: '0 20 * * 1-5',
    tz: 'UTC',
    channelId,
    projectId: stack.sim.info.projectId,
    ownerId,
    createdAt: Date.now(),
  };
  expect(await saveSchedule(stack.store, s)).not.toBe(false);
  return s;
}

/** One firing through the real watch queue, as the job scheduler would add it at 20:00. */
async function fire(stack: BotStack, id: string): Promise<Record<string, unknown>> {
  const queue = stack.watch!.queue;
  const jobId = `security-fire-${++firings}`;
  const data: WatchJobData = { v: 1, job: 'schedule', id };
  await queue.add('watch.schedule', data, { jobId });
  return until(`firing ${jobId}`, async () => {
    const job = await queue.getJob(jobId);
    if (!job?.finishedOn) return undefined;
    expect(job.failedReason).toBeUndefined();
    return JSON.parse(String(job.returnvalue)) as Record<string, unknown>;
  });
}

/** What the schedule's channel was told about this firing. */
async function told(stack: BotStack, s: Pick<Schedule, 'id' | 'channelId'>): Promise<string> {
  const alarm = await until(`the channel told about ${s.id}`, () =>
    stack.slack
      .channelView(s.channelId)
      .find((m) => String(m.text).startsWith(`:alarm_clock: Schedule \`${s.id}\``)),
  );
  return String(alarm.text);
}

async function boxRunning(stack: BotStack): Promise<void> {
  await until(`${BOX} running`, async () =>
    (await stack.cloud.getInstance({ id: boxId })).state === 'running' ? true : undefined,
  );
}

type Attempt = (stack: BotStack, cell: Cell, baseline: () => Promise<void>) => Promise<Seen>;

const PAUSED =
  /is paused and acts no more: its owner (is now a guest account|now belongs to another workspace|has been deactivated)/;

const SCHEDULE: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack, _cell, baseline) => {
    const owner = nextOperator();
    const s = await schedule(stack, owner, { tag: { key: 'team', value: 'sec' } });
    // Later someone else's machine gets the tag: the operator's schedule must not stop it.
    const theirs = await stack.cloud.createInstance({
      name: 'ada-sec',
      type: 'rtx-a5000-24gb.1x',
      tags: { team: 'sec' },
    });
    await recordInstanceOwner(stack.store, theirs.id, ADA);
    await baseline();
    expect(await fire(stack, s.id)).toMatchObject({ submitted: 0 });
    return {
      sentence: await told(stack, s),
      pattern: /its owner's to operate \(left alone: ada-sec\)/,
      actor: owner,
    };
  },
  ...Object.fromEntries(
    (['guest', 'other-workspace', 'deactivated'] as const).map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const owner = TRICK_PERSON[trick];
        const s = await schedule(stack, owner);
        expect(await fire(stack, s.id)).toMatchObject({ paused: true, submitted: 0 });
        const paused = async () => {
          const now = (await listSchedules(stack.store, { channelId: CHANNEL })).find((x) => x.id === s.id);
          expect(now?.paused, 'the schedule is paused').toBeTruthy();
        };
        return { sentence: await told(stack, s), pattern: PAUSED, actor: owner, checks: [paused] };
      },
    ]),
  ),
  'channel-grant': async (stack) => {
    // A viewer types a schedule in a channel that grants operator. It would act later, typed nowhere,
    // so it is made on the viewer's own roles: refused.
    const viewer = freshViewer();
    const { answer } = await stack.command(`schedule stop ${BOX} weekdays 20:00`, {
      userId: viewer,
      channelId: OPS,
    });
    const sentence = String((await answer()).text);
    // One stored for that channel anyway (as an older gpuops made them) fires on the owner's role.
    const stored = await schedule(stack, viewer, { instance: boxId, name: BOX }, OPS);
    const firing = async () => {
      expect(await fire(stack, stored.id)).toMatchObject({ refused: true, submitted: 0 });
      expect(await told(stack, stored)).toMatch(/who may no longer do it/);
    };
    return {
      sentence,
      pattern: /on your own roles \(a channel's role does not count then\)/,
      actor: viewer,
      checks: [firing],
    };
  },
};

describe('security matrix: schedule firings', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startSecurityStack({ watch: { schedulers: false } });
    boxId = (await stack.cloud.createInstance({ name: BOX, type: 'rtx-a5000-24gb.1x' })).id;
    await boxRunning(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each(cellsOf(['schedule']))('$name', async (cell) => {
    const attempt = SCHEDULE[cell.trick];
    if (!attempt) throw new Error(`no attempt written for ${cell.door} × ${cell.trick}`);
    await runCell(stack, cell, (baseline) => attempt(stack, cell, baseline));
    await boxRunning(stack);
  });
});
