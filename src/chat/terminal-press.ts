import type { ButtonRef, LocalSlackApi } from './local-slack-api.js';
import type { TerminalStyle } from './render-terminal.js';
import { type Actor, blockActionsBody, type TerminalReceiver } from './terminal-receiver.js';

// `/press <number|label> [field=value…]` in the demo's chat: finds the button on screen and delivers
// its click as Slack would. Answers after the label fill the form the button opens (Deny asks for a
// reason), so a script can answer it on the same line: /press Deny reason="too big".

export interface PressHost {
  readonly slack: LocalSlackApi;
  readonly receiver: TerminalReceiver;
  readonly style: TerminalStyle;
  readonly actor: Actor;
  readonly say: (...lines: string[]) => void;
}

/** A form's answers given inline, by field name (its label or block id, any case). */
export type FormAnswers = Readonly<Record<string, string>>;

/** `name=value` or `name="a value with spaces"` (`\"` inside quotes is a quote). */
const ANSWER = /^([A-Za-z][\w-]*)=(?:"((?:[^"\\]|\\.)*)"|(\S*))$/;

/** Splits what follows /press into the button and the answers for the form it opens. */
export function splitPress(ref: string): { readonly button: string; readonly answers: FormAnswers } {
  const words = ref.trim().match(/[A-Za-z][\w-]*="(?:[^"\\]|\\.)*"|\S+/g) ?? [];
  let first = words.length;
  while (first > 0 && ANSWER.test(words[first - 1] ?? '')) first--;
  const answers: Record<string, string> = {};
  for (const word of words.slice(first)) {
    const [, name = '', quoted, bare] = ANSWER.exec(word) ?? [];
    answers[name] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : (bare ?? '');
  }
  return { button: words.slice(0, first).join(' '), answers };
}

/** Presses the button; resolves with the activity mark to follow, or why nothing was pressed. */
export async function pressButton(
  host: PressHost,
  wanted: string,
): Promise<{ readonly mark: number } | { readonly failed: string }> {
  const { slack, receiver, actor } = host;
  if (wanted === '') {
    host.say(
      'Say which button: /press 2, or /press Approve (and a form\'s answers: /press Deny reason="too big").',
    );
    return { failed: 'no button given' };
  }
  const button: ButtonRef | undefined = /^\d+$/.test(wanted)
    ? slack.button(Number(wanted))
    : slack.buttonLabelled(wanted);
  if (!button) {
    host.say(
      `There is no button ${/^\d+$/.test(wanted) ? `[${wanted}]` : `labelled "${wanted}"`} on screen; press one shown in [brackets], by its number or its label.`,
    );
    return { failed: `no button ${wanted}` };
  }
  if (!slack.stillThere(button)) {
    host.say(
      `Button [${button.number}] ${button.text} is gone: its message or form changed since; press the button of the newer version.`,
    );
    return { failed: `button ${button.number} is gone` };
  }
  const mark = slack.mark();
  const triggerId = slack.issueTrigger(actor.userId);
  const place = button.place;
  host.say(host.style.dim(`@${actor.userName} pressed [${button.number}] ${button.text}`));
  if (place.kind === 'view') {
    const view = slack.view(place.viewId);
    if (!view) return { failed: 'the form is gone' };
    await receiver.deliver(
      blockActionsBody(
        actor,
        button,
        { kind: 'view', view: { ...view.view, id: view.id, hash: view.hash } },
        triggerId,
      ),
    );
    return { mark };
  }
  const content = slack.contentAt(place) ?? {};
  const responseUrl = slack.responseUrl({ userId: actor.userId, channelId: place.channel, place });
  await receiver.deliver(
    blockActionsBody(
      actor,
      button,
      {
        kind: 'message',
        channelId: place.channel,
        message: content,
        ephemeral: place.kind === 'ephemeral',
        responseUrl,
      },
      triggerId,
    ),
  );
  return { mark };
}
