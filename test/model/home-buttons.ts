import type fc from 'fast-check';
import type { RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { cacheKey } from '../../src/store/store.js';
import type { BotStack } from '../support/bot-stack.js';
import type { Block } from '../support/home-driver.js';
import { openHome } from '../support/home-driver.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { finalAnswer, messageAbout, postAbout } from './answers.js';
import { checkWorld, type Model, type Real, violated } from './model.js';
import { apply, type Outcome } from './typed.js';
import { type Actor, actor, isOneSentence, MACHINES, mayUse, trace } from './world.js';

// Start and Stop on the Home tab: a press of a button the product published (read from the fake
// Slack's views.publish calls, never made up here), signed as Slack signs a Home press (a view of type
// home, no channel, no response_url). The product answers a Home press by publishing the presser's Home
// again with the answer on top; a press it queues posts the job's message in the machine's channel,
// which must end in one final answer. The same policy model as a typed `/gpu start|stop` decides what
// must happen (typed.ts `expectation` and `apply`).

type HomeLabel = 'Start' | 'Stop';

/** The blocks of a views.publish call. */
const blocksOfCall = (c: RecordedCall): Block[] =>
  ((c.body.view as { blocks?: Block[] } | undefined)?.blocks ?? []) as Block[];

/** The button labelled `label` under `machine`'s row in "Your machines", if that publish shows it. */
function buttonIn(blocks: readonly Block[], machine: string, label: HomeLabel) {
  const at = blocks.findIndex(
    (b) => b.type === 'section' && String(b.text?.text ?? '').startsWith(`*${machine}*`),
  );
  const row = at < 0 ? undefined : blocks[at + 1];
  if (row?.type !== 'actions') return undefined;
  const button = row.elements?.find((e) => (e.text as { text?: string } | undefined)?.text === label);
  return button ? { actionId: String(button.action_id), value: String(button.value) } : undefined;
}

/**
 * The answer a Home publish carries: the notice on top (after the header), or the whole of a Home that
 * is only a sentence (a refusal at the door, or the answer when the page could not be gathered).
 */
export function noticeOf(blocks: readonly Block[]): string | undefined {
  const [first, second] = blocks;
  if (first?.type === 'section') return String(first.text?.text ?? '');
  if (first?.type === 'header' && second?.type === 'section') return String(second.text?.text ?? '');
  return undefined;
}

const published = (stack: BotStack, userId: string, since: number, match: (b: Block[]) => boolean) =>
  stack.slack.waitFor(
    'views.publish',
    (c) =>
      c.body.user_id === userId && (c.response as { ok?: boolean }).ok === true && match(blocksOfCall(c)),
    20_000,
    since,
  );

/** The newest button `label` of `machine` that `userId`'s Home was ever published with. */
function lastButton(stack: BotStack, userId: string, machine: string, label: HomeLabel) {
  const publishes = stack.slack.calls.filter(
    (c) =>
      c.method === 'views.publish' &&
      c.body.user_id === userId &&
      (c.response as { ok?: boolean } | undefined)?.ok === true,
  );
  for (const c of publishes.reverse()) {
    const found = buttonIn(blocksOfCall(c), machine, label);
    if (found) return found;
  }
  return undefined;
}

/** Who made `machine` through gpuops, as the model knows it (the last create that made it), gone or not. */
export function makerOf(model: Model, machine: string): string | undefined {
  return model.ran.filter((r) => r.verb === 'create' && r.machine === machine && !r.failed).at(-1)?.actor;
}

/** What the presser saw after the press: the answer on their Home, then the job's message if queued. */
async function pressed(
  stack: BotStack,
  who: Actor,
  button: { actionId: string; value: string },
  label: HomeLabel,
  what: string,
): Promise<Outcome> {
  const since = stack.slack.mark();
  const response = await stack.interact(
    blockActionsPayload({
      actionId: button.actionId,
      value: button.value,
      text: label,
      userId: who.id,
      userName: who.name,
      ...(who.standing === 'outsider' ? { teamId: 'T0OTHER' } : {}),
      view: { id: `VHOME${who.id}`, type: 'home', hash: 'h', blocks: [] },
    }),
  );
  if (response.status !== 200) violated(`${what} got HTTP ${response.status}`);
  const answered = await published(stack, who.id, since, (b) => noticeOf(b) !== undefined).catch(() =>
    violated(`${what} was never answered on ${who.name}'s Home tab`),
  );
  const notice = noticeOf(blocksOfCall(answered))!;
  if (notice.startsWith('Already on it')) return { kind: 'repeat', text: notice };
  if (/needs an approval/.test(notice)) return { kind: 'approval', text: notice };
  if (!/is queued as job/.test(notice)) return { kind: 'refused', text: notice };
  // Queued: the job's message in the machine's channel (a rate-limited post is recorded too, not ok,
  // and tried again), or, where Slack refused it there (`not_in_channel`), the answer the job then
  // gives the presser privately: invariant 2 looks wherever the reply port sends it (answers.ts).
  const text = (JSON.parse(button.value) as { t: string }).t;
  const channel = (JSON.parse(button.value) as { c: string }).c;
  await postAbout(stack, text, since, channel).catch(() =>
    violated(`${what} was queued ("${notice}") but no message of its job came`),
  );
  const final = await finalAnswer(stack, who, text, {
    since,
    channelTs: messageAbout(stack, text, since, channel),
    what,
    channel,
  });
  return { kind: 'ran', text: final.text, final: final.phase === 'Done' ? 'Done' : 'Failed' };
}

/**
 * `who` presses Start or Stop of `machine` on a Home tab. The button is the newest the machine's maker's
 * Home was published with (opened first, so it is as fresh as the product makes it): the maker's own
 * press, or for anyone else a button the product rendered on the maker's Home (as a page published
 * before a person's standing changed would still show it: their own roles decide, not the page). For a
 * machine since removed it is the button of a Home published while it existed: a stale button.
 */
export class HomeButton implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly label: HomeLabel,
    readonly machine: string,
  ) {}
  check(model: Model): boolean {
    // A machine that is there shows Start only when stopped and Stop only when running; one since
    // removed has the buttons of the Homes published while it was there, if any.
    const state = model.machines[this.machine];
    const shown = state === 'absent' || (state === 'stopped') === (this.label === 'Start');
    return makerOf(model, this.machine) !== undefined && shown;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const maker = makerOf(model, this.machine)!;
    const verb = this.label === 'Start' ? 'start' : 'stop';
    const state = model.machines[this.machine]!;
    if (state !== 'absent') {
      // The Home reads an unwatched project's machines from the cloud, sharing one listing for 15 s
      // (docs/home.md): the clock passes that, so the page shows the machine as the cloud has it now.
      await stack.redis.del(cacheKey(stack.storePrefix, `home-machines:${stack.sim.info.projectId}`));
      const since = stack.slack.mark();
      await openHome(stack, maker);
      const home = await published(stack, maker, since, (b) =>
        JSON.stringify(b).includes('Your machines'),
      ).catch(() => violated(`the Home tab of ${maker} was not published with their machines`));
      // Its maker's Home lists it, in the state the requests that succeeded left it.
      const row = blocksOfCall(home).find(
        (b) => b.type === 'section' && String(b.text?.text ?? '').startsWith(`*${this.machine}*`),
      );
      const shown = /^\*[^*]+\* · \*([a-z-]+)\*/.exec(String(row?.text?.text ?? ''))?.[1];
      if (shown !== state) {
        violated(
          `the Home tab of its maker (${maker}) shows ${this.machine} as ${shown ?? 'missing'}, but the requests that succeeded leave it ${state}`,
        );
      }
    }
    const button = lastButton(stack, maker, this.machine, this.label);
    // The product never showed this button for this machine (its state): nothing to press.
    if (button) {
      const what = `${this.label} of ${this.machine} pressed on a Home tab by ${who.name}`;
      const outcome = await pressed(stack, who, button, this.label, what);
      // Kept out at the door (a guest, another workspace): the refusal shows no machine at all.
      if (outcome.kind === 'refused' && !mayUse(who.standing)) {
        const shown = MACHINES.filter((m) => outcome.text.includes(m));
        if (shown.length > 0)
          violated(`${what} was refused naming ${shown.join(' and ')}: "${outcome.text}"`);
      }
      if (!isOneSentence(outcome.text) && outcome.kind !== 'ran') {
        violated(`${what} was answered in more than a sentence: "${outcome.text}"`);
      }
      trace(`${outcome.kind}: ${outcome.text}`);
      // A button of a machine since removed: refused, or its job says the machine is gone; never Done.
      if (
        state === 'absent' &&
        outcome.kind === 'ran' &&
        !/no instance|not found|no longer|gone/i.test(outcome.text)
      )
        violated(`${what}, a stale button of a removed machine, ended "${outcome.text}"`);
      await apply(model, real, who, verb, this.machine, outcome, false, what);
    } else {
      trace(`no ${this.label} button of ${this.machine} was ever published: nothing pressed`);
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `${this.who} presses ${this.label} of ${this.machine} on a Home tab`;
  }
}
