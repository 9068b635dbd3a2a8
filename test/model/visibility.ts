import type fc from 'fast-check';
import type { BotStack } from '../support/bot-stack.js';
import { type Block, openHome, published } from '../support/home-driver.js';
import { until } from '../support/until.js';
import { checkWorld, type Model, type Real, violated } from './model.js';
import {
  type Actor,
  actor,
  type CloudState,
  isOneSentence,
  MACHINES,
  mayRead,
  REQUEST_CHANNEL,
} from './world.js';

// The visibility invariant: what a person reads in `/gpu ls` and `/gpu show <machine>` is only what the
// policy lets them see, and (for those who may read) what the model says the cloud holds. A guest or a
// member of another workspace is refused in one sentence that names no machine; a reader sees every
// machine of the project, in the state the requests that succeeded left it, and nothing that is gone.

/** What `/gpu <text>` as `who` showed them: the listener's own answer, then the job's (answerAt). */
async function lookUp(stack: BotStack, who: Actor, text: string) {
  const since = stack.slack.mark();
  const { response, responseUrl } = await stack.command(text, {
    userId: who.id,
    userName: who.name,
    channelId: REQUEST_CHANNEL,
  });
  if (response.status !== 200) violated(`"/gpu ${text}" as ${who.name} got HTTP ${response.status}`);
  const reply =
    response.text.trim() === '' ? '' : String((JSON.parse(response.text) as { text?: string }).text ?? '');
  return { reply, responseUrl, since, who };
}

/**
 * The whole of the lookup's answer as a person reads it (its text and its blocks): posted to its
 * response_url, or, where Slack no longer took that (expired), an ephemeral or a DM (the reply port).
 */
async function answerAt(
  stack: BotStack,
  asked: { readonly responseUrl: string; readonly since: number; readonly who: Actor },
  what: string,
): Promise<string> {
  const dm = stack.slack.dmChannelFor(asked.who.id);
  const read = () => {
    const post = stack.responses.postsTo(asked.responseUrl)[0];
    if (post) return post.body;
    const privately = stack.slack.calls.find(
      (c) =>
        c.index >= asked.since &&
        (c.response as { ok?: boolean } | undefined)?.ok === true &&
        ((c.method === 'chat.postEphemeral' && c.body.user === asked.who.id) ||
          (c.method === 'chat.postMessage' && c.body.channel === dm)),
    );
    return privately?.body;
  };
  const body = await until(`the answer to ${what}`, read, 30_000).catch(() =>
    violated(`${what} was acknowledged but its answer never came`),
  );
  return `${String(body.text ?? '')} ${JSON.stringify(body.blocks ?? [])}`;
}

const named = (text: string) => MACHINES.filter((m) => new RegExp(`\\b${m}\\b`).test(text));

/** Refused as the policy wants a non-reader refused: one sentence, and no machine named in it. */
function refusedBlind(reply: string, label: string) {
  if (reply === '' || /Looking that up/.test(reply))
    violated(`${label} was answered though the policy refuses it`);
  if (!isOneSentence(reply)) violated(`${label} was refused in more than a sentence: "${reply}"`);
  const seen = named(reply);
  if (seen.length > 0) violated(`${label} was refused, but the refusal shows ${seen.join(', ')}: "${reply}"`);
}

export class ListMachines implements fc.AsyncCommand<Model, Real> {
  constructor(readonly who: string) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const label = `"/gpu ls" as ${who.name}`;
    const asked = await lookUp(stack, who, 'ls');
    const { reply } = asked;
    if (!mayRead(who.standing)) {
      refusedBlind(reply, label);
    } else {
      const shown = await answerAt(stack, asked, label);
      const rows = new Map<string, string>();
      for (const m of shown.matchAll(/\*([a-z0-9-]+)\* · [^·]+ · ([a-z-]+)/g)) rows.set(m[1]!, m[2]!);
      for (const name of MACHINES) {
        const want: CloudState = model.machines[name]!;
        const got = rows.get(name);
        if (want === 'absent' && got)
          violated(`${label} lists ${name} (${got}), which the cloud no longer holds`);
        if (want !== 'absent' && got !== want)
          violated(
            `${label} shows ${name} as ${got ?? 'missing'}, but the requests that succeeded leave it ${want}`,
          );
      }
      const strangers = [...rows.keys()].filter((n) => !(MACHINES as readonly string[]).includes(n));
      if (strangers.length > 0)
        violated(`${label} lists machines outside the project: ${strangers.join(', ')}`);
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `/gpu ls as ${this.who}`;
  }
}

export class ShowMachine implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly machine: string,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const label = `"/gpu show ${this.machine}" as ${who.name}`;
    const asked = await lookUp(stack, who, `show ${this.machine}`);
    const { reply } = asked;
    const want = model.machines[this.machine]!;
    if (!mayRead(who.standing)) {
      refusedBlind(reply, label);
    } else if (want === 'absent') {
      // Told it is not there, in one sentence (at once, or by the lookup's job).
      const text = reply && !/Looking that up/.test(reply) ? reply : await answerAt(stack, asked, label);
      if (!/no instance|not found|does not exist|no machine/i.test(text))
        violated(`${label} showed a machine the cloud no longer holds: "${text.slice(0, 300)}"`);
    } else {
      const text = await answerAt(stack, asked, label);
      if (!text.includes(this.machine))
        violated(`${label} did not name ${this.machine}: "${text.slice(0, 300)}"`);
      if (!new RegExp(`\\b${want}\\b`).test(text))
        violated(`${label} does not say ${this.machine} is ${want}: "${text.slice(0, 300)}"`);
      const others = named(text).filter((m) => m !== this.machine);
      if (others.length > 0) violated(`${label} also shows ${others.join(', ')}`);
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `/gpu show ${this.machine} as ${this.who}`;
  }
}

/** Who made each machine that exists now, as the model knows it: the last create that made it. */
function ownerOf(model: Model, machine: string): string | undefined {
  if (model.machines[machine] === 'absent') return undefined;
  return model.ran.filter((r) => r.verb === 'create' && r.machine === machine && !r.failed).at(-1)?.actor;
}

/** The machine names of the Home's "Your machines" rows (each row a section, then its buttons). */
function yourMachines(blocks: readonly Block[]): string[] {
  const start = blocks.findIndex((b) => String(b.text?.text ?? '').startsWith('*Your machines*'));
  if (start < 0) return [];
  const names: string[] = [];
  for (let i = start + 1; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.type === 'context') continue;
    if (b.type !== 'section' || blocks[i + 1]?.type !== 'actions') break;
    names.push(...named(String(b.text?.text ?? '')));
    i++;
  }
  return names;
}

/**
 * A person who may use gpuops opens their Home tab: "Your machines" lists only machines they made
 * through gpuops (guests and outsiders are left out: whether their Home is published at all cannot be
 * told apart from a slow publish without a fixed wait).
 */
export class HomeOpens implements fc.AsyncCommand<Model, Real> {
  constructor(readonly who: string) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const since = stack.slack.mark();
    await openHome(stack, who.id);
    const call = await published(stack, since, (t) => t.includes('Your machines'), who.id, 20_000).catch(() =>
      violated(`${who.name}'s Home tab was not published with their machines`),
    );
    const blocks = ((call.body.view as { blocks?: Block[] }).blocks ?? []) as Block[];
    // A row for a machine since removed is a stale row, not another person's machine: only the latter fails.
    const foreign = yourMachines(blocks).filter((m) => (ownerOf(model, m) ?? who.id) !== who.id);
    if (foreign.length > 0) {
      violated(
        `${who.name}'s Home lists ${foreign.map((m) => `${m} (made by ${ownerOf(model, m)})`).join(', ')} under "Your machines"`,
      );
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `${this.who} opens the Home tab`;
  }
}
