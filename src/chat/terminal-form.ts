import type { ChatIo } from './chat-io.js';
import type { LocalSlackApi, LocalView } from './local-slack-api.js';
import { answerField, type FormField, fieldPrompt, formFields, type StateValue } from './render-form.js';
import type { RenderContext, TerminalStyle } from './render-terminal.js';
import { type Actor, type TerminalReceiver, viewSubmissionBody } from './terminal-receiver.js';

// A modal in the terminal chat: each field asked in turn, the view submitted as Slack would, and the
// bot's answer followed (field errors asked again, an updated or pushed view filled next).

/** What filling a form needs of the chat. */
export interface FormHost {
  readonly slack: LocalSlackApi;
  readonly receiver: TerminalReceiver;
  readonly io: ChatIo;
  readonly style: TerminalStyle;
  readonly actor: Actor;
  readonly context: RenderContext;
  say(...lines: string[]): void;
  read(prompt: string): Promise<string | undefined>;
  /** Gives a script line back to the chat: the form was dropped and the line runs next. */
  pushBack(text: string): void;
}

type Values = Record<string, Record<string, StateValue>>;

/** A field's name for an inline answer: its label or block id, lower case, `_` between words. */
const fieldName = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

function answerFor(field: FormField, answers: Readonly<Record<string, string>>): string | undefined {
  const names = [fieldName(field.label), fieldName(field.blockId)];
  const key = Object.keys(answers).find((k) => names.includes(fieldName(k)));
  return key === undefined ? undefined : answers[key];
}

/**
 * Asks for each field of the form, submits it, and follows what the bot answers. `answers` (given on
 * the line that opened the form, by field name) fill their fields instead of a prompt.
 */
export async function fillForm(
  host: FormHost,
  viewId: string,
  answers: Readonly<Record<string, string>> = {},
): Promise<string | undefined> {
  const { slack, receiver, io, style } = host;
  let inline = answers;
  let id = viewId;
  let values: Values = {};
  let only: Set<string> | undefined;
  for (;;) {
    const view: LocalView | undefined = slack.view(id);
    if (!view || view.closed) return undefined;
    const fields = formFields(view.view, host.context);
    if (fields.length === 0) {
      host.say(
        style.dim(
          '(This form has nothing to fill in; it is closed. Press its buttons by number before, if any.)',
        ),
        '',
      );
      slack.closeView(id);
      return undefined;
    }
    const unknown = Object.keys(inline).filter(
      (name) => !fields.some((f) => answerFor(f, { [name]: '' }) !== undefined),
    );
    if (unknown.length > 0) {
      slack.closeView(id, true);
      const names = fields.map((f) => fieldName(f.label)).join(', ');
      const reason = `this form has no field ${unknown.join(', ')}; its fields are ${names}, so it was closed`;
      host.say(`✗ ${reason[0]?.toUpperCase()}${reason.slice(1)}.`, '');
      return reason;
    }
    for (const field of fields) {
      if (only && !only.has(field.blockId)) continue;
      const given = answerFor(field, inline);
      const answer = given === undefined ? await askField(host, field) : giveField(host, field, given);
      if (answer === 'cancel') {
        slack.closeView(id, true);
        host.say(style.dim('Form cancelled.'), '');
        return io.interactive ? undefined : 'the form was cancelled';
      }
      if (typeof answer === 'string') {
        slack.closeView(id, true);
        return answer;
      }
      values = { ...values, [field.blockId]: { [field.actionId]: answer } };
    }
    // Answers given inline are for the form the line opened, not for one the bot shows next.
    inline = {};
    const actor = host.actor;
    const { response } = await receiver.deliver(
      viewSubmissionBody(actor, view, values, slack.issueTrigger(actor.userId)),
    );
    const action = (response ?? {}) as {
      response_action?: string;
      errors?: Record<string, string>;
      view?: Record<string, unknown>;
    };
    switch (action.response_action) {
      case 'errors': {
        const errors = action.errors ?? {};
        const labelOf = (blockId: string) => fields.find((f) => f.blockId === blockId)?.label ?? blockId;
        host.say(...Object.entries(errors).map(([block, message]) => `✗ ${labelOf(block)}: ${message}`));
        if (!io.interactive) {
          slack.closeView(id, true);
          host.say(style.dim('Form closed.'), '');
          return `the form was refused: ${Object.values(errors).join(' ')}`;
        }
        host.say(style.dim('Fix the fields above (or /cancel):'));
        only = new Set(Object.keys(errors));
        continue;
      }
      case 'update':
      case 'push': {
        if (!action.view) return undefined;
        const next = slack.replaceView(id, action.view, action.response_action === 'push');
        if (!next) return undefined;
        id = next.id;
        values = {};
        only = undefined;
        continue;
      }
      case 'clear':
        slack.closeView(id, true);
        host.say(style.dim('Form submitted.'), '');
        return undefined;
      default:
        slack.closeView(id);
        host.say(style.dim('Form submitted.'), '');
        return undefined;
    }
  }
}

/** A field answered inline: shown as if typed at its prompt, refused as a typed answer would be. */
function giveField(host: FormHost, field: FormField, given: string): StateValue | string {
  host.say(`${field.label}: ${given}`);
  const answer = answerField(field, given);
  if (answer.ok) return answer.state as StateValue;
  host.say(`✗ ${answer.error}`);
  return `${field.label}: ${answer.error}`;
}

/** One field: its prompt, then the answer as Slack's state, 'cancel', or a failure sentence (scripts). */
async function askField(host: FormHost, field: FormField): Promise<StateValue | 'cancel' | string> {
  const { io } = host;
  for (;;) {
    const { lines, prompt } = fieldPrompt(field);
    host.say(...lines);
    const typed = await host.read(prompt);
    if (typed === undefined) return 'the input ended inside a form';
    if (typed.trim() === '/cancel') return 'cancel';
    if (!io.interactive && /^\/(gpu|as|user|channel|press|quit|exit|help|people)\b/.test(typed.trim())) {
      // The script moved on before answering every field: the form is dropped, the line runs next.
      host.pushBack(typed);
      return `the script gave "${typed.trim().slice(0, 40)}" where "${field.label}" was due, so the form was dropped`;
    }
    const answer = answerField(field, typed);
    if (answer.ok) return answer.state as StateValue;
    host.say(`✗ ${answer.error}`);
    if (!io.interactive) return `${field.label}: ${answer.error}`;
  }
}
