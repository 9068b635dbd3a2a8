import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { listSchedules, removeSchedule, saveSchedule } from '../../src/store/schedules.js';
import { schedulerIdOf } from '../../src/watch/schedule-timers.js';
import type { WatchJobData } from '../../src/watch/watch-queue.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { privateAnswer, settled, shown } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack, listenerAnswer } from './answers.js';
import { askForApproval, click, primeCatalog } from './guardrails-kit.js';

// Power schedules end to end: signed slash commands, the real Slack SDK against the fake Slack (which
// serves each person's time zone from users.info), BullMQ job schedulers on the watchers' queue, and
// the simulator over HTTP. A firing is triggered deterministically by adding the scheduler's own job
// to the real queue, where the watch worker runs it as the scheduler would at 20:00.

// Ada makes schedules in New York; Bob reads them in Tokyo.
const USERS = [
  { id: 'U0ADA', name: 'ada', tz: 'America/New_York' },
  { id: 'U0BOB', name: 'bob', tz: 'Asia/Tokyo' },
  { id: 'U0CAROL', name: 'carol', tz: 'Europe/London' },
];

let firings = 0;

/** Runs one firing of a schedule through the real watch queue; resolves with what the worker returned. */
async function fire(stack: BotStack, id: string): Promise<Record<string, unknown>> {
  const queue = stack.watch!.queue;
  const jobId = `test-fire-${++firings}`;
  const data: WatchJobData = { v: 1, job: 'schedule', id };
  await queue.add('watch.schedule', data, { jobId });
  return until(`firing ${jobId}`, async () => {
    const job = await queue.getJob(jobId);
    if (!job?.finishedOn) return undefined;
    expect(job.failedReason).toBeUndefined();
    return JSON.parse(String(job.returnvalue)) as Record<string, unknown>;
  });
}

const alarms = (stack: BotStack, channel = CHANNEL) =>
  stack.slack.channelView(channel).filter((m) => String(m.text).startsWith(':alarm_clock: Schedule'));

async function stateOf(stack: BotStack, name: string): Promise<string | undefined> {
  return (await stack.cloud.listInstances()).find((i) => i.name === name)?.state;
}

const scheduleIdIn = (text: string): string => {
  const id = /Scheduled `(s-[0-9a-f]+)`/.exec(text)?.[1];
  if (!id) throw new Error(`no schedule id in: ${text}`);
  return id;
};

describe('/gpu schedule, shape B', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // Watch workers run (they fire schedules); the periodic watchers stay off so nothing else posts.
    stack = await startBotStack({ shape: 'B', slack: { users: USERS }, watch: { schedulers: false } });
    await settled(stack, 'create train-01 h100-hgx-80gb.1x --tag team=ml', 'Done');
    await settled(stack, 'create train-02 h100-hgx-80gb.1x --tag team=ml', 'Done');
    await settled(stack, 'create web-01 h100-hgx-80gb.1x --tag team=web', 'Done');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("makes a schedule in the requester's zone, lists it in the viewer's, fires once and stops the tagged machines", async () => {
    const made = await settled(stack, 'schedule stop team=ml weekdays 20:00', 'Done');
    const id = scheduleIdIn(String(made.text));
    expect(made.text).toContain('stop instances tagged team=ml weekdays 20:00 (America/New_York)');
    expect(made.text).toContain('2 instance(s) carry team=ml now (train-01, train-02)');

    // The timer is a BullMQ job scheduler in Redis, read in Ada's zone.
    const scheduler = await stack.watch!.queue.getJobScheduler(schedulerIdOf(id));
    expect(scheduler).toMatchObject({ pattern: '0 20 * * 1-5', tz: 'America/New_York' });
    // 20:00 in New York is 09:00 or 10:00 the next morning in Tokyo (New York's DST decides).
    const nextInTokyo = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Tokyo',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(scheduler!.next!);
    expect(['09:00', '10:00']).toContain(nextInTokyo);
    const inNewYork = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'America/New_York',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      weekday: 'short',
    }).format(scheduler!.next!);
    expect(inNewYork).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 20:00$/);

    // Bob sees it in Tokyo time, Ada in New York time.
    const bob = shown(await privateAnswer(stack, 'schedules', { userId: 'U0BOB' }));
    expect(bob).toContain(`\`${id}\``);
    expect(bob).toContain(`${nextInTokyo} your time`);
    expect(bob).toContain('Times in your time zone (Asia/Tokyo)');
    const ada = shown(await privateAnswer(stack, 'schedules'));
    expect(ada).toContain(', 20:00 your time');

    expect(await stateOf(stack, 'train-01')).toBe('running');
    const result = await fire(stack, id);
    expect(result).toMatchObject({ schedule: id, submitted: 2 });
    await until('the tagged machines stopped', async () =>
      (await stateOf(stack, 'train-01')) === 'stopped' && (await stateOf(stack, 'train-02')) === 'stopped'
        ? true
        : undefined,
    );
    expect(await stateOf(stack, 'web-01')).toBe('running');
    const alarm = await until('the channel told', () => alarms(stack)[0]);
    expect(alarm.text).toBe(
      `:alarm_clock: Schedule \`${id}\` (stop instances tagged team=ml weekdays 20:00 (America/New_York)) fired: stopping train-01, train-02 as <@U0ADA>.`,
    );
    // Each stop is a normal request in the channel, and the audit trail says it came from the schedule.
    await until('the stop messages', () =>
      stack.slack.channelView(CHANNEL).filter((m) => /^Done: \/gpu stop train-0[12]/.test(String(m.text)))
        .length === 2
        ? true
        : undefined,
    );
    const audit = await stack.guardrails.audit.latest(50);
    const fromSchedule = audit.filter((e) => e.parameters?.schedule === id && e.outcome === 'queued');
    expect(fromSchedule.map((e) => e.operation).sort()).toEqual(['stop', 'stop']);
    expect(fromSchedule.every((e) => e.actor === 'U0ADA')).toBe(true);

    // The list says what the last run did.
    // (Asked by Carol: the same lookup from the same person within 3 s is taken as a double click.)
    expect(shown(await privateAnswer(stack, 'schedules', { userId: 'U0CAROL' }))).toContain(
      'last: stopping train-01, train-02',
    );

    // The same firing again finds the machines stopped: nothing submitted, the channel told so.
    expect(await fire(stack, id)).toMatchObject({ submitted: 0 });
    expect((await until('the second notice', () => alarms(stack)[1])).text).toContain(
      'fired: nothing to do. Already stopped: train-01, train-02.',
    );

    // Removing it removes its job scheduler; a firing already on its way then does nothing.
    const removed = await settled(stack, `schedule rm ${id}`, 'Done');
    expect(removed.text).toContain(`Removed schedule \`${id}\``);
    expect(await stack.watch!.queue.getJobScheduler(schedulerIdOf(id))).toBeUndefined();
    expect(await listSchedules(stack.store, { channelId: CHANNEL })).toEqual([]);
    await settled(stack, 'start train-01', 'Done');
    expect(await fire(stack, id)).toMatchObject({ gone: true, submitted: 0 });
    expect(await stateOf(stack, 'train-01')).toBe('running');
    expect(alarms(stack)).toHaveLength(2);
    expect(shown(await privateAnswer(stack, 'schedules', { userId: 'U0DAN' }))).toContain(
      'This channel has no power schedules',
    );
    expectCleanSlack(stack);
  });

  it('schedules one instance by name, with --tz instead of the Slack zone', async () => {
    const made = await settled(stack, 'schedule stop web-01 daily 07:30 --tz Europe/Berlin', 'Done');
    const id = scheduleIdIn(String(made.text));
    expect(made.text).toContain('stop web-01 daily 07:30 (Europe/Berlin)');
    expect(await stack.watch!.queue.getJobScheduler(schedulerIdOf(id))).toMatchObject({
      pattern: '30 7 * * *',
      tz: 'Europe/Berlin',
    });
    // Someone Slack gives no time zone reads UTC, and is told so.
    const erin = shown(await privateAnswer(stack, 'schedules', { userId: 'U0ERIN' }));
    expect(erin).toMatch(/daily 07:30 Europe\/Berlin · next \w{3} \d+ \w{3}, 0[56]:30 UTC/);
    expect(erin).toContain('Times in UTC (Slack did not say your time zone)');
    expect(await fire(stack, id)).toMatchObject({ submitted: 1 });
    await until('web-01 stopped', async () =>
      (await stateOf(stack, 'web-01')) === 'stopped' ? true : undefined,
    );
    await settled(stack, `schedule rm ${id}`, 'Done');
  });

  it('answers bad input with one sentence and makes nothing', async () => {
    expect(await listenerAnswer(stack, 'schedule stop train-01 daily 20:00 --tz Mars/Olympus')).toContain(
      '"Mars/Olympus" is not a time zone gpuops knows: a time zone is an IANA name such as Europe/Berlin',
    );
    expect(await listenerAnswer(stack, 'schedule stop train-01 0 0 30 2 *')).toContain(
      '`0 0 30 2 *` never fires',
    );
    expect(await listenerAnswer(stack, 'schedule stop train-01 daily 24:10')).toContain(
      '`24:10` is not a time of day',
    );
    expect(await listenerAnswer(stack, 'schedule stop train-01 */5 * * * *')).toContain(
      'fires more often than every 10 minutes',
    );
    // Names that are not there are told to the requester alone: the channel sees nothing of them.
    const since = stack.slack.mark();
    expect(await listenerAnswer(stack, 'schedule stop nosuch-9 weekdays 20:00')).toMatch(
      /^No instance "nosuch-9" in this project\./,
    );
    expect(await listenerAnswer(stack, 'schedule rm s-000000')).toMatch(
      /^No schedule "s-000000" in this channel\. This channel has no schedules\. Check the name with `\/gpu schedules`\./,
    );
    expect(stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= since)).toEqual([]);
    expect(await listSchedules(stack.store, { channelId: CHANNEL })).toEqual([]);
    expect(await stack.watch!.queue.getJobSchedulers()).toEqual([]);
  });
});

// Ada and Dan operate; Carol only views; Bob approves. Anything above $10/h waits for him. Stopping a
// machine takes an admin here, so a stop schedule does too.
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB] }
permissions:
  kinds:
    stop: admin
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB] }
  channel: C0APPROVE
`);

describe('/gpu schedule with guardrails', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      slack: { users: USERS },
      watch: { schedulers: false },
    });
    const projectId = stack.sim.info.projectId;
    await stack.cloud.createInstance({ name: 'big-0', type: 'h100-hgx-80gb.8x' }, { projectId });
    await until('big-0 running', async () =>
      (await stateOf(stack, 'big-0')) === 'running' ? true : undefined,
    );
    // The listener prices big-0 from the cached listing, as the scheduled refresh leaves it.
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a schedule to someone who may not stop the machine, and keeps nothing', async () => {
    // Carol may not operate at all; Ada operates but may not stop (stop: admin), so she may not
    // schedule a stop either.
    const carol = await stack.command('schedule stop big-0 weekdays 20:00', { userId: 'U0CAROL' });
    expect(JSON.parse(carol.response.text).text).toContain(
      '`/gpu schedule stop` needs the *operator* role, and you have *viewer*',
    );
    const ada = await stack.command('schedule stop big-0 weekdays 20:00');
    expect(JSON.parse(ada.response.text).text).toContain(
      '`/gpu stop` needs the *admin* role, and you have *operator*',
    );
    expect(await listSchedules(stack.store, { channelId: CHANNEL })).toEqual([]);
    expect(await stack.watch!.queue.getJobSchedulers()).toEqual([]);
    const refused = (await stack.guardrails.audit.latest(20)).filter(
      (e) => e.operation === 'schedule.stop' && e.outcome === 'refused',
    );
    expect(refused.map((e) => e.actor).sort()).toEqual(['U0ADA', 'U0CAROL']);
  });

  it("checks the owner's role again when it fires: a schedule of someone who may no longer act does nothing", async () => {
    // A stop schedule Ada made before stopping took an admin (stored as that request left it).
    await saveSchedule(stack.store, {
      id: 's-00000b',
      action: 'stop',
      target: { tag: { key: 'team', value: 'big' } },
      when: 'weekdays 20:00',
      pattern: '0 20 * * 1-5',
      tz: 'America/New_York',
      channelId: CHANNEL,
      projectId: stack.sim.info.projectId,
      ownerId: 'U0ADA',
      createdAt: Date.now(),
    });
    await stack.cloud.createInstance(
      { name: 'big-1', type: 'h100-hgx-80gb.1x', tags: { team: 'big' } },
      { projectId: stack.sim.info.projectId },
    );
    await until('big-1 running', async () =>
      (await stateOf(stack, 'big-1')) === 'running' ? true : undefined,
    );
    expect(await fire(stack, 's-00000b')).toMatchObject({ refused: true, submitted: 0 });
    const told = await until('the channel told', () => alarms(stack)[0]);
    expect(told.text).toContain(
      'did not run: it acts as <@U0ADA>, who may no longer do it. `/gpu stop` needs the *admin* role, and you have *operator*',
    );
    expect(await stateOf(stack, 'big-1')).toBe('running');
    const audit = (await stack.guardrails.audit.latest(20)).filter(
      (e) => e.parameters?.schedule === 's-00000b',
    );
    expect(audit.map((e) => [e.operation, e.outcome])).toEqual([['stop', 'refused']]);
    await removeSchedule(stack.store, 's-00000b');
  });

  it('asks once, with the monthly cost, for a costly scheduled start; its firings need no approval', async () => {
    const pending = await askForApproval(stack, 'schedule start big-0 weekdays 07:30', {
      approvalChannel: 'C0APPROVE',
    });
    const card = JSON.stringify(pending.card.blocks);
    expect(card).toContain('$23.12/h');
    // 8 GPUs × $2.89 × 730 h.
    expect(card).toContain('up to 730 h ≈ $16,877.60 a month');
    expect(await listSchedules(stack.store, { channelId: CHANNEL })).toHaveLength(0);

    const response = await click(stack, pending, 'U0BOB');
    expect(response.status).toBe(200);
    const schedule = await until('the schedule', async () =>
      (await listSchedules(stack.store, { channelId: CHANNEL })).find((s) => s.action === 'start'),
    );
    expect(schedule).toMatchObject({
      ownerId: 'U0ADA',
      tz: 'America/New_York',
      approvalId: pending.approvalId,
    });

    // A firing starts the machine straight away: no second card.
    const bigId = 'instance' in schedule.target ? schedule.target.instance : '';
    await stack.cloud.stopInstance({ id: bigId }, { projectId: stack.sim.info.projectId });
    await until('big-0 stopped', async () =>
      (await stateOf(stack, 'big-0')) === 'stopped' ? true : undefined,
    );
    const cards = stack.slack.channelView('C0APPROVE').length;
    expect(await fire(stack, schedule.id)).toMatchObject({ submitted: 1 });
    await until('big-0 running again', async () =>
      (await stateOf(stack, 'big-0')) === 'running' ? true : undefined,
    );
    expect(stack.slack.channelView('C0APPROVE')).toHaveLength(cards);
    expectCleanSlack(stack);
  });

  it('prices the month of a scheduled start by the hours until the stops scheduled on the same machine', async () => {
    // A stop schedule on big-0 already exists in this channel (made by an admin).
    await saveSchedule(stack.store, {
      id: 's-00000c',
      action: 'stop',
      target: { instance: 'big-0-id', name: 'big-0' },
      when: 'weekdays 20:00',
      pattern: '0 20 * * 1-5',
      tz: 'America/New_York',
      channelId: CHANNEL,
      projectId: stack.sim.info.projectId,
      ownerId: 'U0LEAD',
      createdAt: Date.now(),
    });
    const pending = await askForApproval(stack, 'schedule start big-0 weekdays 08:00 --tz America/New_York', {
      approvalChannel: 'C0APPROVE',
    });
    const card = JSON.stringify(pending.card.blocks);
    const m =
      /stopped by s-00000c \(weekdays 20:00 America\/New_York\): about (\d+) h ≈ \$([\d,]+\.\d\d) a month/.exec(
        card,
      );
    expect(m, card).not.toBeNull();
    // 12 hours on each of the 21 to 23 weekdays of a month, at $23.12 an hour.
    const hours = Number(m![1]);
    expect(hours).toBeGreaterThanOrEqual(21 * 12);
    expect(hours).toBeLessThanOrEqual(23 * 12);
    expect(Number(m![2]!.replaceAll(',', ''))).toBeCloseTo(hours * 23.12, 2);
    await removeSchedule(stack.store, 's-00000c');
  });
});
