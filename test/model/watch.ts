import type fc from 'fast-check';
import type { RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { watchKey } from '../../src/store/watch-keys.js';
import { until } from '../support/until.js';
import { checkWorld, type Model, type Real, violated } from './model.js';
import {
  actor,
  isOneSentence,
  MACHINES,
  mayChange,
  mayUse,
  REQUEST_CHANNEL,
  WATCH_POLL_MS,
} from './world.js';

// `/gpu watch on|off` in the requests' channel (docs/watch.md), and the check that follows: once the
// watchers have had time for a few looks (the policy's poll period in the model's world, 2 s), a
// watched channel has a message naming each machine whose state differs from when watching began.
// Only a difference since then is asked for: polling sees states, not events, so a machine stopped
// and started again between two looks may never be told. Left out: that nothing is told after
// `watch off` (a look already running when it is turned off may still post, and which look a post
// came from cannot be seen from Slack without a fixed wait).

// A few looks, the drain of what they found and Slack's 429s on the way.
const TOLD_WITHIN_MS = 3 * WATCH_POLL_MS + 15_000;

export class WatchToggled implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly on: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const label = `"/gpu watch ${this.on ? 'on' : 'off'}" as ${who.name}`;
    const since = stack.slack.mark();
    const { response } = await stack.command(`watch ${this.on ? 'on' : 'off'}`, {
      userId: who.id,
      userName: who.name,
      channelId: REQUEST_CHANNEL,
    });
    if (response.status !== 200) violated(`${label} got HTTP ${response.status}`);
    const reply =
      response.text.trim() === '' ? '' : String((JSON.parse(response.text) as { text?: string }).text ?? '');
    const allowed = mayUse(who.standing) && mayChange(who.standing);
    const done = this.on
      ? /now watches|already watches/i.test(reply)
      : /stopped watching|was not watching/i.test(reply);
    if (!allowed) {
      if (done || !isOneSentence(reply)) violated(`${label} should be refused in one sentence: "${reply}"`);
    } else if (!done) {
      // Without a replica (Sentinel) a write may be refused in one sentence, and nothing changes.
      if (!model.degraded || !isOneSentence(reply))
        violated(`${label} was not done though the policy allows it: "${reply}"`);
    } else if (this.on && !model.watching) {
      // The first look of a new watch records how things are and tells nothing: what changed is
      // counted from the first look after this.
      await lookAfter(real, Date.now());
      model.watching = { since, states: { ...model.machines } };
    } else if (!this.on) {
      model.watching = undefined;
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `/gpu watch ${this.on ? 'on' : 'off'} as ${this.who}`;
  }
}

/** Waits for the watchers' look at the project to commit after `at` (its snapshot's polledAt). */
async function lookAfter(real: Real, at: number) {
  const { stack } = real;
  const key = watchKey(stack.storePrefix, 'snap', stack.sim.info.projectId);
  await until(
    'the watchers to look at the project',
    async () => (Number((await stack.redis.hget(key, 'polledAt')) ?? 0) > at ? true : undefined),
    TOLD_WITHIN_MS,
  ).catch(() =>
    violated(`the watchers did not look at the project within ${TOLD_WITHIN_MS} ms of "watch on"`),
  );
}

/** A message of the watchers (not a request's, not a schedule's line) naming `machine`. */
const toldAbout = (machine: string, since: number) => (c: RecordedCall) =>
  c.index >= since &&
  (c.method === 'chat.postMessage' || c.method === 'chat.update') &&
  c.body.channel === REQUEST_CHANNEL &&
  (c.response as { ok?: boolean } | undefined)?.ok === true &&
  `${String(c.body.text)} ${JSON.stringify(c.body.blocks ?? [])}`.includes(`*${machine}*`) &&
  !String(c.body.text).includes('/gpu ') &&
  !String(c.body.text).startsWith(':alarm_clock:');

export class WatchersLook implements fc.AsyncCommand<Model, Real> {
  check(model: Readonly<Model>): boolean {
    return model.watching !== undefined;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const watching = model.watching;
    if (!watching) return;
    const changed = MACHINES.filter((m) => watching.states[m] !== model.machines[m]);
    for (const m of changed) {
      await until(
        `a message in the watched channel about ${m}`,
        () => (stack.slack.calls.some(toldAbout(m, watching.since)) ? true : undefined),
        TOLD_WITHIN_MS,
      ).catch(() =>
        violated(
          `the watched channel was never told that ${m} changed (${watching.states[m]} when watching began, ${model.machines[m]} now)`,
        ),
      );
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return 'the watchers look (a watched channel is told of every machine that changed)';
  }
}
