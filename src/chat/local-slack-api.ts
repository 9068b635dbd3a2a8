import {
  type EphemeralMessage,
  type FakeActivity,
  FakeSlackApi,
  type MessageVersion,
  type ResponseOrigin,
  type ResponsePlace,
  type StoredView,
} from '../devkit/fake-slack-api.js';
import {
  type Activity,
  type LocalMessage,
  localMessage,
  type SavedFile,
  savedFile,
} from './local-activity.js';
import { renderView } from './render-form.js';
import {
  mrkdwnLines,
  PLAIN_STYLE,
  type RenderContext,
  type RenderedButton,
  renderMessage,
  type TerminalStyle,
} from './render-terminal.js';

// Slack for `gpuops demo`: the one fake of Slack's Web API (src/devkit/fake-slack-api.ts), which the
// bot's WebClient and Bolt talk to over loopback, shown in the terminal. Every change a person could
// see is PRINTED as they would see it in Slack: messages drawn from their Block Kit, edits, ephemeral
// answers, forms, shared files. Each numbered button is remembered, so the terminal chat can press it.

export interface DirectoryUser {
  readonly id: string;
  /** Account name, e.g. ada. */
  readonly name: string;
  readonly realName: string;
  readonly displayName: string;
  readonly tz?: string;
}

export interface LocalSlackOptions {
  /** Tokens accepted on Web API calls. */
  readonly tokens: readonly string[];
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;
  readonly users: readonly DirectoryUser[];
  /** Usergroup id → member ids. */
  readonly usergroups?: Readonly<Record<string, readonly string[]>>;
  /** Channel id → name, for headers and `<#C…>`. */
  readonly channels: Readonly<Record<string, string>>;
  /** Folder uploaded files are saved in (created when needed). */
  readonly filesDir: string;
  readonly print: (lines: readonly string[]) => void;
  readonly style: TerminalStyle;
  /** The person at the keyboard now, so answers meant for them say "you". */
  readonly viewer: () => string;
  /** Told about a method the fake does not know (the demo prints it on stderr). */
  readonly onUnknownMethod?: (method: string) => void;
}

export type { MessageVersion, ResponseOrigin };
export type ButtonPlace = ResponsePlace;
export type LocalEphemeral = EphemeralMessage;
export type LocalView = StoredView;

export interface ButtonRef extends RenderedButton {
  readonly place: ButtonPlace;
}

type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;

export class LocalSlackApi {
  private readonly messages = new Map<string, LocalMessage>();
  private readonly buttons = new Map<number, ButtonRef>();
  private readonly log: Activity[] = [];
  private readonly listeners = new Set<() => void>();
  private seq = 0;
  private buttonNumber = 0;

  private constructor(
    private readonly fake: FakeSlackApi,
    private readonly options: LocalSlackOptions,
  ) {
    fake.onActivity((activity) => this.show(activity));
  }

  /** Starts on 127.0.0.1, on a free port. */
  static async start(options: LocalSlackOptions): Promise<LocalSlackApi> {
    const fake = await FakeSlackApi.start({
      tokens: options.tokens,
      teamId: options.teamId,
      botUserId: options.botUserId,
      botId: options.botId,
      users: options.users.map((u) => ({
        id: u.id,
        name: u.name,
        real_name: u.realName,
        display_name: u.displayName,
        ...(u.tz ? { tz: u.tz } : {}),
      })),
      ...(options.usergroups ? { usergroups: options.usergroups } : {}),
      filesDir: options.filesDir,
      // A person types forms slower than Slack's 3 s trigger lifetime allows a bot to open them.
      triggerLifetimeMs: 60_000,
      ...(options.onUnknownMethod ? { onUnknownMethod: options.onUnknownMethod } : {}),
    });
    return new LocalSlackApi(fake, options);
  }

  /** Workflow Builder's runs of custom steps, for `/step`. */
  get functionRuns(): FakeSlackApi['functionRuns'] {
    return this.fake.functionRuns;
  }

  /** SLACK_API_URL for the bot. */
  get apiUrl(): string {
    return this.fake.apiUrl;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.fake.close();
  }

  // ---------- for the terminal chat ----------

  /** Calls `listener` after every change anyone could see; returns how to stop listening. */
  onActivity(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A position in the activity log: pass it to `activitySince` to read only what came after. */
  mark(): number {
    return this.seq;
  }

  activitySince(mark: number): Activity[] {
    return this.log.filter((a) => a.seq > mark);
  }

  /**
   * The first line of a message as the chat draws it, without styles: mentions as @name, emphasis
   * without its marks, emoji as emoji (for summaries on standard error). From its text, else its blocks.
   */
  firstLineShown(content: {
    readonly text?: string | undefined;
    readonly blocks?: readonly unknown[] | undefined;
  }): string {
    const ctx = { ...this.renderContext(), style: PLAIN_STYLE };
    const lines =
      content.text !== undefined && content.text.trim() !== ''
        ? mrkdwnLines(content.text, ctx)
        : renderMessage({ blocks: content.blocks }, ctx).lines;
    return lines.find((line) => line.trim() !== '')?.trim() ?? '';
  }

  /** Channel messages whose job is still queued, working or waiting, as their text says. */
  inProgress(): LocalMessage[] {
    return [...this.messages.values()].filter(
      (m) => !m.deleted && /^(Queued|Working|Waiting)\b/.test(m.text ?? ''),
    );
  }

  /** A trigger id for an interaction by `userId`: views.open then knows whose form it is. */
  issueTrigger(userId: string): string {
    return this.fake.issueTriggerId(0, userId);
  }

  /** A fresh response_url for one request, served by the fake. */
  responseUrl(origin: ResponseOrigin): string {
    return this.fake.responseUrl(origin);
  }

  /** Shows a listener's immediate answer (the slash command's acknowledgement) to the requester alone. */
  showEphemeral(
    channel: string,
    user: string,
    content: { text?: string; blocks?: readonly unknown[] },
  ): void {
    this.fake.addEphemeral(channel, user, content, { replaced: false });
  }

  /** The button shown with this number, if any. */
  button(number: number): ButtonRef | undefined {
    return this.buttons.get(number);
  }

  /** The most recent button with this label (case-insensitive) that is still there. */
  buttonLabelled(label: string): ButtonRef | undefined {
    const wanted = label.trim().toLowerCase();
    const candidates = [...this.buttons.values()].filter((b) => b.text.trim().toLowerCase() === wanted);
    return candidates.reverse().find((b) => this.stillThere(b));
  }

  /** True while the button's message or form still carries it (edits can take buttons away). */
  stillThere(button: ButtonRef): boolean {
    const blocks = this.contentAt(button.place)?.blocks;
    if (!blocks) return false;
    const text = JSON.stringify(blocks);
    return (
      text.includes(JSON.stringify(button.actionId)) &&
      (button.value === undefined || text.includes(JSON.stringify(button.value)))
    );
  }

  /** The current content where a button sits, for the block_actions payload. */
  contentAt(place: ButtonPlace): { ts?: string; text?: string; blocks?: readonly unknown[] } | undefined {
    if (place.kind === 'message') {
      const m = this.fake.message(place.channel, place.ts);
      return m && !m.deleted ? { ts: m.ts, text: m.text ?? '', blocks: m.blocks ?? [] } : undefined;
    }
    if (place.kind === 'ephemeral') {
      const e = this.fake.ephemeral(place.id);
      return e ? { ts: e.id, text: e.text ?? '', blocks: e.blocks ?? [] } : undefined;
    }
    const v = this.fake.views.get(place.viewId);
    return v && !v.closed ? { blocks: (v.view.blocks as unknown[]) ?? [] } : undefined;
  }

  /** The form open on top for a person, if any. */
  topView(userId: string): LocalView | undefined {
    return this.fake.topView(userId);
  }

  /** The DM between a person and the bot, as Slack names it. */
  dmChannelOf(userId: string): string {
    return this.fake.dmChannelFor(userId);
  }

  view(id: string): LocalView | undefined {
    return this.fake.views.get(id);
  }

  /** Closes a form (submitted, cancelled); `all` closes the whole stack of that person. */
  closeView(id: string, all = false): void {
    this.fake.closeView(id, all);
  }

  /** Replaces a form's content as a `response_action: update|push` would. */
  replaceView(id: string, next: Record<string, unknown>, push: boolean): LocalView | undefined {
    return this.fake.replaceView(id, next, push);
  }

  message(channel: string, ts: string): LocalMessage | undefined {
    return this.messages.get(`${channel}:${ts}`);
  }

  /** Every file saved so far. */
  savedFiles(): SavedFile[] {
    return [...this.fake.files.values()].filter((f) => f.path !== undefined).map(savedFile);
  }

  // ---------- printing ----------

  private show(activity: FakeActivity): void {
    switch (activity.kind) {
      case 'message': {
        const key = `${activity.message.channel}:${activity.message.ts}`;
        let message = this.messages.get(key);
        if (!message) {
          message = localMessage(activity.message, this.messages.size + 1);
          this.messages.set(key, message);
        }
        this.printMessage(message, activity.edit);
        this.record({ kind: 'message', edit: activity.edit, message });
        return;
      }
      case 'deleted': {
        const message = this.messages.get(`${activity.message.channel}:${activity.message.ts}`);
        if (!message) return;
        this.options.print([this.options.style.dim(`#${message.number} deleted`), '']);
        this.record({ kind: 'deleted', message });
        return;
      }
      case 'ephemeral':
        this.printEphemeral(activity.ephemeral, activity.replaced);
        this.record({ kind: 'ephemeral', ephemeral: activity.ephemeral });
        return;
      case 'view':
        this.showView(activity.view, activity.updated);
        this.record({ kind: 'view', view: activity.view });
        return;
    }
  }

  private record(activity: WithoutSeq<Activity>): void {
    this.log.push({ ...activity, seq: ++this.seq });
    for (const listener of this.listeners) listener();
  }

  private renderContext(): RenderContext {
    return {
      style: this.options.style,
      userName: (id) => {
        if (id === this.options.botUserId) return this.options.botName;
        return this.fake.users.get(id)?.name;
      },
      channelName: (id) => this.options.channels[id],
      filePath: (id) => this.fake.files.get(id)?.path,
      // Slack shows each person times in their own zone: the demo's people each have one.
      timeZone: () => this.fake.users.get(this.options.viewer())?.tz,
    };
  }

  private who(userId: string | undefined): string {
    const name = (userId && this.fake.users.get(userId)?.name) ?? userId ?? 'someone';
    return userId === this.options.viewer() ? `you (@${name})` : `@${name}`;
  }

  private where(channel: string): string {
    if (channel.startsWith('D')) {
      const user = [...this.fake.users.values()].find((u) => this.fake.dmChannelFor(u.id) === channel);
      return user ? `a DM with ${this.who(user.id)}` : `DM ${channel}`;
    }
    const name = this.options.channels[channel];
    return name ? `#${name}` : channel;
  }

  private numberButtons(buttons: readonly RenderedButton[], place: ButtonPlace): void {
    for (const b of buttons) this.buttons.set(b.number, { ...b, place });
    if (buttons.length > 0) this.buttonNumber = Math.max(...buttons.map((b) => b.number));
  }

  private printMessage(message: LocalMessage, edit: boolean): void {
    const { style, botName } = this.options;
    const parent = message.threadTs ? this.message(message.channel, message.threadTs) : undefined;
    const head = edit
      ? `#${message.number} edited · ${botName} in ${this.where(message.channel)}`
      : `#${message.number} ${botName} in ${this.where(message.channel)}${parent ? `, reply to #${parent.number}` : ''}`;
    const body = renderMessage(
      {
        text: message.text,
        blocks: message.blocks,
        files: message.files.map((f) => ({ title: f.title, path: f.path ?? '(not saved)' })),
      },
      this.renderContext(),
      this.buttonNumber + 1,
    );
    this.numberButtons(body.buttons, { kind: 'message', channel: message.channel, ts: message.ts });
    this.options.print([style.bold(head), ...body.lines.map((line) => `  ${line}`), '']);
  }

  private printEphemeral(e: LocalEphemeral, replaced: boolean): void {
    const { style, botName } = this.options;
    const head = `only visible to ${this.who(e.user)} · ${botName} in ${this.where(e.channel)}${replaced ? ' (updated)' : ''}`;
    const body = renderMessage(
      { text: e.text, blocks: e.blocks },
      this.renderContext(),
      this.buttonNumber + 1,
    );
    this.numberButtons(body.buttons, { kind: 'ephemeral', id: e.id, channel: e.channel });
    this.options.print([style.dim(head), ...body.lines.map((line) => `  ${style.dim('┆')} ${line}`), '']);
  }

  private showView(view: LocalView, updated: boolean): void {
    const rendered = renderView(view.view, this.renderContext(), this.buttonNumber + 1);
    this.numberButtons(rendered.buttons, { kind: 'view', viewId: view.id });
    const head =
      view.view.type === 'home'
        ? `Home tab of ${this.who(view.user)}${updated ? ' (updated)' : ''}`
        : `${updated ? 'form updated' : 'form opened'} for ${this.who(view.user)}`;
    this.options.print([this.options.style.dim(head), ...rendered.lines, '']);
  }
}
