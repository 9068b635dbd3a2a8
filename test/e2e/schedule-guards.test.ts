import { createHash } from 'node:crypto';
import { LogLevel, WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { enqueueRequest, requestJobId } from '../../src/requests/enqueue-request.js';
import { slackRequestPorts } from '../../src/slack/request-ports.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { getSchedule, listSchedules, type Schedule, saveSchedule } from '../../src/store/schedules.js';
import type { WatchJobData } from '../../src/watch/watch-queue.js';
import { BOT_TOKEN, type BotStack, startBotStack } from '../support/bot-stack.js';
import { privateAnswer, settled, shown } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL } from './answers.js';
import { askForApproval, click, finished, primeCatalog } from './guardrails-kit.js';

// What keeps a power schedule inside what was agreed when it was made: its id never takes another
// schedule's place; a firing that would start more than was agreed asks an approver again, a start
// gets the lease a typed start gets, a tag acts on its owner's machines only, and a schedule whose
// owner may no longer use gpuops is paused. Real Redis, the worker and the watch worker, the fake
// Slack, signed requests and clicks, and the simulator over HTTP.

const USERS = [
  { id: 'U0ADA', name: 'ada', tz: 'America/New_York' },
  { id: 'U0BOB', name: 'bob', tz: 'America/New_York' },
  { id: 'U0GUS', name: 'gus', tz: 'America/New_York', is_restricted: true },
];

const theirs = (id: string): Schedule => ({
  id,
  action: 'start',
  target: { instance: 'i-theirs', name: 'their-box' },
  when: 'daily 09:00',
  pattern: '0 9 * * *',
  tz: 'UTC',
  channelId: 'C0THEIRS',
  projectId: 'p-theirs',
  ownerId: 'U0THEM',
  createdAt: 1,
});

describe('schedule ids', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', slack: { users: USERS }, watch: { schedulers: false } });
    await settled(stack, 'create web-01 h100-hgx-80gb.1x', 'Done');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("never replaces another channel's schedule whose id the new one would get, and uses 12 hex digits", async () => {
    const parsed = parseCommand('schedule stop web-01 daily 07:30 --tz Europe/Berlin');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const ctx: JobContext = {
      teamId: 'T0TEST',
      channelId: CHANNEL,
      userId: 'U0ADA',
      userName: 'ada',
      projectId: stack.sim.info.projectId,
      requestedAt: 1_790_000_000_000,
    };
    // The ids this request's job would be given first (its id's hash, 6 and 12 digits long) already
    // belong to schedules of another channel.
    const jobId = requestJobId(parsed.command, ctx);
    const hash = createHash('sha256').update(jobId).digest('hex');
    const taken = [`s-${hash.slice(0, 6)}`, `s-${hash.slice(0, 12)}`];
    for (const id of taken) expect(await saveSchedule(stack.store, theirs(id))).not.toBe(false);

    const client = new WebClient(BOT_TOKEN, { slackApiUrl: stack.slack.apiUrl, logLevel: LogLevel.ERROR });
    const ports = slackRequestPorts({ client, store: stack.store, log: stack.log });
    await enqueueRequest(
      { queue: stack.queue, store: stack.store, ports, log: stack.log },
      parsed.command,
      ctx,
    );
    await finished(stack, jobId);

    const made = await until(
      'the new schedule',
      async () => (await listSchedules(stack.store, { channelId: CHANNEL }))[0],
    );
    expect(made.id).toMatch(/^s-[0-9a-f]{12}$/);
    expect(taken).not.toContain(made.id);
    for (const id of taken) expect(await getSchedule(stack.store, id)).toEqual(theirs(id));
    expect((await listSchedules(stack.store, { channelId: 'C0THEIRS' })).map((s) => s.id).sort()).toEqual(
      [...taken].sort(),
    );
  });
});

// Ada and Bob operate; Bob approves anything above $10/h (and any price not known); a machine above
// $20/h gets a lease, as a typed start would.
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB, U0GUS] }
  admin: { users: [U0LEAD] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB] }
  channel: C0APPROVE
  lease: { required_above_per_hour: 20, default: 1h, remind_before: 5m }
`);

let firings = 0;

/** Runs one firing of a schedule through the real watch queue; resolves with what the worker returned. */
async function fire(stack: BotStack, id: string): Promise<Record<string, unknown>> {
  const queue = stack.watch!.queue;
  const jobId = `guard-fire-${++firings}`;
  const data: WatchJobData = { v: 1, job: 'schedule', id };
  await queue.add('watch.schedule', data, { jobId });
  return until(`firing ${jobId}`, async () => {
    const job = await queue.getJob(jobId);
    if (!job?.finishedOn) return undefined;
    expect(job.failedReason).toBeUndefined();
    return JSON.parse(String(job.returnvalue)) as Record<string, unknown>;
  });
}

describe('a schedule stays within what was agreed when it was made', () => {
  let stack: BotStack;
  const projectId = () => stack.sim.info.projectId;
  const alarms = (id: string) =>
    stack.slack
      .channelView(CHANNEL)
      .filter((m) => String(m.text).startsWith(`:alarm_clock: Schedule \`${id}\``));
  async function stateOf(name: string): Promise<string | undefined> {
    return (await stack.cloud.listInstances()).find((i) => i.name === name)?.state;
  }
  const settles = (name: string, state: string) =>
    until(`${name} ${state}`, async () => ((await stateOf(name)) === state ? true : undefined));
  /** A machine as if `owner` had made it with gpuops, left stopped. */
  async function machine(name: string, type: string, owner: string, tags?: Record<string, string>) {
    const made = await stack.cloud.createInstance(
      { name, type, ...(tags ? { tags } : {}) },
      { projectId: projectId() },
    );
    await recordInstanceOwner(stack.store, made.id, owner);
    await settles(name, 'running');
    await stack.cloud.stopInstance({ id: made.id }, { projectId: projectId() });
    await settles(name, 'stopped');
    return made;
  }
  /** `/gpu <text>` by Ada, approved by Bob: the schedule it made. */
  async function approvedSchedule(text: string): Promise<Schedule> {
    const before = (await listSchedules(stack.store, { channelId: CHANNEL })).map((s) => s.id);
    const pending = await askForApproval(stack, text, { approvalChannel: 'C0APPROVE' });
    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    return until('the schedule', async () =>
      (await listSchedules(stack.store, { channelId: CHANNEL })).find((s) => !before.includes(s.id)),
    );
  }

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      slack: { users: USERS },
      watch: { schedulers: false },
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("asks an approver again for machines beyond the agreed ones, and leaves other people's machines alone", async () => {
    await machine('ml-1', 'h100-hgx-80gb.1x', 'U0ADA', { team: 'ml' });
    await machine('carol-ml', 'h100-hgx-80gb.1x', 'U0CAROL', { team: 'ml' });
    // A tag's price is unknown when it is made: Bob agrees to it once.
    const schedule = await approvedSchedule('schedule start team=ml weekdays 07:30');
    // What was agreed: the one machine of Ada's carrying the tag then (Carol's is not hers to start).
    expect(schedule.ceiling).toEqual({ machines: 1, types: { 'h100-hgx-80gb.1x': 1 } });

    // Later an 8-GPU machine of Ada's gets the tag.
    await machine('ml-big', 'h100-hgx-80gb.8x', 'U0ADA', { team: 'ml' });
    const cards = stack.slack.channelView('C0APPROVE').length;
    expect(await fire(stack, schedule.id)).toMatchObject({ submitted: 1, awaitingApproval: 1 });
    await settles('ml-1', 'running');
    const card = await until('a new approval card', () => stack.slack.channelView('C0APPROVE')[cards]);
    expect(JSON.stringify(card.blocks)).toContain('/gpu start ml-big');
    expect(JSON.stringify(card.blocks)).toContain('agreed when the schedule was made');
    const told = await until('the channel told', () => alarms(schedule.id)[0]);
    expect(told.text).toContain('fired: starting ml-1 as <@U0ADA>.');
    expect(told.text).toContain(
      'Waiting for an approval (more than was agreed when the schedule was made): ml-big.',
    );
    expect(told.text).toContain("Not its owner's to operate, so left alone: carol-ml.");
    expect(await stateOf('ml-big')).toBe('stopped');
    expect(await stateOf('carol-ml')).toBe('stopped');
  });

  it('gives a costly scheduled start the lease a typed start gets', async () => {
    await machine('big-0', 'h100-hgx-80gb.8x', 'U0ADA');
    const schedule = await approvedSchedule('schedule start big-0 weekdays 07:30');
    expect(schedule.ceiling).toEqual({ machines: 1, types: { 'h100-hgx-80gb.8x': 1 } });
    const cards = stack.slack.channelView('C0APPROVE').length;
    expect(await fire(stack, schedule.id)).toMatchObject({ submitted: 1 });
    await settles('big-0', 'running');
    // Agreed once: no second card; the machine has a stop time like any costly start.
    expect(stack.slack.channelView('C0APPROVE')).toHaveLength(cards);
    const lease = await until('the lease', async () =>
      (await stack.guardrails.leases.activeFor('U0ADA')).find((l) => l.instance === 'big-0'),
    );
    expect(lease.stopAt - lease.startedAt).toBe(3_600_000);
  });

  it("lets an admin's tag schedule act on everyone's machines carrying the tag", async () => {
    for (const [name, owner] of [
      ['ops-ada', 'U0ADA'],
      ['ops-carol', 'U0CAROL'],
    ] as const) {
      const made = await stack.cloud.createInstance(
        { name, type: 'h100-hgx-80gb.1x', tags: { team: 'ops' } },
        { projectId: projectId() },
      );
      await recordInstanceOwner(stack.store, made.id, owner);
      await settles(name, 'running');
    }
    await saveSchedule(stack.store, {
      id: 's-0000000000b2',
      action: 'stop',
      target: { tag: { key: 'team', value: 'ops' } },
      when: 'weekdays 20:00',
      pattern: '0 20 * * 1-5',
      tz: 'UTC',
      channelId: CHANNEL,
      projectId: projectId(),
      ownerId: 'U0LEAD',
      createdAt: Date.now(),
    });
    expect(await fire(stack, 's-0000000000b2')).toMatchObject({ submitted: 2 });
    await settles('ops-ada', 'stopped');
    await settles('ops-carol', 'stopped');
  });

  it('pauses the schedule of an owner who became a guest, tells the channel once, and acts no more', async () => {
    const box = await machine('gus-1', 'h100-hgx-80gb.1x', 'U0GUS');
    await saveSchedule(stack.store, {
      id: 's-0000000000a1',
      action: 'start',
      target: { instance: box.id, name: 'gus-1' },
      when: 'weekdays 07:30',
      pattern: '30 7 * * 1-5',
      tz: 'UTC',
      channelId: CHANNEL,
      projectId: projectId(),
      ownerId: 'U0GUS',
      createdAt: Date.now(),
      ceiling: { machines: 1, types: { 'h100-hgx-80gb.1x': 1 } },
    });
    expect(await fire(stack, 's-0000000000a1')).toMatchObject({ paused: true, submitted: 0 });
    const told = await until('the channel told', () => alarms('s-0000000000a1')[0]);
    expect(told.text).toContain('is paused and acts no more: its owner is now a guest account (<@U0GUS>)');
    expect((await getSchedule(stack.store, 's-0000000000a1'))?.paused?.reason).toBe(
      'its owner is now a guest account',
    );
    expect(await fire(stack, 's-0000000000a1')).toMatchObject({ paused: true, submitted: 0 });
    expect(alarms('s-0000000000a1')).toHaveLength(1);
    // The channel's list says so.
    expect(shown(await privateAnswer(stack, 'schedules', { userId: 'U0BOB' }))).toContain(
      '`s-0000000000a1` · *start* gus-1 · weekdays 07:30 UTC · :double_vertical_bar: paused: its owner is now a guest account',
    );
    expect(await stateOf('gus-1')).toBe('stopped');
  });
});
