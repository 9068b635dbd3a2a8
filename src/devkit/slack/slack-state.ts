import { EventEmitter } from 'node:events';
import { checkBlocks, checkView, LIMITS } from '../block-kit-limits.js';
import { FunctionRuns } from './function-runs.js';
import { answerResponseUrl } from './respond.js';
import { saveFileIn } from './save-file.js';
import {
  type EphemeralMessage,
  type FakeActivity,
  type FakeConversation,
  type FakeSlackOptions,
  type FakeUser,
  type MessageVersion,
  type RecordedCall,
  type ResponseOrigin,
  type StoredFile,
  type StoredMessage,
  type StoredView,
  TRIGGER_LIFETIME_MS,
  type UnexpectedRequest,
  type Violation,
} from './types.js';

// What the fake Slack holds and how it changes, as Slack would change it: messages and their edits,
// ephemeral messages, views on trigger ids that live 3 s, files, users and user groups, and the
// response_url of each request. Every change is also an activity, for whoever shows it (the demo).

type Json = Record<string, unknown>;

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class SlackState {
  readonly violations: Violation[] = [];
  readonly unexpected: UnexpectedRequest[] = [];
  readonly ephemerals: EphemeralMessage[] = [];
  readonly views = new Map<string, StoredView>();
  readonly files = new Map<string, StoredFile>();
  readonly users = new Map<string, FakeUser>();
  readonly usergroups = new Map<string, readonly string[]>();
  /** Conversations declared by the test (options.conversations, setConversation); others are public. */
  readonly conversations = new Map<string, FakeConversation>();
  /** Workflow Builder's runs of custom steps (function_executed, functions.complete*). */
  readonly functionRuns = new FunctionRuns();
  readonly teamId: string;
  readonly enterpriseId: string | undefined;
  readonly orgWideInstall: boolean;
  readonly botUserId: string;
  readonly botId: string;
  /** Whether the app has a Home tab (views.publish answers not_enabled otherwise). */
  readonly homeTabEnabled: boolean;
  /** URL apps.connections.open returns, for Socket Mode tests. */
  socketModeUrl: string | undefined;
  protected readonly events = new EventEmitter();
  protected readonly channels = new Map<string, StoredMessage[]>();
  protected readonly triggers = new Map<string, { issuedAt: number; used: boolean; user?: string }>();
  private readonly responseUrls = new Map<string, ResponseOrigin>();
  protected seq = 0;
  /** Where the fake listens: http://127.0.0.1:<port>. */
  baseUrl = '';

  constructor(protected readonly options: FakeSlackOptions) {
    this.teamId = options.teamId ?? 'T0FAKE';
    this.enterpriseId = options.enterpriseId;
    this.orgWideInstall = options.orgWideInstall ?? false;
    this.botUserId = options.botUserId ?? 'U0BOT';
    this.botId = options.botId ?? 'B0BOT';
    this.socketModeUrl = options.socketModeUrl;
    this.homeTabEnabled = options.homeTabEnabled ?? true;
    for (const user of options.users ?? []) this.users.set(user.id, user);
    for (const [id, members] of Object.entries(options.usergroups ?? {})) this.usergroups.set(id, members);
    for (const [id, c] of Object.entries(options.conversations ?? {})) this.conversations.set(id, c);
    this.events.setMaxListeners(0);
  }

  // ---------- reading ----------

  /** Messages of a channel in posting order (thread replies included), deleted ones left out. */
  messages(channel: string): StoredMessage[] {
    return (this.channels.get(channel) ?? []).filter((m) => !m.deleted);
  }

  /** Every message of every channel, deleted ones included. */
  allMessages(): StoredMessage[] {
    return [...this.channels.values()].flat();
  }

  /** Top-level messages only: what the channel shows now. */
  channelView(channel: string): StoredMessage[] {
    return this.messages(channel).filter((m) => m.threadTs === undefined || m.threadTs === m.ts);
  }

  /** Replies in a thread, oldest first. */
  thread(channel: string, threadTs: string): StoredMessage[] {
    return this.messages(channel).filter((m) => m.threadTs === threadTs && m.ts !== threadTs);
  }

  message(channel: string, ts: string): StoredMessage | undefined {
    return this.channels.get(channel)?.find((m) => m.ts === ts);
  }

  /** The DM channel id conversations.open gives for a user. */
  dmChannelFor(userId: string): string {
    return `D${userId.replace(/^[UW]/, '')}`;
  }

  /** The form open on top for a person, if any. */
  topView(userId: string): StoredView | undefined {
    return [...this.views.values()]
      .filter((v) => v.user === userId && !v.closed && v.view.type !== 'home')
      .at(-1);
  }

  setUser(user: FakeUser): void {
    this.users.set(user.id, user);
  }

  setUsergroup(id: string, members: readonly string[]): void {
    this.usergroups.set(id, members);
  }

  /** Declares (or changes: invite the bot, archive) a conversation; see FakeConversation. */
  setConversation(id: string, conversation: FakeConversation): void {
    this.conversations.set(id, conversation);
  }

  /**
   * What Slack answers the bot posting to `channel` with `method`, or null when it may: a private
   * channel it is not in gives not_in_channel, a DM or group DM it is not in channel_not_found, an
   * archived channel is_archived. chat.postEphemeral needs membership even in a public channel.
   */
  accessError(method: string, channel: string): Json | null {
    const c = this.conversations.get(channel);
    if (!c) return null;
    if (c.archived) return { ok: false, error: 'is_archived' };
    const member = c.member ?? c.kind === 'public';
    if (member) return null;
    if (c.kind === 'im' || c.kind === 'mpim') return { ok: false, error: 'channel_not_found' };
    if (c.kind === 'public' && method !== 'chat.postEphemeral') return null; // chat:write.public
    return { ok: false, error: 'not_in_channel' };
  }

  /** Calls `listener` with every change a person could see; returns how to stop listening. */
  onActivity(listener: (activity: FakeActivity) => void): () => void {
    this.events.on('activity', listener);
    return () => this.events.off('activity', listener);
  }

  /**
   * A trigger id as Slack would send with an interaction: views.open accepts it once, within 3 s.
   * `ageMs` backdates it, to test an expired trigger without waiting; `user` is whose form it opens.
   */
  issueTriggerId(ageMs = 0, user?: string): string {
    const id = `${Date.now()}.${++this.seq}.${Math.random().toString(16).slice(2, 10)}`;
    this.triggers.set(id, { issuedAt: Date.now() - ageMs, used: false, ...(user ? { user } : {}) });
    return id;
  }

  /** A fresh response_url for one request, served by the fake at /response/<id>. */
  responseUrl(origin: ResponseOrigin): string {
    const id = `R${String(++this.seq).padStart(6, '0')}`;
    this.responseUrls.set(id, origin);
    return `${this.baseUrl}/response/${id}`;
  }

  // ---------- changes ----------

  nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, '0')}`;
  }

  private emit(activity: FakeActivity): void {
    this.events.emit('activity', activity);
  }

  store(
    channel: string,
    body: Readonly<Json>,
    threadTs: string | undefined,
    files: StoredFile[] = [],
  ): StoredMessage {
    const version: MessageVersion = {
      text: text(body.text),
      blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
      attachments: Array.isArray(body.attachments) ? body.attachments : undefined,
    };
    const stored: StoredMessage = {
      channel,
      ts: this.nextTs(),
      threadTs,
      ...version,
      files,
      history: [version],
      deleted: false,
      replyCount: 0,
    };
    const list = this.channels.get(channel) ?? [];
    list.push(stored);
    this.channels.set(channel, list);
    if (threadTs !== undefined) {
      const parent = this.message(channel, threadTs);
      if (parent) parent.replyCount++;
    }
    this.emit({ kind: 'message', edit: false, message: stored });
    return stored;
  }

  edit(stored: StoredMessage, body: Readonly<Json>): void {
    if (body.text !== undefined) stored.text = String(body.text);
    if (body.blocks !== undefined) stored.blocks = body.blocks as unknown[];
    if (body.attachments !== undefined) stored.attachments = body.attachments as unknown[];
    stored.history.push({ text: stored.text, blocks: stored.blocks, attachments: stored.attachments });
    this.emit({ kind: 'message', edit: true, message: stored });
  }

  remove(stored: StoredMessage): void {
    stored.deleted = true;
    this.emit({ kind: 'deleted', message: stored });
  }

  /** An ephemeral message; `replacing` is the id of the one a response_url post replaces. */
  addEphemeral(
    channel: string,
    user: string,
    body: Readonly<Json>,
    options: { readonly replacing?: string; readonly replaced?: boolean } = {},
  ): EphemeralMessage {
    const ephemeral: EphemeralMessage = {
      id: options.replacing ?? `E${String(++this.seq).padStart(6, '0')}`,
      channel,
      user,
      messageTs: this.nextTs(),
      threadTs: text(body.thread_ts),
      text: text(body.text),
      blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
    };
    this.ephemerals.push(ephemeral);
    this.emit({
      kind: 'ephemeral',
      replaced: options.replaced ?? options.replacing !== undefined,
      ephemeral,
    });
    return ephemeral;
  }

  /** The newest version of an ephemeral message. */
  ephemeral(id: string): EphemeralMessage | undefined {
    return this.ephemerals.filter((e) => e.id === id).at(-1);
  }

  violation(method: string, rule: string): void {
    this.violations.push({ method, rule });
  }

  /** Checks a message's blocks and text; returns an error Slack would answer with, if any. */
  checkMessage(method: string, body: Readonly<Json>): Json | null {
    const { blocks, text: fallback, attachments } = body;
    if (blocks !== undefined) {
      const problems = checkBlocks(blocks, 'message');
      for (const p of problems) this.violation(method, p);
      if (problems.length > 0) return { ok: false, error: 'invalid_blocks', errors: problems };
      if (typeof fallback !== 'string' || fallback.trim() === '') {
        // Slack accepts this, but notifications and screen readers then show nothing useful.
        this.violation(method, 'blocks sent without a text fallback');
      }
    } else if ((typeof fallback !== 'string' || fallback === '') && attachments === undefined) {
      return { ok: false, error: 'no_text' };
    }
    if (typeof fallback === 'string' && fallback.length > LIMITS.messageText) {
      this.violation(method, `text has ${fallback.length} characters (max ${LIMITS.messageText})`);
    }
    return null;
  }

  checkViewBody(method: string, view: unknown): Json | null {
    if (typeof view !== 'object' || view === null) return { ok: false, error: 'invalid_arguments' };
    const problems = checkView(view);
    for (const p of problems) this.violation(method, p);
    return problems.length > 0
      ? {
          ok: false,
          error: 'invalid_arguments',
          response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) },
        }
      : null;
  }

  messageJson(m: StoredMessage): Json {
    return {
      type: 'message',
      user: this.botUserId,
      bot_id: this.botId,
      ts: m.ts,
      text: m.text ?? '',
      ...(m.blocks ? { blocks: m.blocks } : {}),
      ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
    };
  }

  /** views.open and views.push: the trigger id must be fresh and unused, the view within limits. */
  openView(call: RecordedCall, parentId: string | undefined): Json {
    const { body } = call;
    const triggerId = text(body.trigger_id);
    if (triggerId === undefined || triggerId === '') return { ok: false, error: 'invalid_trigger_id' };
    const issued = this.triggers.get(triggerId);
    if (issued) {
      if (issued.used) return { ok: false, error: 'exchanged_trigger_id' };
      if (Date.now() - issued.issuedAt > (this.options.triggerLifetimeMs ?? TRIGGER_LIFETIME_MS))
        return { ok: false, error: 'expired_trigger_id' };
      issued.used = true;
    } else if (this.options.strictTriggerIds) {
      return { ok: false, error: 'invalid_trigger_id' };
    }
    const invalid = this.checkViewBody(call.method, body.view);
    if (invalid) return invalid;
    const parent = parentId ? this.views.get(parentId) : undefined;
    const stored = this.addView(body.view as Json, issued?.user ?? parent?.user, parentId, triggerId);
    return { ok: true, view: this.viewJson(stored) };
  }

  addView(
    view: Json,
    user: string | undefined,
    parentId: string | undefined,
    triggerId?: string,
  ): StoredView {
    const stored: StoredView = {
      id: `V${String(++this.seq).padStart(8, '0')}`,
      triggerId,
      user,
      closed: false,
      view,
      hash: `h${++this.seq}`,
      history: [view],
      parentId,
    };
    this.views.set(stored.id, stored);
    this.emit({ kind: 'view', updated: false, view: stored });
    return stored;
  }

  updateView(stored: StoredView, view: Json): void {
    stored.view = view;
    stored.hash = `h${++this.seq}`;
    stored.history.push(view);
    this.emit({ kind: 'view', updated: true, view: stored });
  }

  /** Closes a form (submitted, cancelled); `all` closes the whole stack of that person. */
  closeView(id: string, all = false): void {
    const view = this.views.get(id);
    if (!view) return;
    for (const v of this.views.values()) {
      // A person's Home tab is no form: closing their forms leaves it.
      if (v.id === id || (all && v.user === view.user && v.view.type !== 'home')) v.closed = true;
    }
  }

  /** Replaces a form's content as a view submission's `response_action: update|push` does. */
  replaceView(id: string, next: Json, push: boolean): StoredView | undefined {
    const current = this.views.get(id);
    if (!current) return undefined;
    if (push) return this.addView(next, current.user, current.id);
    this.updateView(current, next);
    return current;
  }

  viewJson(v: StoredView): Json {
    return {
      ...v.view,
      id: v.id,
      team_id: this.teamId,
      hash: v.hash,
      state: { values: {} },
      root_view_id: v.parentId ?? v.id,
      previous_view_id: v.parentId ?? null,
      app_id: 'A0FAKE',
      bot_id: this.botId,
    };
  }

  /** Writes a completed upload to `filesDir`, when the fake has one. */
  async saveFile(file: StoredFile): Promise<void> {
    if (this.options.filesDir && file.bytes)
      file.path = await saveFileIn(this.options.filesDir, file.filename, file.bytes);
  }

  /** Slack no longer takes answers on this response_url (30 minutes passed): 404 expired_url. */
  expireResponseUrl(url: string): void {
    this.responseUrls.delete(url.split('/').at(-1) ?? '');
  }

  /** A post to a response_url: replace or delete the original, post in the channel, or answer privately. */
  respond(id: string, body: Json): [number, Json] {
    const origin = this.responseUrls.get(id);
    if (!origin) return [404, { ok: false, error: 'expired_url' }];
    return answerResponseUrl(this, origin, body);
  }
}
