import type { ChatIo } from './chat-io.js';
import { answerTo, failuresSince } from './chat-outcome.js';
import { ackContent, CHAT_HELP, failureReason } from './chat-text.js';
import type { DirectoryUser, LocalSlackApi } from './local-slack-api.js';
import type { RenderContext, TerminalStyle } from './render-terminal.js';
import { fillForm } from './terminal-form.js';
import { type FormAnswers, pressButton, splitPress } from './terminal-press.js';
import { type Actor, homeOpenedBody, slashCommandBody, type TerminalReceiver } from './terminal-receiver.js';
import { reportStep, startStep } from './terminal-step.js';

// The chat loop of `gpuops demo`: reads lines (a person at a prompt, or a script), sends `/gpu …` to
// the bot through the terminal receiver as the acting user in the current channel, presses buttons by
// number or label, fills forms field by field, switches user and channel. In a script it waits for
// each line's jobs to settle and remembers every line that failed.

export interface ChatOptions {
  readonly receiver: TerminalReceiver;
  readonly slack: LocalSlackApi;
  readonly io: ChatIo;
  readonly style: TerminalStyle;
  readonly teamId: string;
  readonly people: readonly DirectoryUser[];
  /** What each person is for in the demo, shown by /people (e.g. "requester"). */
  readonly roles?: Readonly<Record<string, string>>;
  /** Channel id → name. */
  readonly channels: Readonly<Record<string, string>>;
  readonly userId: string;
  readonly channelId: string;
  /**
   * Waits until the jobs of the last request have settled: nothing queued or running, and no message
   * still saying Queued, Working or Waiting. Resolves with what is still pending when it gives up.
   */
  readonly settle: () => Promise<{ readonly ok: true } | { readonly ok: false; readonly pending: string }>;
  /** Why `/gpu <text>` is refused before it reaches a job (it does not parse, or not in this shape). */
  readonly refusal?: (text: string) => string | undefined;
}

export interface ChatFailure {
  /** Line number in the input (1-based). */
  readonly line: number;
  readonly input: string;
  readonly reason: string;
}

export interface ChatResult {
  readonly failures: readonly ChatFailure[];
  /** How many lines were read (comments, empty lines and form answers included). */
  readonly lines: number;
  /** How it ended: end of input, /quit, or Ctrl-C. */
  readonly ended: 'end' | 'quit' | 'interrupted';
}

export class TerminalChat {
  private userId: string;
  private channelId: string;
  private readonly failures: ChatFailure[] = [];
  private lineNumber = 0;
  private interrupted = false;
  private stopReading: (() => void) | undefined;
  /** A script line a form did not take (a command where a field's answer was due): read it next. */
  private pushedBack: { readonly text: string; readonly line: number } | undefined;
  /** Lines read so far, form answers included: the number of the last line read. */
  private linesRead = 0;

  constructor(private readonly options: ChatOptions) {
    this.userId = options.userId;
    this.channelId = options.channelId;
  }

  /** The person at the keyboard now. */
  get currentUser(): string {
    return this.userId;
  }

  get actor(): Actor {
    const user = this.person(this.userId);
    return {
      teamId: this.options.teamId,
      userId: this.userId,
      userName: user?.name ?? this.userId.toLowerCase(),
      channelId: this.channelId,
      channelName: this.options.channels[this.channelId] ?? this.channelId.toLowerCase(),
    };
  }

  /** Ctrl-C: stop reading; run() ends after the line in hand. */
  interrupt(): void {
    this.interrupted = true;
    this.stopReading?.();
  }

  async run(): Promise<ChatResult> {
    const { io } = this.options;
    io.onInterrupt(() => this.interrupt());
    for (;;) {
      if (this.interrupted) return this.result('interrupted');
      const line = await this.read(this.prompt());
      if (line === undefined) {
        return this.result(this.interrupted ? 'interrupted' : 'end');
      }
      const lineNumber = this.lineNumber;
      const input = line.trim();
      let outcome: { failed?: string; quit?: boolean };
      try {
        outcome = await this.handle(input);
      } catch (err) {
        outcome = { failed: (err as Error).message };
        this.say(`✗ ${(err as Error).message}`);
      }
      if (outcome.failed !== undefined) {
        this.failures.push({ line: lineNumber, input, reason: outcome.failed });
        if (!io.interactive)
          this.say(this.options.style.dim(`(line ${lineNumber} failed: ${failureReason(outcome.failed)})`));
      }
      if (outcome.quit) return this.result('quit');
    }
  }

  private result(ended: ChatResult['ended']): ChatResult {
    return { failures: this.failures, lines: this.linesRead, ended };
  }

  private read(prompt: string): Promise<string | undefined> {
    const back = this.pushedBack;
    if (back !== undefined) {
      this.pushedBack = undefined;
      this.lineNumber = back.line;
      if (!this.options.io.interactive) this.say(`${prompt}${back.text}`);
      return Promise.resolve(back.text);
    }
    return new Promise((resolve) => {
      this.stopReading = () => resolve(undefined);
      this.options.io.next(prompt).then(
        (line) => {
          if (line !== undefined) this.lineNumber = ++this.linesRead;
          resolve(line);
        },
        () => resolve(undefined),
      );
    });
  }

  private prompt(): string {
    const actor = this.actor;
    return `${actor.userName} in #${actor.channelName}› `;
  }

  private say(...lines: string[]): void {
    this.options.io.print(lines);
  }

  private person(ref: string): DirectoryUser | undefined {
    const wanted = ref.replace(/^@/, '').toLowerCase();
    return this.options.people.find((p) => p.id.toLowerCase() === wanted || p.name.toLowerCase() === wanted);
  }

  private async handle(input: string): Promise<{ failed?: string; quit?: boolean }> {
    if (input === '' || input.startsWith('#')) return {};
    if (/^\d+$/.test(input)) return this.press(input);
    const [word = '', ...rest] = input.split(/\s+/);
    const arg = rest.join(' ');
    switch (word.toLowerCase()) {
      case '/gpu':
        return this.command(arg);
      case '/press':
        return this.press(arg);
      case 'home':
      case '/home':
        return this.openHome();
      case '/step':
        return this.step(arg);
      case '/as':
      case '/user':
        return this.switchUser(arg);
      case '/channel':
        return this.switchChannel(arg);
      case '/people':
      case '/users':
        this.listPeople();
        return {};
      case '/help':
        this.say(...CHAT_HELP, '');
        return {};
      case '/quit':
      case '/exit':
        return { quit: true };
      case '/cancel':
        this.say(
          "There is no form open to cancel: /cancel closes a form that a button or /gpu create opened; type /help for the chat's commands.",
        );
        return {};
      default: {
        const what = word.startsWith('/')
          ? `${word} is not a command of this chat`
          : 'this chat only takes /gpu commands and its own /commands';
        this.say(`${what}: type /help to see them.`);
        return { failed: what };
      }
    }
  }

  private listPeople(): void {
    const roles = this.options.roles ?? {};
    this.say(
      'People in this demo:',
      ...this.options.people.map(
        (p) =>
          `  ${p.name.padEnd(8)} ${p.id.padEnd(10)} ${p.displayName || p.realName}${roles[p.id] ? ` — ${roles[p.id]}` : ''}${p.id === this.userId ? ' (you now)' : ''}`,
      ),
      'Channels:',
      ...Object.entries(this.options.channels).map(
        ([id, name]) => `  #${name.padEnd(14)} ${id}${id === this.channelId ? ' (here now)' : ''}`,
      ),
      '',
    );
  }

  private switchUser(ref: string): { failed?: string } {
    const person = this.person(ref.trim());
    if (!person) {
      const known = this.options.people.map((p) => `${p.name} (${p.id})`).join(', ');
      const reason = ref.trim() === '' ? 'say who: /as bob' : `nobody called "${ref.trim()}" here`;
      this.say(`${reason}; the people are ${known}.`);
      return { failed: reason };
    }
    this.userId = person.id;
    this.say(
      this.options.style.dim(
        `You are now ${person.name} (${person.displayName || person.realName}, ${person.id}).`,
      ),
    );
    return {};
  }

  private switchChannel(ref: string): { failed?: string } {
    const wanted = ref.trim().replace(/^#/, '');
    const byName = Object.entries(this.options.channels).find(([, name]) => name === wanted.toLowerCase());
    const id = byName?.[0] ?? (/^[CG][A-Z0-9]+$/.test(wanted) ? wanted : undefined);
    if (!id) {
      const known = Object.entries(this.options.channels)
        .map(([cid, name]) => `#${name} (${cid})`)
        .join(', ');
      const reason = wanted === '' ? 'say which: /channel ops' : `no channel "${wanted}"`;
      this.say(`${reason}; the channels are ${known}, or give any channel id such as C0NEW.`);
      return { failed: reason };
    }
    this.channelId = id;
    this.say(this.options.style.dim(`Now in #${this.actor.channelName}.`));
    return {};
  }

  // ---------- requests ----------

  private async command(text: string): Promise<{ failed?: string }> {
    const { slack, receiver } = this.options;
    const actor = this.actor;
    const mark = slack.mark();
    const refused = this.options.refusal?.(text);
    const responseUrl = slack.responseUrl({ userId: actor.userId, channelId: actor.channelId });
    const triggerId = slack.issueTrigger(actor.userId);
    const { response } = await receiver.deliver(slashCommandBody(actor, text, { responseUrl, triggerId }));
    const reply = ackContent(response);
    if (reply) slack.showEphemeral(actor.channelId, actor.userId, reply);
    const failed = await this.afterRequest(mark);
    if (refused === undefined || failed.failed !== undefined) return failed;
    // Refused before any job: the reason is what the bot answered (the tag given twice, the bad key).
    return { failed: answerTo(this.options.slack, actor.userId, mark) ?? refused };
  }

  /** Opens the acting person's Home tab, as clicking the app in Slack does: the bot publishes it. */
  private async openHome(): Promise<{ failed?: string }> {
    const actor = this.actor;
    const mark = this.options.slack.mark();
    await this.options.receiver.deliver(homeOpenedBody(actor, this.options.slack.dmChannelOf(actor.userId)));
    return this.afterRequest(mark);
  }

  /** A Workflow Builder step run, as a workflow would run it (src/chat/terminal-step.ts). */
  private async step(line: string): Promise<{ failed?: string }> {
    const chat = { ...this.options, actor: this.actor, say: (...lines: string[]) => this.say(...lines) };
    const mark = this.options.slack.mark();
    const started = await startStep(chat, line);
    if ('failed' in started) return started;
    const after = await this.afterRequest(mark);
    const reported = reportStep(chat, started);
    return reported.failed !== undefined ? reported : after;
  }

  private async press(ref: string): Promise<{ failed?: string }> {
    const { button, answers } = splitPress(ref);
    const host = { ...this.options, actor: this.actor, say: (...lines: string[]) => this.say(...lines) };
    const pressed = await pressButton(host, button);
    return 'failed' in pressed ? pressed : this.afterRequest(pressed.mark, answers);
  }

  /**
   * After a request: fill in a form it opened, wait for its jobs in a script, and say whether anything
   * people saw reports a failure. `answers` fill the form's fields by name instead of the next lines.
   */
  private async afterRequest(mark: number, answers: FormAnswers = {}): Promise<{ failed?: string }> {
    const { slack, io } = this.options;
    let formFailure: string | undefined;
    const opened = slack
      .activitySince(mark)
      .flatMap((a) =>
        // A Home tab is shown, not filled in: only forms are asked field by field.
        a.kind === 'view' && a.view.user === this.userId && !a.view.closed && a.view.view.type !== 'home'
          ? [a.view]
          : [],
      )
      .at(-1);
    if (opened) {
      // A form can open in a loading state that a job fills in: let that settle first.
      const settled = await this.options.settle();
      if (!settled.ok) return { failed: `still waiting for ${settled.pending}` };
      formFailure = await this.fillForm(opened.id, answers);
    } else if (Object.keys(answers).length > 0) {
      const given = Object.keys(answers).join(', ');
      formFailure = `${given} answers a form, and no form opened; press the button alone`;
      this.say(`✗ ${formFailure}.`);
    }
    if (!io.interactive) {
      const settled = await this.options.settle();
      if (!settled.ok) {
        this.say(`Still waiting for ${settled.pending}; going on with the next line.`);
        return { failed: `still waiting for ${settled.pending}` };
      }
    }
    if (formFailure !== undefined) return { failed: formFailure };
    const failed = failuresSince(this.options.slack, mark);
    return failed.length > 0 ? { failed: failed.join('; ') } : {};
  }

  // ---------- forms ----------

  private renderContext(): RenderContext {
    return { style: this.options.style };
  }

  /** Asks for each field of the form, submits it, and follows what the bot answers. */
  private fillForm(viewId: string, answers: FormAnswers): Promise<string | undefined> {
    return fillForm(
      {
        ...this.options,
        actor: this.actor,
        context: this.renderContext(),
        say: (...lines) => this.say(...lines),
        read: (prompt) => this.read(prompt),
        pushBack: (text) => {
          this.pushedBack = { text, line: this.lineNumber };
        },
      },
      viewId,
      answers,
    );
  }
}
