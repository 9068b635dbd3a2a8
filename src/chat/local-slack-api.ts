import { EventEmitter } from 'node:events';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { renderView } from './render-form.js';
import {
  type RenderContext,
  type RenderedButton,
  renderMessage,
  type TerminalStyle,
} from './render-terminal.js';

// The Slack Web API of `gpuops demo`: a real HTTP server on loopback that the bot's WebClient and Bolt
// talk to (SLACK_API_URL), answering the methods the bot uses and PRINTING what a person would see in
// Slack: messages drawn from their Block Kit, edits, ephemeral answers, forms, shared files. It also
// serves the response_url of every request and remembers each numbered button, so the terminal chat
// can press it. Nothing leaves the machine.

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
  /** Told about a method this local API does not know (the demo prints it on stderr). */
  readonly onUnknownMethod?: (method: string) => void;
}

export interface MessageVersion {
  readonly text: string | undefined;
  readonly blocks: readonly unknown[] | undefined;
}

export interface SavedFile {
  readonly id: string;
  readonly filename: string;
  readonly title: string;
  readonly path: string | undefined;
  readonly length: number;
}

export interface LocalMessage {
  readonly channel: string;
  readonly ts: string;
  /** The number it is shown with: #n. */
  readonly number: number;
  readonly threadTs: string | undefined;
  text: string | undefined;
  blocks: readonly unknown[] | undefined;
  readonly files: SavedFile[];
  readonly history: MessageVersion[];
  deleted: boolean;
}

export interface LocalEphemeral {
  readonly id: string;
  readonly channel: string;
  readonly user: string;
  text: string | undefined;
  blocks: readonly unknown[] | undefined;
}

export interface LocalView {
  readonly id: string;
  readonly user: string;
  view: Record<string, unknown>;
  hash: string;
  readonly parentId: string | undefined;
  closed: boolean;
}

/** Where a button sits, so pressing it sends what Slack would. */
export type ButtonPlace =
  | { readonly kind: 'message'; readonly channel: string; readonly ts: string }
  | { readonly kind: 'ephemeral'; readonly id: string; readonly channel: string }
  | { readonly kind: 'view'; readonly viewId: string };

export interface ButtonRef extends RenderedButton {
  readonly place: ButtonPlace;
}

/** What a response_url was given for, which decides what a post to it does. */
export interface ResponseOrigin {
  readonly userId: string;
  readonly channelId: string;
  /** The message a button was pressed on, when it was. */
  readonly place?: ButtonPlace;
}

/** Everything people saw, in order: what the chat reads to know how a command ended. */
export type Activity =
  | { readonly seq: number; readonly kind: 'message'; readonly edit: boolean; readonly message: LocalMessage }
  | { readonly seq: number; readonly kind: 'ephemeral'; readonly ephemeral: LocalEphemeral }
  | { readonly seq: number; readonly kind: 'view'; readonly view: LocalView }
  | { readonly seq: number; readonly kind: 'deleted'; readonly message: LocalMessage };

type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;

const JSON_FIELDS = new Set(['blocks', 'view', 'attachments', 'files', 'metadata']);

type Json = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function decodeField(key: string, value: string): unknown {
  if (!JSON_FIELDS.has(key) || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The WebClient sends forms whose blocks, view and files are JSON strings; Bolt's respond sends JSON. */
function decode(raw: Buffer, contentType: string): Json {
  const text = raw.toString('utf8');
  if (contentType.includes('application/json')) {
    try {
      const parsed: unknown = JSON.parse(text || '{}');
      return typeof parsed === 'object' && parsed !== null ? (parsed as Json) : {};
    } catch {
      return {};
    }
  }
  const out: Json = {};
  for (const [key, value] of new URLSearchParams(text)) out[key] = decodeField(key, value);
  return out;
}

/** A file name safe to save: no folders, no control characters. */
function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'file';
  const cleaned = base.replace(/[^\w.+@-]+/g, '_').replace(/^\.+/, '');
  return cleaned === '' ? 'file' : cleaned.slice(0, 120);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export class LocalSlackApi {
  private readonly server: Server;
  private readonly events = new EventEmitter();
  private readonly messages = new Map<string, LocalMessage>();
  private readonly ephemerals = new Map<string, LocalEphemeral>();
  private readonly views = new Map<string, LocalView>();
  private readonly triggers = new Map<string, string>();
  private readonly responseUrls = new Map<string, ResponseOrigin>();
  private readonly buttons = new Map<number, ButtonRef>();
  private readonly files = new Map<string, SavedFile & { bytes: Buffer | undefined }>();
  private readonly users = new Map<string, DirectoryUser>();
  private readonly log: Activity[] = [];
  private seq = 0;
  private messageNumber = 0;
  private buttonNumber = 0;
  private baseUrl = '';

  private constructor(private readonly options: LocalSlackOptions) {
    for (const user of options.users) this.users.set(user.id, user);
    this.events.setMaxListeners(0);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: 'internal_error', detail: String(err) }));
      });
    });
  }

  /** Starts on 127.0.0.1, on a free port. */
  static async start(options: LocalSlackOptions): Promise<LocalSlackApi> {
    const api = new LocalSlackApi(options);
    await new Promise<void>((resolve, reject) => {
      api.server.once('error', reject);
      api.server.listen(0, '127.0.0.1', () => resolve());
    });
    api.baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    return api;
  }

  /** SLACK_API_URL for the bot. */
  get apiUrl(): string {
    return `${this.baseUrl}/api/`;
  }

  async close(): Promise<void> {
    this.events.removeAllListeners();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ---------- for the terminal chat ----------

  /** Calls `listener` after every change anyone could see; returns how to stop listening. */
  onActivity(listener: () => void): () => void {
    this.events.on('activity', listener);
    return () => this.events.off('activity', listener);
  }

  /** A position in the activity log: pass it to `activitySince` to read only what came after. */
  mark(): number {
    return this.seq;
  }

  activitySince(mark: number): Activity[] {
    return this.log.filter((a) => a.seq > mark);
  }

  /** Channel messages whose job is still queued, working or waiting, as their text says. */
  inProgress(): LocalMessage[] {
    return [...this.messages.values()].filter(
      (m) => !m.deleted && /^(Queued|Working|Waiting)\b/.test(m.text ?? ''),
    );
  }

  /** A trigger id for an interaction by `userId`: views.open then knows whose form it is. */
  issueTrigger(userId: string): string {
    const id = `${Date.now()}.${++this.seq}.demo`;
    this.triggers.set(id, userId);
    return id;
  }

  /** A fresh response_url for one request, served by this server. */
  responseUrl(origin: ResponseOrigin): string {
    const id = `R${String(++this.seq).padStart(6, '0')}`;
    this.responseUrls.set(id, origin);
    return `${this.baseUrl}/response/${id}`;
  }

  /** Shows a listener's immediate answer (the slash command's acknowledgement) to the requester alone. */
  showEphemeral(
    channel: string,
    user: string,
    content: { text?: string; blocks?: readonly unknown[] },
  ): void {
    this.storeEphemeral(channel, user, content.text, content.blocks, false);
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
    const blocks = this.blocksAt(button.place);
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
      const m = this.messages.get(`${place.channel}:${place.ts}`);
      return m && !m.deleted ? { ts: m.ts, text: m.text ?? '', blocks: m.blocks ?? [] } : undefined;
    }
    if (place.kind === 'ephemeral') {
      const e = this.ephemerals.get(place.id);
      return e ? { ts: e.id, text: e.text ?? '', blocks: e.blocks ?? [] } : undefined;
    }
    const v = this.views.get(place.viewId);
    return v && !v.closed ? { blocks: (v.view.blocks as unknown[]) ?? [] } : undefined;
  }

  /** The form open on top for a person, if any. */
  topView(userId: string): LocalView | undefined {
    return [...this.views.values()].filter((v) => v.user === userId && !v.closed).at(-1);
  }

  view(id: string): LocalView | undefined {
    return this.views.get(id);
  }

  /** Closes a form (submitted, cancelled); `all` closes the whole stack of that person. */
  closeView(id: string, all = false): void {
    const view = this.views.get(id);
    if (!view) return;
    for (const v of this.views.values()) {
      if (v.id === id || (all && v.user === view.user)) v.closed = true;
    }
  }

  /** Replaces a form's content as a `response_action: update|push` would. */
  replaceView(id: string, next: Record<string, unknown>, push: boolean): LocalView | undefined {
    const current = this.views.get(id);
    if (!current) return undefined;
    if (push) return this.openView(current.user, next, current.id);
    current.view = next;
    current.hash = `h${++this.seq}`;
    this.showView(current, true);
    return current;
  }

  message(channel: string, ts: string): LocalMessage | undefined {
    return this.messages.get(`${channel}:${ts}`);
  }

  /** Every file saved so far. */
  savedFiles(): SavedFile[] {
    return [...this.files.values()].filter((f) => f.path !== undefined);
  }

  // ---------- printing ----------

  private renderContext(): RenderContext {
    return {
      style: this.options.style,
      userName: (id) => {
        const user = this.users.get(id);
        if (id === this.options.botUserId) return this.options.botName;
        return user ? user.name : undefined;
      },
      channelName: (id) => this.options.channels[id],
      filePath: (id) => this.files.get(id)?.path,
    };
  }

  private who(userId: string): string {
    const name = this.users.get(userId)?.name ?? userId;
    return userId === this.options.viewer() ? `you (@${name})` : `@${name}`;
  }

  private where(channel: string): string {
    if (channel.startsWith('D')) {
      const user = [...this.users.values()].find((u) => this.dmChannelFor(u.id) === channel);
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
    const style = this.options.style;
    const parent = message.threadTs ? this.message(message.channel, message.threadTs) : undefined;
    const head = edit
      ? `#${message.number} edited · ${this.options.botName} in ${this.where(message.channel)}`
      : `#${message.number} ${this.options.botName} in ${this.where(message.channel)}${parent ? `, reply to #${parent.number}` : ''}`;
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
    const style = this.options.style;
    const head = `only visible to ${this.who(e.user)} · ${this.options.botName} in ${this.where(e.channel)}${replaced ? ' (updated)' : ''}`;
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
    const head = `${updated ? 'form updated' : 'form opened'} for ${this.who(view.user)}`;
    this.options.print([this.options.style.dim(head), ...rendered.lines, '']);
    this.record({ kind: 'view', view });
  }

  private record(activity: WithoutSeq<Activity>): void {
    this.log.push({ ...activity, seq: ++this.seq });
    this.events.emit('activity');
  }

  // ---------- state changes ----------

  private dmChannelFor(userId: string): string {
    return `D${userId.replace(/^[UW]/, '')}`;
  }

  private nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, '0')}`;
  }

  private storeMessage(
    channel: string,
    content: { text?: string | undefined; blocks?: readonly unknown[] | undefined },
    threadTs: string | undefined,
    files: SavedFile[] = [],
  ): LocalMessage {
    const version: MessageVersion = { text: content.text, blocks: content.blocks };
    const message: LocalMessage = {
      channel,
      ts: this.nextTs(),
      number: ++this.messageNumber,
      threadTs,
      ...version,
      files,
      history: [version],
      deleted: false,
    };
    this.messages.set(`${channel}:${message.ts}`, message);
    this.printMessage(message, false);
    this.record({ kind: 'message', edit: false, message });
    return message;
  }

  private editMessage(
    message: LocalMessage,
    content: { text?: string | undefined; blocks?: readonly unknown[] | undefined },
  ): void {
    if (content.text !== undefined) message.text = content.text;
    if (content.blocks !== undefined) message.blocks = content.blocks;
    message.history.push({ text: message.text, blocks: message.blocks });
    this.printMessage(message, true);
    this.record({ kind: 'message', edit: true, message });
  }

  private deleteMessage(message: LocalMessage): void {
    message.deleted = true;
    this.options.print([this.options.style.dim(`#${message.number} deleted`), '']);
    this.record({ kind: 'deleted', message });
  }

  private storeEphemeral(
    channel: string,
    user: string,
    text: string | undefined,
    blocks: readonly unknown[] | undefined,
    replaced: boolean,
    id = `E${String(++this.seq).padStart(6, '0')}`,
  ): LocalEphemeral {
    const ephemeral: LocalEphemeral = { id, channel, user, text, blocks };
    this.ephemerals.set(id, ephemeral);
    this.printEphemeral(ephemeral, replaced);
    this.record({ kind: 'ephemeral', ephemeral });
    return ephemeral;
  }

  private openView(user: string, view: Record<string, unknown>, parentId: string | undefined): LocalView {
    const stored: LocalView = {
      id: `V${String(++this.seq).padStart(8, '0')}`,
      user,
      view,
      hash: `h${++this.seq}`,
      parentId,
      closed: false,
    };
    this.views.set(stored.id, stored);
    this.showView(stored, false);
    return stored;
  }

  private blocksAt(place: ButtonPlace): readonly unknown[] | undefined {
    return this.contentAt(place)?.blocks;
  }

  // ---------- HTTP ----------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await readBody(req);
    const contentType = String(req.headers['content-type'] ?? '');
    const send = (status: number, body: Json) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return send(405, { ok: false, error: 'method_not_allowed' });
    if (url.pathname.startsWith('/upload/')) {
      return send(...(await this.upload(url.pathname.slice('/upload/'.length), raw, contentType)));
    }
    if (url.pathname.startsWith('/response/')) {
      return send(...this.respond(url.pathname.slice('/response/'.length), decode(raw, contentType)));
    }
    if (!url.pathname.startsWith('/api/')) return send(404, { ok: false, error: 'not_found' });
    const method = url.pathname.slice('/api/'.length);
    const body = decode(raw, contentType);
    const auth = String(req.headers.authorization ?? '');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : str(body.token);
    if (!token || !this.options.tokens.includes(token))
      return send(200, { ok: false, error: 'invalid_auth' });
    const handler = this.methods[method];
    if (!handler) {
      this.options.onUnknownMethod?.(method);
      return send(200, { ok: false, error: 'unknown_method' });
    }
    send(200, await handler(body));
  }

  private readonly methods: Record<string, (body: Json) => Json | Promise<Json>> = {
    'auth.test': () => ({
      ok: true,
      url: 'https://demo.slack.invalid/',
      team: 'gpuops demo',
      user: this.options.botName,
      team_id: this.options.teamId,
      user_id: this.options.botUserId,
      bot_id: this.options.botId,
      is_enterprise_install: false,
    }),

    'chat.postMessage': (body) => {
      const target = str(body.channel);
      if (!target) return { ok: false, error: 'channel_not_found' };
      const channel = /^[UW]/.test(target) ? this.dmChannelFor(target) : target;
      const threadTs = str(body.thread_ts);
      if (threadTs && !this.message(channel, threadTs)) return { ok: false, error: 'thread_not_found' };
      const message = this.storeMessage(channel, contentOf(body), threadTs);
      return {
        ok: true,
        channel,
        ts: message.ts,
        message: { type: 'message', ts: message.ts, text: message.text ?? '' },
      };
    },

    'chat.update': (body) => {
      const channel = str(body.channel) ?? '';
      const message = this.message(channel, str(body.ts) ?? '');
      if (!message || message.deleted) return { ok: false, error: 'message_not_found' };
      this.editMessage(message, contentOf(body));
      return { ok: true, channel, ts: message.ts, text: message.text ?? '' };
    },

    'chat.postEphemeral': (body) => {
      const channel = str(body.channel);
      const user = str(body.user);
      if (!channel) return { ok: false, error: 'channel_not_found' };
      if (!user) return { ok: false, error: 'user_not_in_channel' };
      const { text, blocks } = contentOf(body);
      const e = this.storeEphemeral(channel, user, text, blocks, false);
      return { ok: true, message_ts: e.id };
    },

    'chat.delete': (body) => {
      const channel = str(body.channel) ?? '';
      const message = this.message(channel, str(body.ts) ?? '');
      if (!message || message.deleted) return { ok: false, error: 'message_not_found' };
      this.deleteMessage(message);
      return { ok: true, channel, ts: message.ts };
    },

    'views.open': (body) => {
      const trigger = str(body.trigger_id);
      if (!trigger) return { ok: false, error: 'invalid_trigger_id' };
      const view = body.view;
      if (typeof view !== 'object' || view === null) return { ok: false, error: 'invalid_arguments' };
      const user = this.triggers.get(trigger) ?? this.options.viewer();
      this.triggers.delete(trigger);
      return { ok: true, view: this.viewJson(this.openView(user, view as Json, undefined)) };
    },

    'views.push': (body) => {
      const trigger = str(body.trigger_id);
      const view = body.view;
      if (!trigger) return { ok: false, error: 'invalid_trigger_id' };
      if (typeof view !== 'object' || view === null) return { ok: false, error: 'invalid_arguments' };
      const user = this.triggers.get(trigger) ?? this.options.viewer();
      const parent = this.topView(user);
      return { ok: true, view: this.viewJson(this.openView(user, view as Json, parent?.id)) };
    },

    'views.update': (body) => {
      const id = str(body.view_id);
      const externalId = str(body.external_id);
      const stored =
        (id ? this.views.get(id) : undefined) ??
        [...this.views.values()].find((v) => externalId !== undefined && v.view.external_id === externalId);
      if (!stored) return { ok: false, error: 'not_found' };
      if (str(body.hash) && body.hash !== stored.hash) return { ok: false, error: 'hash_conflict' };
      if (typeof body.view !== 'object' || body.view === null)
        return { ok: false, error: 'invalid_arguments' };
      stored.view = body.view as Json;
      stored.hash = `h${++this.seq}`;
      if (!stored.closed) this.showView(stored, true);
      return { ok: true, view: this.viewJson(stored) };
    },

    'users.info': (body) => {
      const user = this.users.get(str(body.user) ?? '');
      if (!user) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: {
          id: user.id,
          team_id: this.options.teamId,
          name: user.name,
          real_name: user.realName,
          deleted: false,
          is_bot: false,
          tz: user.tz ?? 'Europe/London',
          profile: {
            display_name: user.displayName,
            display_name_normalized: user.displayName,
            real_name: user.realName,
            real_name_normalized: user.realName,
          },
        },
      };
    },

    'usergroups.users.list': (body) => {
      const members = this.options.usergroups?.[str(body.usergroup) ?? ''];
      return members ? { ok: true, users: [...members] } : { ok: false, error: 'no_such_subteam' };
    },

    'conversations.open': (body) => {
      if (str(body.channel)) return { ok: true, channel: { id: body.channel } };
      const users = String(body.users ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      if (users.length === 0) return { ok: false, error: 'users_list_not_supplied' };
      if (users.some((u) => !this.users.has(u))) return { ok: false, error: 'user_not_found' };
      const id =
        users.length === 1 ? this.dmChannelFor(users[0]!) : `G${users.map((u) => u.slice(1)).join('')}`;
      return { ok: true, no_op: true, already_open: true, channel: { id } };
    },

    'files.getUploadURLExternal': (body) => {
      const filename = str(body.filename);
      const length = Number(body.length);
      if (!filename || !Number.isInteger(length) || length <= 0)
        return { ok: false, error: 'invalid_arguments' };
      const id = `F${String(++this.seq).padStart(8, '0')}`;
      this.files.set(id, { id, filename, title: filename, path: undefined, length, bytes: undefined });
      return { ok: true, upload_url: `${this.baseUrl}/upload/${id}`, file_id: id };
    },

    'files.completeUploadExternal': async (body) => {
      const list = Array.isArray(body.files) ? (body.files as Json[]) : undefined;
      if (!list || list.length === 0) return { ok: false, error: 'invalid_arguments' };
      const saved: SavedFile[] = [];
      for (const entry of list) {
        const file = this.files.get(str(entry.id) ?? '');
        if (!file) return { ok: false, error: 'file_not_found' };
        if (!file.bytes) return { ok: false, error: 'file_not_uploaded' };
        const path = await this.save(file.filename, file.bytes);
        const done = { ...file, title: str(entry.title) ?? file.filename, path };
        this.files.set(file.id, done);
        saved.push(done);
      }
      const channel = str(body.channel_id);
      const threadTs = str(body.thread_ts);
      if (channel) {
        this.storeMessage(channel, { text: str(body.initial_comment) }, threadTs, saved);
      } else {
        this.options.print(saved.map((f) => `📎 ${f.title} saved to ${f.path} (not shared in a channel)`));
      }
      return { ok: true, files: saved.map((f) => ({ id: f.id, title: f.title, name: f.filename })) };
    },
  };

  private viewJson(v: LocalView): Json {
    return {
      ...v.view,
      id: v.id,
      team_id: this.options.teamId,
      hash: v.hash,
      state: { values: {} },
      root_view_id: v.parentId ?? v.id,
      previous_view_id: v.parentId ?? null,
      app_id: 'A0DEMO',
      bot_id: this.options.botId,
    };
  }

  private async save(filename: string, bytes: Buffer): Promise<string> {
    await mkdir(this.options.filesDir, { recursive: true });
    const name = safeName(filename);
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    let path = join(this.options.filesDir, name);
    for (let n = 2; await exists(path); n++) path = join(this.options.filesDir, `${stem}-${n}${ext}`);
    await writeFile(path, bytes);
    return path;
  }

  private async upload(id: string, raw: Buffer, contentType: string): Promise<[number, Json]> {
    const file = this.files.get(id);
    if (!file) return [404, { ok: false, error: 'file_not_found' }];
    let bytes = raw;
    if (contentType.includes('multipart/form-data')) {
      const form = await new Request('http://local.invalid/', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: raw,
      }).formData();
      const part = [...form.values()].find((v): v is File => typeof v !== 'string');
      bytes = part ? Buffer.from(await part.arrayBuffer()) : Buffer.alloc(0);
    }
    this.files.set(id, { ...file, bytes });
    return [200, { ok: true }];
  }

  /** A post to a response_url: replace or delete the original, post in the channel, or answer privately. */
  private respond(id: string, body: Json): [number, Json] {
    const origin = this.responseUrls.get(id);
    if (!origin) return [404, { ok: false, error: 'expired_url' }];
    const { text, blocks } = contentOf(body);
    const flag = (v: unknown) => v === true || v === 'true';
    const place = origin.place;
    if (place?.kind === 'message') {
      const message = this.message(place.channel, place.ts);
      if (message && flag(body.delete_original)) {
        this.deleteMessage(message);
        return [200, { ok: true }];
      }
      if (message && flag(body.replace_original)) {
        this.editMessage(message, { text, blocks: blocks ?? [] });
        return [200, { ok: true }];
      }
    }
    if (body.response_type === 'in_channel') {
      this.storeMessage(origin.channelId, { text, blocks }, undefined);
      return [200, { ok: true }];
    }
    const replaced = place?.kind === 'ephemeral' && flag(body.replace_original);
    if (replaced && place?.kind === 'ephemeral') {
      this.storeEphemeral(origin.channelId, origin.userId, text, blocks, true, place.id);
    } else {
      // Replacing the answer to a command shows the new answer in its place; here, below it.
      this.storeEphemeral(origin.channelId, origin.userId, text, blocks, flag(body.replace_original));
    }
    return [200, { ok: true }];
  }
}

function contentOf(body: Json): { text: string | undefined; blocks: readonly unknown[] | undefined } {
  return {
    text: typeof body.text === 'string' ? body.text : undefined,
    blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
  };
}
