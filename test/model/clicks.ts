import type fc from 'fast-check';
import { APPROVE_ACTION, DENY_ACTION, DENY_CALLBACK } from '../../src/commands/approvals/render.js';
import type { BotStack } from '../support/bot-stack.js';
import { blockActionsPayload, viewSubmissionPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { holdApproved, settleApproved } from './failover.js';
import { checkWorld, type Model, type PendingApproval, type Real, violated } from './model.js';
import { type Actor, actor, expireAllPending, isOneSentence } from './world.js';

// What happens on an approval card: Approve, Deny with a reason, a click on a card already decided
// or expired, and the clock passing the requests' expiry.

const eligible = (who: Actor, p: PendingApproval) => who.standing === 'approver' && who.id !== p.requester.id;

/** A press of Approve or Deny on the card as `who`; resolves with the private answer it got, if any. */
async function press(stack: BotStack, p: PendingApproval, who: Actor, label: 'Approve' | 'Deny') {
  const since = stack.slack.mark();
  const responseUrl = stack.responses.newUrl();
  const triggerId = stack.slack.issueTriggerId();
  const response = await stack.interact(
    blockActionsPayload({
      actionId: label === 'Approve' ? APPROVE_ACTION : DENY_ACTION,
      value: p.id,
      text: label,
      userId: who.id,
      userName: who.name,
      ...(who.standing === 'outsider' ? { teamId: 'T0OTHER' } : {}),
      channelId: p.card.channel ?? '',
      message: { ts: p.card.ts, text: p.card.text ?? '', blocks: p.card.blocks ?? [] },
      responseUrl,
      triggerId,
    }),
  );
  if (response.status !== 200) violated(`${label} by ${who.name} got HTTP ${response.status}`);
  return { since, responseUrl, triggerId };
}

/** The one private sentence a refused click got (an ephemeral or a response_url post). */
async function refusalOf(stack: BotStack, who: Actor, since: number, responseUrl: string, what: string) {
  const text = await until(`an answer to ${what}`, async () => {
    const eph = stack.slack.calls.find(
      (c) => c.index >= since && c.method === 'chat.postEphemeral' && c.body.user === who.id,
    );
    if (eph) return String(eph.body.text);
    const post = stack.responses.posts.find((x) => responseUrl.endsWith(x.id));
    return post ? String(post.body.text) : undefined;
  });
  if (!isOneSentence(text)) violated(`${what} was refused in more than a sentence: "${text}"`);
  return text;
}

export class Click implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly label: 'Approve' | 'Deny',
    readonly pick: number,
    readonly stale: boolean,
  ) {}
  check(model: Model): boolean {
    return (this.stale ? model.closed : model.pending).length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const list = this.stale ? model.closed : model.pending;
    const p = list[this.pick % list.length]!;
    const who = actor(this.who);
    const what = `${this.label} on "/gpu ${p.text}" (${p.requester.name}'s) by ${who.name}`;
    const { since, responseUrl, triggerId } = await press(stack, p, who, this.label);
    if (this.stale || !eligible(who, p)) {
      await refusalOf(stack, who, since, responseUrl, what);
      const state = (await stack.guardrails.approvals.get(p.id))?.state;
      if (!this.stale && state !== 'pending') violated(`${what} was refused yet the request is now ${state}`);
    } else if (this.label === 'Approve') {
      model.pending.splice(model.pending.indexOf(p), 1);
      model.closed.push(p);
      if (model.degraded) await holdApproved(model, stack, p);
      else await settleApproved(model, stack, p);
    } else {
      await denyWithReason(stack, who, triggerId, since, what);
      model.pending.splice(model.pending.indexOf(p), 1);
      model.closed.push(p);
      await until(`the denial of "/gpu ${p.text}"`, async () =>
        (await stack.guardrails.approvals.get(p.id))?.state === 'denied' ? true : undefined,
      );
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return `${this.who} clicks ${this.label}${this.label === 'Deny' ? ' (reason "not now")' : ''} on ${this.stale ? 'a closed' : 'a pending'} card #${this.pick}`;
  }
}

async function denyWithReason(stack: BotStack, who: Actor, triggerId: string, since: number, what: string) {
  const opened = await stack.slack
    .waitFor('views.open', (c) => c.body.trigger_id === triggerId, 5_000, since)
    .catch(() => violated(`${what} opened no reason form`));
  const view = stack.slack.views.get((opened.response as { view: { id: string } }).view.id)!;
  if (view.view.callback_id !== DENY_CALLBACK) violated(`${what} opened ${String(view.view.callback_id)}`);
  const submitted = await stack.interact(
    viewSubmissionPayload({
      callbackId: DENY_CALLBACK,
      userId: who.id,
      values: { reason: { value: { type: 'plain_text_input', value: 'not now' } } },
      privateMetadata: String(view.view.private_metadata),
      viewId: view.id,
      blocks: view.view.blocks as unknown[],
    }),
  );
  if (submitted.status !== 200) violated(`the reason for ${what} got HTTP ${submitted.status}`);
}

// The expiry is a BullMQ job scheduler (every 200 ms here). A Redis restart that catches a worker
// fetching one of its jobs makes BullMQ schedule the next run only after its runRetryDelay, 15 s
// (the soak's seed -1013274900: "/gpu rm demo-2", two Redis restarts, then the clock: the model gave
// up at 15 s, the default of until()). 15 s + the period + the job itself, with room for a loaded machine.
const EXPIRY_WITHIN_MS = 30_000;

export class ClockPassesExpiry implements fc.AsyncCommand<Model, Real> {
  check(model: Model): boolean {
    return model.pending.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    await expireAllPending(stack);
    for (const p of [...model.pending]) {
      await until(
        `"/gpu ${p.text}" to expire`,
        async () => ((await stack.guardrails.approvals.get(p.id))?.state === 'expired' ? true : undefined),
        EXPIRY_WITHIN_MS,
      );
      model.pending.splice(model.pending.indexOf(p), 1);
      model.closed.push(p);
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return 'the clock passes every pending approval’s expiry';
  }
}
