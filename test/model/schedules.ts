import type fc from 'fast-check';
import type { RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { getSchedule } from '../../src/store/schedules.js';
import { schedulerIdOf } from '../../src/watch/schedule-timers.js';
import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { finalAnswer, messageAbout } from './answers.js';
import { checkWorld, type Model, type ModelSchedule, type Real, stateAfter, violated } from './model.js';
import { expectation } from './typed.js';
import { type Actor, actor, isOneSentence, mayChange, mayUse, REQUEST_CHANNEL } from './world.js';

// Power schedules (docs/schedules.md): `/gpu schedule start|stop <machine> daily HH:MM --tz UTC` and
// `/gpu schedule rm <id>` typed by anyone, and the clock reaching the next schedule. The bot's clock
// cannot be moved from outside; each schedule is a BullMQ job scheduler on the watchers' queue whose
// next firing waits in Redis as a delayed job, so "the clock reaches it" promotes that job (what the
// clock would do at HH:MM) and the bot's own watch worker runs the firing. A firing is a start or stop
// request as the schedule's owner: the model expects it to change the machine as the owner's typed
// request would, counts it as their request, and wants its final answer where the owner can see it.
// A scheduled start must get a lease, as a typed one does. Left out: a firing above the schedule's
// ceiling (a machine target cannot change its type; only a tag target could grow, and the model's
// machines carry no tags).

const HOURS = ['06:00', '12:00', '18:00', '23:30'] as const;
export const scheduleTimes = HOURS;

const scheduleText = (action: 'start' | 'stop', machine: string, at: string) =>
  `schedule ${action} ${machine} daily ${at} --tz UTC`;

/** The listener's own answer to `/gpu <text>` ('' when it acknowledged and the job answers). */
async function typed(stack: BotStack, who: Actor, text: string) {
  const since = stack.slack.mark();
  const { response, responseUrl } = await stack.command(text, {
    userId: who.id,
    userName: who.name,
    channelId: REQUEST_CHANNEL,
  });
  if (response.status !== 200) violated(`"/gpu ${text}" as ${who.name} got HTTP ${response.status}`);
  const reply =
    response.text.trim() === '' ? '' : String((JSON.parse(response.text) as { text?: string }).text ?? '');
  return { since, responseUrl, reply };
}

export class ScheduleMade implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly action: 'start' | 'stop',
    readonly machine: string,
    readonly at: string,
  ) {}
  /** One schedule per time: two firing at one moment on one machine would race. */
  check(model: Readonly<Model>): boolean {
    return !model.schedules.some((s) => s.at === this.at);
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const text = scheduleText(this.action, this.machine, this.at);
    const label = `"/gpu ${text}" as ${who.name}`;
    // Making it needs the role of the action it schedules, and a machine to schedule.
    const want = expectation(model, who, this.action, this.machine);
    const { since, responseUrl, reply } = await typed(stack, who, text);
    if (reply !== '') {
      const notStored = real.replication !== undefined && /try again|send it again/i.test(reply);
      if (want.kind === 'runs' && !notStored)
        violated(`${label} was refused though the policy allows it: "${reply}"`);
      if (!isOneSentence(reply)) violated(`${label} was refused in more than a sentence: "${reply}"`);
      if (want.kind === 'refused' && want.audited)
        model.refused.push({ verb: `schedule.${this.action}`, machine: this.machine, actor: who.id });
      return checkWorld(model, real);
    }
    const gone = want.kind === 'refused' && !want.audited && mayUse(who.standing);
    if (want.kind !== 'runs' && !gone) violated(`${label} was accepted though the model expects it refused`);
    const final = await finalAnswer(stack, who, text, {
      since,
      responseUrl,
      channelTs: messageAbout(stack, text, since),
      what: label,
    });
    model.ran.push({ verb: `schedule.${this.action}`, machine: this.machine, actor: who.id });
    if (gone) {
      // A machine gone between the listener's (cached) look and the job: the job says so.
      if (final.phase !== 'Failed')
        violated(`${label} made a schedule for a machine that is gone: "${final.text}"`);
      return checkWorld(model, real);
    }
    if (final.phase !== 'Done') violated(`${label} ended "${final.text}" though the policy allows it`);
    const id = /Scheduled `(s-[0-9a-f]+)`/.exec(final.text)?.[1];
    if (!id) violated(`${label} said no schedule id: "${final.text}"`);
    const stored = await getSchedule(stack.store, id);
    if (!stored || !('instance' in stored.target)) violated(`${label} answered ${id}, which is not stored`);
    model.schedules.push({
      id,
      action: this.action,
      machine: this.machine,
      instanceId: stored.target.instance,
      owner: who,
      at: this.at,
    });
    await checkWorld(model, real);
  }
  toString(): string {
    return `/gpu ${scheduleText(this.action, this.machine, this.at)} as ${this.who}`;
  }
}

export class ScheduleRemoved implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly pick: number,
  ) {}
  check(model: Readonly<Model>): boolean {
    return model.schedules.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const s = model.schedules[this.pick % model.schedules.length]!;
    const text = `schedule rm ${s.id}`;
    const label = `"/gpu ${text}" as ${who.name}`;
    const allowed = mayUse(who.standing) && mayChange(who.standing) && !model.degraded;
    const { since, responseUrl, reply } = await typed(stack, who, text);
    if (reply !== '') {
      const notStored = real.replication !== undefined && /try again|send it again/i.test(reply);
      if (allowed && !notStored) violated(`${label} was refused though the policy allows it: "${reply}"`);
      if (!isOneSentence(reply)) violated(`${label} was refused in more than a sentence: "${reply}"`);
      return checkWorld(model, real);
    }
    if (!allowed) violated(`${label} was accepted though the policy refuses it`);
    const final = await finalAnswer(stack, who, text, {
      since,
      responseUrl,
      channelTs: messageAbout(stack, text, since),
      what: label,
    });
    if (final.phase !== 'Done') violated(`${label} ended "${final.text}"`);
    model.ran.push({ verb: 'schedule.rm', machine: s.id, actor: who.id });
    model.schedules.splice(model.schedules.indexOf(s), 1);
    await checkWorld(model, real);
  }
  toString(): string {
    return `${this.who} removes schedule #${this.pick} (/gpu schedule rm <id>)`;
  }
}

// A firing whose cloud calls all fail is tried again after 30 s, 60 s and 120 s (FIRING_JOB_OPTIONS);
// the model's faults never touch the listing a firing makes, so one attempt is expected.
const FIRING_WITHIN_MS = 30_000;

const alarmOf = (id: string, since: number) => (c: RecordedCall) =>
  c.index >= since &&
  c.method === 'chat.postMessage' &&
  c.body.channel === REQUEST_CHANNEL &&
  String(c.body.text).startsWith(`:alarm_clock: Schedule \`${id}\``) &&
  // Taken, or refused for good; a 429 is tried again.
  ((c.response as { ok?: boolean; error?: string }).ok === true ||
    (c.response as { error?: string }).error === 'not_in_channel');

export class ClockReachesSchedule implements fc.AsyncCommand<Model, Real> {
  check(model: Readonly<Model>): boolean {
    return model.schedules.length > 0 && !model.degraded;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const queue = stack.bot.parts.watch?.watchQueue;
    if (!queue) throw new Error('the model stack runs no watchers');
    const timers = (await queue.getJobSchedulers()).filter((t) => t.key.startsWith('schedule.'));
    // Every schedule the model holds has its timer; a removed one has none (it would fire).
    for (const s of model.schedules) {
      if (!timers.some((t) => t.key === schedulerIdOf(s.id) && t.next))
        violated(`schedule ${s.id} (${s.action} ${s.machine} at ${s.at}) has no timer: it would never fire`);
    }
    for (const t of timers) {
      if (!model.schedules.some((s) => schedulerIdOf(s.id) === t.key))
        violated(`${t.key} still has a timer though its schedule was removed`);
    }
    const next = Math.min(...timers.map((t) => t.next ?? Number.POSITIVE_INFINITY));
    const due = timers.filter((t) => t.next === next);
    const since = stack.slack.mark();
    const firedFrom = Date.now();
    const fleet = await stack.cloud.listInstances();
    for (const t of due) {
      const jobId = `repeat:${t.key}:${next}`;
      const job = await queue.getJob(jobId);
      if (!job) violated(`the next firing of ${t.key} is not waiting in the queue (${jobId})`);
      await job.promote();
    }
    for (const t of due) {
      const s = model.schedules.find((x) => schedulerIdOf(x.id) === t.key)!;
      const jobId = `repeat:${t.key}:${next}`;
      await until(
        `the firing of ${s.id}`,
        async () => {
          const job = await queue.getJob(jobId);
          if (job?.failedReason) violated(`the firing of ${s.id} failed: ${job.failedReason}`);
          return job ? undefined : true;
        },
        FIRING_WITHIN_MS,
      );
      await this.expect(model, stack, s, fleet, since, firedFrom);
    }
    await checkWorld(model, real);
  }

  /** What one firing must have done, as the schedule's owner would by typing the same request. */
  private async expect(
    model: Model,
    stack: BotStack,
    s: ModelSchedule,
    fleet: ReadonlyArray<{ id: string; name: string }>,
    since: number,
    firedFrom: number,
  ) {
    const label = `the firing of ${s.id} (${s.action} ${s.machine} at ${s.at}, ${s.owner.name}'s)`;
    const same = fleet.some((i) => i.id === s.instanceId);
    const state = model.machines[s.machine];
    const acts = same && state === (s.action === 'start' ? 'stopped' : 'running');
    // The channel is told what the firing did, unless Slack refused the post (not_in_channel).
    const alarm = await stack.slack
      .waitFor('chat.postMessage', alarmOf(s.id, since), FIRING_WITHIN_MS, since)
      .catch(() => violated(`${label} told the channel nothing`));
    const told = (alarm.response as { ok?: boolean }).ok === true ? String(alarm.body.text) : undefined;
    if (!acts) {
      if (told && !/fired: nothing to do/.test(told))
        violated(`${label} should have done nothing: "${told}"`);
      return;
    }
    const verb = s.action === 'start' ? 'starting' : 'stopping';
    if (told && !told.includes(`fired: ${verb} ${s.machine} as <@${s.owner.id}>.`))
      violated(`${label} should be ${verb} ${s.machine}: "${told}"`);
    // A request of the owner's: it changes the machine when it succeeds, and ends where they see it.
    const request = `${s.action} ${s.machine}`;
    model.seq += 1;
    model.lastAsk[s.machine] = model.seq;
    model.ran.push({ verb: s.action, machine: s.machine, actor: s.owner.id });
    const final = await finalAnswer(stack, s.owner, request, {
      since,
      channelTs: messageAbout(stack, request, since),
      what: label,
    });
    if (final.phase !== 'Done') return;
    model.machines[s.machine] = stateAfter(s.action);
    // A scheduled start gets the lease a typed start gets (the model's policy leases every start).
    if (s.action === 'start') {
      const leases = await stack.guardrails.leases.activeFor(s.owner.id);
      const mine = leases.filter(
        (l) => (l.instance === s.machine || l.instance === s.instanceId) && l.startedAt >= firedFrom,
      );
      if (mine.length === 0)
        violated(
          `${label} started ${s.machine} without a lease (${s.owner.name}'s active leases: ${leases.map((l) => `${l.instance} from ${new Date(l.startedAt).toISOString()}`).join(', ') || 'none'})`,
        );
    }
  }
  toString(): string {
    return 'the clock reaches the next schedule';
  }
}
