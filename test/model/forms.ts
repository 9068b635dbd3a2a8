import type fc from 'fast-check';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import type { BotStack } from '../support/bot-stack.js';
import { type Block, openHome } from '../support/home-driver.js';
import { blockActionsPayload, filledValues, viewSubmissionPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { finalAnswer, messageAbout, postAbout } from './answers.js';
import { checkWorld, type Model, type Real, violated } from './model.js';
import { apply, commandText, expectation, type Outcome } from './typed.js';
import {
  type Actor,
  actor,
  isOneSentence,
  MACHINE_TYPE,
  MACHINES,
  mayChange,
  mayUse,
  REQUEST_CHANNEL,
  trace,
} from './world.js';

// The create-instance form: opened by `/gpu create` typed bare in the request channel, or by the Home
// tab's "Create a machine…" button (its request is then made in the person's DM with the app), filled
// in and submitted (a signed view_submission of the view the product opened, read from the fake Slack).
// A field the form cannot take is answered on that field in one sentence and nothing changes; a
// well-filled form is a `/gpu create` under the same policy model as a typed one (typed.ts).

/** What the person types into the form. */
export type Fill = 'valid' | 'bad-name' | 'no-type' | 'bad-tags' | 'unknown-type';

/** The block a fill's error must be on, when the form itself (not the policy) refuses it. */
const ERROR_ON: Partial<Record<Fill, readonly string[]>> = {
  'bad-name': ['name'],
  'no-type': ['type', 'type_other'],
  'bad-tags': ['tags'],
};

type InputBlock = { block_id?: string; type?: string; element?: { type: string; action_id: string } };

/** The form once it can be filled in: a view that opens loading is filled in place (views.update). */
async function filledForm(stack: BotStack, viewId: string, what: string): Promise<StoredView> {
  return until(
    `${what} to be ready`,
    () => {
      const v = stack.slack.views.get(viewId);
      const blocks = (v?.view.blocks ?? []) as InputBlock[];
      return blocks.some((b) => b.block_id === 'name') ? v : undefined;
    },
    15_000,
  ).catch(() => violated(`${what} never showed its fields`));
}

/** Opens the form as `who`; the view and the channel its request is made in. */
async function openForm(stack: BotStack, who: Actor, via: 'typed' | 'home', what: string) {
  const triggerId = stack.slack.issueTriggerId();
  const since = stack.slack.mark();
  let channel = REQUEST_CHANNEL;
  // A form opened by `/gpu create` carries that command's response_url: a private answer may go there.
  let responseUrl: string | undefined;
  if (via === 'typed') {
    const typed = await stack.command('create', {
      userId: who.id,
      userName: who.name,
      channelId: REQUEST_CHANNEL,
      triggerId,
    });
    const { response } = typed;
    responseUrl = typed.responseUrl;
    if (response.status !== 200) violated(`${what} got HTTP ${response.status}`);
    // Refused before the form opens (a role that may not create): one sentence, nothing opened.
    if (response.text.trim() !== '') {
      const refusal = String((JSON.parse(response.text) as { text?: string }).text ?? '');
      if (mayChange(who.standing)) violated(`"/gpu create" as ${who.name} was refused: "${refusal}"`);
      if (!isOneSentence(refusal))
        violated(`"/gpu create" as ${who.name} was refused in more than a sentence: "${refusal}"`);
      trace(`refused before the form opened: ${refusal}`);
      return undefined;
    }
  } else {
    channel = `D${who.id.slice(1)}`;
    await openHome(stack, who.id, channel);
    const home = await stack.slack
      .waitFor(
        'views.publish',
        (c) => c.body.user_id === who.id && JSON.stringify(c.body.view).includes('Create a machine…'),
        20_000,
        since,
      )
      .catch(() => violated(`${who.name}'s Home tab was not published with its "Create a machine…" button`));
    const button = ((home.body.view as { blocks: Block[] }).blocks ?? [])
      .flatMap((b) => b.elements ?? [])
      .find((e) => (e.text as { text?: string } | undefined)?.text === 'Create a machine…')!;
    const response = await stack.interact(
      blockActionsPayload({
        actionId: String(button.action_id),
        value: String(button.value),
        userId: who.id,
        userName: who.name,
        triggerId,
        view: { id: `VHOME${who.id}`, type: 'home', hash: 'h', blocks: [] },
      }),
    );
    if (response.status !== 200) violated(`${what} got HTTP ${response.status}`);
  }
  const opened = await stack.slack
    .waitFor('views.open', (c) => c.body.trigger_id === triggerId, 10_000, since)
    .catch(() => violated(`${what} opened no form`));
  const id = (opened.response as { view?: { id?: string } }).view?.id;
  if (!id) violated(`${what}: Slack refused the form: ${JSON.stringify(opened.response)}`);
  return { view: await filledForm(stack, id, what), channel, ...(responseUrl ? { responseUrl } : {}) };
}

function fieldsFor(fill: Fill, machine: string, blocks: readonly InputBlock[]): Record<string, string> {
  const typeBlock = blocks.some((b) => b.block_id === 'type_other') ? 'type_other' : 'type';
  switch (fill) {
    case 'valid':
      return { name: machine, [typeBlock]: MACHINE_TYPE };
    case 'bad-name':
      return { name: `${machine} please!`, [typeBlock]: MACHINE_TYPE };
    case 'no-type':
      return { name: machine };
    case 'bad-tags':
      return { name: machine, [typeBlock]: MACHINE_TYPE, tags: 'team' };
    case 'unknown-type':
      // Typed, so that no list can hold it.
      return {
        name: machine,
        [blocks.some((b) => b.block_id === 'type_other') ? 'type_other' : 'type']: 'notatype.1x',
      };
  }
}

/** Submits the form and follows it to what the person sees: the form's errors, or the job's message. */
async function submitted(
  stack: BotStack,
  who: Actor,
  view: StoredView,
  { channel, responseUrl }: { readonly channel: string; readonly responseUrl?: string | undefined },
  fields: Record<string, string>,
  what: string,
): Promise<Outcome & { readonly errors?: Record<string, string> }> {
  const blocks = view.view.blocks as InputBlock[];
  const since = stack.slack.mark();
  const response = await stack.interact(
    viewSubmissionPayload({
      callbackId: String(view.view.callback_id),
      userId: who.id,
      userName: who.name,
      values: filledValues(blocks, fields),
      privateMetadata: String(view.view.private_metadata),
      viewId: view.id,
      hash: view.hash,
      blocks: blocks as unknown[],
    }),
  );
  if (response.status !== 200) violated(`${what} got HTTP ${response.status}`);
  if (response.text.trim() !== '') {
    const body = JSON.parse(response.text) as {
      response_action?: string;
      errors?: Record<string, string>;
      view?: { blocks?: Block[] };
    };
    if (body.response_action === 'errors' && body.errors) {
      for (const [block, error] of Object.entries(body.errors)) {
        if (!isOneSentence(error)) violated(`${what} got more than a sentence on ${block}: "${error}"`);
        if (!blocks.some((b) => b.block_id === block && b.type === 'input'))
          violated(`${what} got an error on "${block}", which the form has no field for`);
      }
      return { kind: 'refused', text: Object.values(body.errors).join(' '), errors: body.errors };
    }
    if (body.response_action === 'update') {
      return { kind: 'refused', text: String(body.view?.blocks?.[0]?.text?.text ?? '') };
    }
    violated(`${what} was answered with ${response.text.slice(0, 200)}`);
  }
  // The form closed: the request's message (or its wait for an approver) in the form's channel.
  // Where Slack refused the post there (`not_in_channel`), the answer goes to the person privately.
  const request = commandText('create', String(fields.name));
  const posted = await postAbout(stack, request, since, channel).catch(() =>
    violated(`${what} closed the form, but no message about its request came in ${channel}`),
  );
  if (
    (posted.response as { ok?: boolean }).ok === true &&
    String(posted.body.text).startsWith('Waiting for approval')
  )
    return { kind: 'approval', text: String(posted.body.text) };
  const final = await finalAnswer(stack, who, request, {
    since,
    ...(responseUrl ? { responseUrl } : {}),
    channelTs: messageAbout(stack, request, since, channel),
    what,
    channel,
  });
  return { kind: 'ran', text: final.text, final: final.phase === 'Done' ? 'Done' : 'Failed' };
}

export class FormSubmit implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly who: string,
    readonly via: 'typed' | 'home',
    readonly fill: Fill,
    readonly machine: string,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const who = actor(this.who);
    const what = `the create form ${this.via === 'home' ? 'from the Home tab' : 'of "/gpu create"'} submitted by ${who.name} (${this.fill} ${this.machine})`;
    if (!mayUse(who.standing)) {
      // Kept out at the door: the form does not open, and the refusal names no machine.
      const since = stack.slack.mark();
      const { response } = await stack.command('create', {
        userId: who.id,
        userName: who.name,
        channelId: REQUEST_CHANNEL,
        triggerId: stack.slack.issueTriggerId(),
      });
      const reply = response.text.trim() === '' ? '' : String(JSON.parse(response.text).text ?? '');
      if (!isOneSentence(reply))
        violated(`"/gpu create" as ${who.name} was not refused in a sentence: "${reply}"`);
      if (MACHINES.some((m) => reply.includes(m)))
        violated(`"/gpu create" as ${who.name} names a machine: "${reply}"`);
      if (stack.slack.calls.slice(since).some((c) => c.method === 'views.open'))
        violated(`"/gpu create" as ${who.name} opened a form though the policy keeps them out`);
    } else {
      const form = await openForm(stack, who, this.via, what);
      if (form) await this.fillIn(model, real, who, form, what);
    }
    await checkWorld(model, real);
  }
  private async fillIn(
    model: Model,
    real: Real,
    who: Actor,
    { view, channel, responseUrl }: { view: StoredView; channel: string; responseUrl?: string },
    what: string,
  ): Promise<void> {
    const { stack } = real;
    {
      const fields = fieldsFor(this.fill, this.machine, view.view.blocks as InputBlock[]);
      const outcome = await submitted(stack, who, view, { channel, responseUrl }, fields, what);
      trace(`${outcome.kind}: ${outcome.text}`);
      if (this.fill === 'valid') {
        await apply(model, real, who, 'create', this.machine, outcome, false, what);
      } else {
        if (outcome.kind !== 'refused')
          violated(`${what} was taken though a field is wrong: "${outcome.text}"`);
        // A type the cloud does not sell, in a request the policy would let run, is answered on the type.
        const runs = expectation(model, who, 'create', this.machine).kind === 'runs';
        const on = this.fill === 'unknown-type' && runs ? ['type', 'type_other'] : ERROR_ON[this.fill];
        const at = Object.keys(outcome.errors ?? {});
        if (on && !at.some((b) => on.includes(b)))
          violated(
            `${what} was refused on ${at.join(' and ') || 'no field'}, not on ${on.join(' or ')}: "${outcome.text}"`,
          );
      }
    }
    await checkWorld(model, real);
  }
  toString(): string {
    const fields =
      this.fill === 'valid'
        ? `${this.machine} ${MACHINE_TYPE}`
        : `${this.machine} with ${this.fill.replace('-', ' ')}`;
    return `${this.who} submits the create form (${this.via === 'home' ? 'from Home' : 'from /gpu create'}): ${fields}`;
  }
}
