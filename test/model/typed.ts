import type fc from 'fast-check';
import { buttonsOf, buttonValue } from '../e2e/guardrails-kit.js';
import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { finalAnswer, messageAbout } from './answers.js';
import {
  checkWorld,
  type Model,
  type PendingApproval,
  type Real,
  stateAfter,
  type Verb,
  violated,
} from './model.js';
import {
  type Actor,
  APPROVAL_CHANNEL,
  actor,
  isOneSentence,
  MACHINE_TYPE,
  mayChange,
  mayUse,
  REQUEST_CHANNEL,
} from './world.js';

// Typed `/gpu start|stop|rm|create` as one person, once or twice at the same moment (a double send),
// checked against the model: the policy's decision, the one final answer, the machine's state.

export const commandText = (verb: Verb, machine: string) =>
  verb === 'create' ? `create ${machine} ${MACHINE_TYPE}` : `${verb} ${machine}`;

/** What the model expects of a change asked by `who`. */
export function expectation(model: Model, who: Actor, verb: Verb, machine: string) {
  const state = model.machines[machine];
  if (!mayUse(who.standing)) return { kind: 'refused', audited: false } as const;
  const exists = state !== 'absent';
  if (verb === 'create' ? exists : !exists) return { kind: 'refused', audited: false } as const;
  // While degraded, a viewer's refusal may name the missing replica rather than the role.
  if (!mayChange(who.standing)) return { kind: 'refused', audited: !model.degraded } as const;
  // Without a replica (Sentinel): every change is refused in one sentence before anything is stored.
  if (model.degraded) return { kind: 'refused', audited: false, degraded: true } as const;
  if (verb === 'rm') return { kind: 'approval' } as const;
  // A start of a running machine or a stop of a stopped one may be refused or run: either way it stays.
  const noop = (verb === 'start' && state === 'running') || (verb === 'stop' && state === 'stopped');
  return { kind: 'runs', noop } as const;
}

export interface Outcome {
  readonly kind: 'refused' | 'repeat' | 'approval' | 'ran';
  readonly text: string;
  readonly final?: 'Done' | 'Failed';
  /** Where the ask left (a mark of the fake Slack, its response_url): an approved one answers there too. */
  readonly asked?: { readonly since: number; readonly responseUrl: string };
}

/** Sends one `/gpu` line and follows it to what the person ends up seeing. */
async function send(stack: BotStack, who: Actor, text: string): Promise<Outcome> {
  const since = stack.slack.mark();
  const { response, responseUrl } = await stack.command(text, {
    userId: who.id,
    userName: who.name,
    channelId: REQUEST_CHANNEL,
  });
  if (response.status !== 200) violated(`"/gpu ${text}" as ${who.name} got HTTP ${response.status}`);
  const reply =
    response.text.trim() === '' ? '' : String((JSON.parse(response.text) as { text?: string }).text);
  if (reply.startsWith('Already on it')) return { kind: 'repeat', text: reply };
  if (reply.includes('needs an approval'))
    return { kind: 'approval', text: reply, asked: { since, responseUrl } };
  if (reply !== '') return { kind: 'refused', text: reply };
  // The request's message (the post Slack took; a rate-limited or refused attempt is recorded too,
  // without a message), or, where the bot could not post it, a private answer (answers.ts).
  const channelTs = messageAbout(stack, text, since);
  const final = await finalAnswer(stack, who, text, {
    since,
    responseUrl,
    channelTs,
    what: `"/gpu ${text}" as ${who.name}`,
  });
  return { kind: 'ran', text: final.text, final: final.phase === 'Done' ? 'Done' : 'Failed' };
}

/**
 * Applies one outcome to the model, failing where the stack answered what the model forbids. `door`
 * names the request in what it reports when it came another way than typed (a Home button, a form).
 */
export async function apply(
  model: Model,
  real: Real,
  who: Actor,
  verb: Verb,
  machine: string,
  outcome: Outcome,
  double: boolean,
  door?: string,
) {
  const text = commandText(verb, machine);
  const want = expectation(model, who, verb, machine);
  const label = door ?? `"/gpu ${text}" as ${who.name}`;
  switch (outcome.kind) {
    case 'repeat': {
      const pending = model.pending.find((p) => p.text === text && p.seq === model.lastAsk[machine]);
      if (!pending && !double) {
        violated(`${label} was answered "${outcome.text}" though no such request is pending`);
      }
      return;
    }
    case 'refused': {
      // Behind Sentinel a change whose job no replica confirmed in time is refused with "try again":
      // nothing was stored, nothing changes, and the person knows.
      const notStored = real.replication !== undefined && /try again|send it again/i.test(outcome.text);
      if (!notStored && (want.kind === 'approval' || (want.kind === 'runs' && !want.noop))) {
        violated(`${label} was refused though the policy allows it: "${outcome.text}"`);
      }
      if (!isOneSentence(outcome.text))
        violated(`${label} was refused in more than a sentence: "${outcome.text}"`);
      if (want.kind === 'refused' && want.audited) model.refused.push({ verb, machine, actor: who.id });
      return;
    }
    case 'approval': {
      // While degraded an ask for approval may still reach the approver (nothing is queued yet): it is
      // then held like any other pending approval, and must not be lost.
      if (want.kind !== 'approval' && !(want.kind === 'refused' && 'degraded' in want))
        violated(`${label} went to an approver though the model expects ${want.kind}`);
      const known = new Set([...model.pending, ...model.closed].map((p) => p.card.ts));
      const pending = await cardOf(real.stack, text, known);
      model.seq += 1;
      model.lastAsk[machine] = model.seq;
      model.pending.push({
        ...pending,
        text,
        requester: who,
        verb,
        machine,
        seq: model.seq,
        ...(outcome.asked ? { asked: outcome.asked } : {}),
      });
      return;
    }
    case 'ran':
      // A name taken or gone between the listener's check and the job: the job may say so itself.
      if (want.kind === 'refused' && !want.audited && mayUse(who.standing) && outcome.final === 'Failed') {
        model.ran.push({ verb, machine, actor: who.id, failed: true });
        return;
      }
      if (want.kind !== 'runs')
        violated(`${label} ran though the model expects ${want.kind}: "${outcome.text}"`);
      model.seq += 1;
      model.lastAsk[machine] = model.seq;
      if (verb === 'create') model.createsAccepted[machine] = (model.createsAccepted[machine] ?? 0) + 1;
      model.ran.push({ verb, machine, actor: who.id });
      if (outcome.final === 'Done') model.machines[machine] = stateAfter(verb);
      return;
  }
}

/** The approval card for `text` (the latest) and the requester's own message. */
async function cardOf(stack: BotStack, text: string, known: ReadonlySet<string>) {
  // A card not seen before that still has its buttons (an earlier one for the same line may be closed).
  const card = await until(
    `the approval card of /gpu ${text}`,
    () =>
      stack.slack
        .messages(APPROVAL_CHANNEL)
        .filter(
          (m) =>
            !known.has(m.ts) &&
            JSON.stringify(m.blocks ?? []).includes(`/gpu ${text}`) &&
            buttonsOf(m.blocks).some((b) => b.text.text === 'Approve'),
        )
        .at(-1),
    10_000,
  );
  const id = buttonValue(card, 'Approve');
  const mine = stack.slack
    .messages(REQUEST_CHANNEL)
    .filter(
      (m) => String(m.text).startsWith('Waiting for approval') && String(m.text).includes(`/gpu ${text}`),
    )
    .at(-1);
  return { id, card, requesterTs: mine?.ts };
}

export class TypedChange implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly verb: Verb,
    readonly machine: string,
    readonly double: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const who = actor(this.who);
    const text = commandText(this.verb, this.machine);
    const outcomes = this.double
      ? await Promise.all([send(real.stack, who, text), send(real.stack, who, text)])
      : [await send(real.stack, who, text)];
    // Of a double send, the one that ran (or waits) goes first: the other may be its repeat.
    const order = { ran: 0, approval: 0, refused: 1, repeat: 2 } as const;
    outcomes.sort((a, b) => order[a.kind] - order[b.kind]);
    if (this.double && outcomes.filter((o) => o.kind === 'approval').length > 1) {
      violated(`"/gpu ${text}" sent twice at once as ${who.name} went to the approvers twice`);
    }
    for (const o of outcomes) await apply(model, real, who, this.verb, this.machine, o, this.double);
    await checkWorld(model, real);
  }
  toString(): string {
    return `${this.double ? 'twice at once: ' : ''}/gpu ${commandText(this.verb, this.machine)} as ${this.who}`;
  }
}

export type { PendingApproval };
