import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkBlocks, checkView, LIMITS } from './block-kit-limits.js';

// A local Slack Web API that the real @slack/web-api and @slack/bolt clients talk to
// (slackApiUrl = fake.apiUrl). It answers the methods the bot uses, keeps what each channel shows,
// checks Block Kit limits, and records every call; anything it does not know is a recorded failure.

export interface FakeUser {
  readonly id: string;
  readonly name: string;
  readonly real_name?: string;
  readonly display_name?: string;
  readonly is_bot?: boolean;
  readonly deleted?: boolean;
  readonly tz?: string;
}

export interface FakeSlackOptions {
  /** Tokens accepted for Web API methods (default: xoxb-test). */
  readonly tokens?: readonly string[];
  /** Token accepted by apps.connections.open (default: xapp-test). */
  readonly appToken?: string;
  /** URL apps.connections.open returns, for Socket Mode tests. Settable later with `socketModeUrl`. */
  readonly socketModeUrl?: string;
  readonly users?: readonly FakeUser[];
  /** Usergroup id → member user ids. */
  readonly usergroups?: Readonly<Record<string, readonly string[]>>;
  readonly teamId?: string;
  readonly botUserId?: string;
  readonly botId?: string;
  /** Reject views.open/push trigger ids this fake did not issue (see issueTriggerId). */
  readonly strictTriggerIds?: boolean;
}

export interface RecordedCall {
  /** Position in `calls`. */
  readonly index: number;
  readonly method: string;
  /** Decoded body: JSON, or form fields with blocks/view/attachments/files parsed from their JSON strings. */
  readonly body: Readonly<Record<string, unknown>>;
  readonly token: string | undefined;
  readonly contentType: string;
  readonly at: number;
  /** What the fake answered (set once answered). */
  status: number;
  response: Record<string, unknown> | undefined;
}

export interface Violation {
  readonly method: string;
  readonly rule: string;
}

export interface UnexpectedRequest {
  readonly method: string;
  readonly path: string;
  readonly reason: string;
}

export interface MessageVersion {
  readonly text: string | undefined;
  readonly blocks: readonly unknown[] | undefined;
  readonly attachments: readonly unknown[] | undefined;
}

export interface StoredMessage {
  readonly channel: string;
  readonly ts: string;
  readonly threadTs: string | undefined;
  /** Current content. */
  text: string | undefined;
  blocks: readonly unknown[] | undefined;
  attachments: readonly unknown[] | undefined;
  /** Files shared with the message (files.completeUploadExternal). */
  readonly files: StoredFile[];
  /** Every version, first the posted one, then one per chat.update. */
  readonly history: MessageVersion[];
  deleted: boolean;
  replyCount: number;
}

export interface EphemeralMessage {
  readonly channel: string;
  readonly user: string;
  readonly messageTs: string;
  readonly threadTs: string | undefined;
  readonly text: string | undefined;
  readonly blocks: readonly unknown[] | undefined;
}

export interface StoredView {
  readonly id: string;
  readonly triggerId: string | undefined;
  view: Record<string, unknown>;
  hash: string;
  readonly history: Record<string, unknown>[];
  /** Set for views.push: the view it was pushed on. */
  readonly parentId: string | undefined;
}

export interface StoredFile {
  readonly id: string;
  readonly filename: string;
  readonly length: number;
  readonly altText: string | undefined;
  bytes: Buffer | undefined;
  completed: boolean;
  title: string | undefined;
  channel: string | undefined;
  initialComment: string | undefined;
  threadTs: string | undefined;
}

interface Injection {
  remaining: number;
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

type Handler = (call: RecordedCall) => Record<string, unknown>;

const JSON_FIELDS = new Set(['blocks', 'view', 'attachments', 'files', 'metadata']);
const TRIGGER_LIFETIME_MS = 3000;

/** Waits for a server to close after dropping its keep-alive sockets. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Form values are strings; blocks, view, attachments and files carry JSON inside them. */
function decodeField(key: string, value: string): unknown {
  if (!JSON_FIELDS.has(key) || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // left as the string: the method's checks report it
  }
}

function decodeForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) out[key] = decodeField(key, value);
  return out;
}

async function readForm(raw: Buffer, contentType: string): Promise<FormData> {
  return new Request('http://fake.invalid/', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: raw,
  }).formData();
}

export class FakeSlackApi {
  readonly calls: RecordedCall[] = [];
  readonly unexpected: UnexpectedRequest[] = [];
  readonly violations: Violation[] = [];
  readonly ephemerals: EphemeralMessage[] = [];
  readonly views = new Map<string, StoredView>();
  readonly files = new Map<string, StoredFile>();
  readonly users = new Map<string, FakeUser>();
  readonly usergroups = new Map<string, readonly string[]>();
  socketModeUrl: string | undefined;

  private readonly server: Server;
  private readonly events = new EventEmitter();
  private readonly channels = new Map<string, StoredMessage[]>();
  private readonly tokens: ReadonlySet<string>;
  private readonly appToken: string;
  private readonly teamId: string;
  private readonly botUserId: string;
  private readonly botId: string;
  private readonly strictTriggerIds: boolean;
  private readonly triggers = new Map<string, { issuedAt: number; used: boolean }>();
  private readonly injections = new Map<string, Injection[]>();
  private seq = 0;
  private baseUrl = '';

  private constructor(options: FakeSlackOptions) {
    this.tokens = new Set(options.tokens ?? ['xoxb-test']);
    this.appToken = options.appToken ?? 'xapp-test';
    this.socketModeUrl = options.socketModeUrl;
    this.teamId = options.teamId ?? 'T0FAKE';
    this.botUserId = options.botUserId ?? 'U0BOT';
    this.botId = options.botId ?? 'B0BOT';
    this.strictTriggerIds = options.strictTriggerIds ?? false;
    for (const user of options.users ?? []) this.users.set(user.id, user);
    for (const [id, members] of Object.entries(options.usergroups ?? {})) this.usergroups.set(id, members);
    this.events.setMaxListeners(0);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.unexpected.push({
          method: req.method ?? '?',
          path: req.url ?? '?',
          reason: `fake crashed: ${String(err)}`,
        });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  }

  /** Starts the fake on 127.0.0.1, on a free port. */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlackApi> {
    const fake = new FakeSlackApi(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    const { port } = fake.server.address() as AddressInfo;
    fake.baseUrl = `http://127.0.0.1:${port}`;
    return fake;
  }

  /** Base of the Web API, for `new WebClient(token, { slackApiUrl })` and SLACK_API_URL. */
  get apiUrl(): string {
    return `${this.baseUrl}/api/`;
  }

  get url(): string {
    return this.baseUrl;
  }

  get botUser(): string {
    return this.botUserId;
  }

  async close(): Promise<void> {
    this.events.removeAllListeners();
    await closeServer(this.server);
  }

  // ---------- what tests read ----------

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Number of calls so far; pass it as `since` to wait only for calls made after this point. */
  mark(): number {
    return this.calls.length;
  }

  /**
   * Resolves with the first answered call to `method` that matches `predicate`, counting calls from
   * index `since` (default 0, so a call that already happened counts too). Event-based: no polling.
   */
  waitFor(
    method: string,
    predicate: (call: RecordedCall) => boolean = () => true,
    timeoutMs = 5000,
    since = 0,
  ): Promise<RecordedCall> {
    const matches = (call: RecordedCall) =>
      call.method === method && call.index >= since && call.response !== undefined && predicate(call);
    const done = this.calls.find(matches);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const onCall = (call: RecordedCall) => {
        if (!matches(call)) return;
        clearTimeout(timer);
        this.events.off('call', onCall);
        resolve(call);
      };
      const timer = setTimeout(() => {
        this.events.off('call', onCall);
        const seen = this.callsTo(method).map((c) => JSON.stringify(c.body).slice(0, 200));
        reject(
          new Error(
            `no matching ${method} call within ${timeoutMs} ms; ${seen.length} call(s) to it: ${seen.join(' | ') || 'none'}`,
          ),
        );
      }, timeoutMs);
      this.events.on('call', onCall);
    });
  }

  /** Messages of a channel in posting order (thread replies included), deleted ones left out. */
  messages(channel: string): StoredMessage[] {
    return (this.channels.get(channel) ?? []).filter((m) => !m.deleted);
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

  setUser(user: FakeUser): void {
    this.users.set(user.id, user);
  }

  setUsergroup(id: string, members: readonly string[]): void {
    this.usergroups.set(id, members);
  }

  /**
   * A trigger id as Slack would send with an interaction: views.open accepts it once, within 3 s.
   * `ageMs` backdates it, to test an expired trigger without waiting.
   */
  issueTriggerId(ageMs = 0): string {
    const id = `${Date.now()}.${++this.seq}.${Math.random().toString(16).slice(2, 10)}`;
    this.triggers.set(id, { issuedAt: Date.now() - ageMs, used: false });
    return id;
  }

  /** The next `times` calls to `method` get HTTP 429 with Retry-After. */
  rateLimit(method: string, retryAfterSeconds = 1, times = 1): void {
    this.inject(method, {
      remaining: times,
      status: 429,
      body: { ok: false, error: 'ratelimited' },
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }

  /** The next `times` calls to `method` answer { ok: false, error }. */
  failWith(method: string, error: string, times = 1): void {
    this.inject(method, { remaining: times, status: 200, body: { ok: false, error }, headers: {} });
  }

  /** Throws, listing every Block Kit violation and every request the fake did not expect. */
  assertNoViolations(): void {
    const lines = [
      ...this.violations.map((v) => `violation in ${v.method}: ${v.rule}`),
      ...this.unexpected.map((u) => `unexpected ${u.method} ${u.path}: ${u.reason}`),
    ];
    if (lines.length > 0) {
      throw new Error(`fake Slack API saw ${lines.length} problem(s):\n${lines.join('\n')}`);
    }
  }

  // ---------- HTTP ----------

  private inject(method: string, injection: Injection): void {
    const list = this.injections.get(method) ?? [];
    list.push(injection);
    this.injections.set(method, list);
  }

  private takeInjection(method: string): Injection | undefined {
    const list = this.injections.get(method);
    const first = list?.[0];
    if (!first) return undefined;
    first.remaining--;
    if (first.remaining <= 0) list!.shift();
    return first;
  }

  private nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.seq).padStart(6, '0')}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await readBody(req);
    const contentType = String(req.headers['content-type'] ?? '');
    if (req.method === 'POST' && url.pathname.startsWith('/upload/')) {
      await this.handleUpload(url.pathname.slice('/upload/'.length), raw, contentType, res);
      return;
    }
    if (req.method !== 'POST' || !url.pathname.startsWith('/api/')) {
      this.unexpected.push({ method: req.method ?? '?', path: url.pathname, reason: 'not a Web API path' });
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: false, error: 'not_found' }));
      return;
    }
    const method = url.pathname.slice('/api/'.length);
    const body = await this.decode(raw, contentType);
    const auth = String(req.headers.authorization ?? '');
    const token = auth.startsWith('Bearer ')
      ? auth.slice('Bearer '.length)
      : typeof body.token === 'string'
        ? body.token
        : undefined;
    const call: RecordedCall = {
      index: this.calls.length,
      method,
      body,
      token,
      contentType,
      at: Date.now(),
      status: 200,
      response: undefined,
    };
    this.calls.push(call);

    let headers: Record<string, string> = {};
    const injected = this.takeInjection(method);
    if (injected) {
      call.status = injected.status;
      call.response = injected.body;
      headers = injected.headers;
    } else {
      call.response = this.answer(method, call);
    }
    res.writeHead(call.status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(call.response));
    this.events.emit('call', call);
  }

  private async decode(raw: Buffer, contentType: string): Promise<Record<string, unknown>> {
    const text = raw.toString('utf8');
    if (contentType.includes('application/json')) {
      try {
        const parsed: unknown = JSON.parse(text || '{}');
        return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
      } catch {
        return { __invalid_json: text };
      }
    }
    if (contentType.includes('multipart/form-data')) {
      const out: Record<string, unknown> = {};
      for (const [key, value] of await readForm(raw, contentType)) {
        out[key] = typeof value === 'string' ? decodeField(key, value) : value;
      }
      return out;
    }
    return decodeForm(text);
  }

  private authorize(method: string, token: string | undefined): string | null {
    if (token === undefined || token === '') return 'not_authed';
    if (method === 'apps.connections.open') return token === this.appToken ? null : 'invalid_auth';
    return this.tokens.has(token) ? null : 'invalid_auth';
  }

  private answer(method: string, call: RecordedCall): Record<string, unknown> {
    const handler = this.handlers[method];
    if (!handler) {
      this.unexpected.push({ method: 'POST', path: `/api/${method}`, reason: 'unknown method' });
      return { ok: false, error: 'unknown_method' };
    }
    const authError = this.authorize(method, call.token);
    if (authError) return { ok: false, error: authError };
    return handler(call);
  }

  private violation(method: string, rule: string): void {
    this.violations.push({ method, rule });
  }

  /** Checks a message's blocks and text; returns an error Slack would answer with, if any. */
  private checkMessage(
    method: string,
    body: Readonly<Record<string, unknown>>,
  ): Record<string, unknown> | null {
    const { blocks, text, attachments } = body;
    if (blocks !== undefined) {
      const problems = checkBlocks(blocks, 'message');
      for (const p of problems) this.violation(method, p);
      if (problems.length > 0) return { ok: false, error: 'invalid_blocks', errors: problems };
      if (typeof text !== 'string' || text.trim() === '') {
        // Slack accepts this, but notifications and screen readers then show nothing useful.
        this.violation(method, 'blocks sent without a text fallback');
      }
    } else if ((typeof text !== 'string' || text === '') && attachments === undefined) {
      return { ok: false, error: 'no_text' };
    }
    if (typeof text === 'string' && text.length > LIMITS.messageText) {
      this.violation(method, `text has ${text.length} characters (max ${LIMITS.messageText})`);
    }
    return null;
  }

  private readonly handlers: Readonly<Record<string, Handler>> = {
    'auth.test': () => ({
      ok: true,
      url: 'https://fake.slack.test/',
      team: 'Fake Team',
      user: 'gpuops',
      team_id: this.teamId,
      user_id: this.botUserId,
      bot_id: this.botId,
      is_enterprise_install: false,
    }),

    'chat.postMessage': (call) => {
      const { body } = call;
      const channelArg = typeof body.channel === 'string' ? body.channel : '';
      if (channelArg === '') return { ok: false, error: 'channel_not_found' };
      const invalid = this.checkMessage(call.method, body);
      if (invalid) return invalid;
      // Posting to a user id lands in the DM with that user, as in Slack.
      const channel = /^[UW]/.test(channelArg) ? this.dmChannelFor(channelArg) : channelArg;
      const threadTs =
        typeof body.thread_ts === 'string' && body.thread_ts !== '' ? body.thread_ts : undefined;
      if (threadTs !== undefined) {
        const parent = this.message(channel, threadTs);
        if (!parent) return { ok: false, error: 'thread_not_found' };
        parent.replyCount++;
      }
      const stored = this.store(channel, body, threadTs);
      return { ok: true, channel, ts: stored.ts, message: this.messageJson(stored) };
    },

    'chat.update': (call) => {
      const { body } = call;
      const channel = String(body.channel ?? '');
      const ts = String(body.ts ?? '');
      const stored = this.message(channel, ts);
      if (!stored || stored.deleted) return { ok: false, error: 'message_not_found' };
      const invalid = this.checkMessage(call.method, body);
      if (invalid) return invalid;
      if (body.text !== undefined) stored.text = String(body.text);
      if (body.blocks !== undefined) stored.blocks = body.blocks as unknown[];
      if (body.attachments !== undefined) stored.attachments = body.attachments as unknown[];
      stored.history.push({ text: stored.text, blocks: stored.blocks, attachments: stored.attachments });
      return { ok: true, channel, ts, text: stored.text ?? '', message: this.messageJson(stored) };
    },

    'chat.postEphemeral': (call) => {
      const { body } = call;
      const channel = String(body.channel ?? '');
      const user = String(body.user ?? '');
      if (channel === '') return { ok: false, error: 'channel_not_found' };
      if (user === '') return { ok: false, error: 'user_not_in_channel' };
      const invalid = this.checkMessage(call.method, body);
      if (invalid) return invalid;
      const messageTs = this.nextTs();
      this.ephemerals.push({
        channel,
        user,
        messageTs,
        threadTs: typeof body.thread_ts === 'string' ? body.thread_ts : undefined,
        text: typeof body.text === 'string' ? body.text : undefined,
        blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
      });
      return { ok: true, message_ts: messageTs };
    },

    'chat.delete': (call) => {
      const channel = String(call.body.channel ?? '');
      const ts = String(call.body.ts ?? '');
      const stored = this.message(channel, ts);
      if (!stored || stored.deleted) return { ok: false, error: 'message_not_found' };
      stored.deleted = true;
      return { ok: true, channel, ts };
    },

    'views.open': (call) => this.openView(call, undefined),

    'views.push': (call) => {
      // A pushed view sits on top of the one the interaction came from.
      const top = [...this.views.values()].at(-1);
      return this.openView(call, top?.id);
    },

    'views.update': (call) => {
      const { body } = call;
      const id = typeof body.view_id === 'string' ? body.view_id : undefined;
      const externalId = typeof body.external_id === 'string' ? body.external_id : undefined;
      const stored =
        (id !== undefined ? this.views.get(id) : undefined) ??
        [...this.views.values()].find((v) => externalId !== undefined && v.view.external_id === externalId);
      if (!stored) return { ok: false, error: 'not_found' };
      if (typeof body.hash === 'string' && body.hash !== stored.hash) {
        return { ok: false, error: 'hash_conflict' };
      }
      const invalid = this.checkViewBody(call.method, body.view);
      if (invalid) return invalid;
      stored.view = body.view as Record<string, unknown>;
      stored.hash = `h${++this.seq}`;
      stored.history.push(stored.view);
      return { ok: true, view: this.viewJson(stored) };
    },

    'users.info': (call) => {
      const user = this.users.get(String(call.body.user ?? ''));
      if (!user) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: {
          id: user.id,
          team_id: this.teamId,
          name: user.name,
          real_name: user.real_name ?? '',
          deleted: user.deleted ?? false,
          is_bot: user.is_bot ?? false,
          tz: user.tz ?? 'Europe/London',
          profile: {
            display_name: user.display_name ?? '',
            display_name_normalized: user.display_name ?? '',
            real_name: user.real_name ?? '',
            real_name_normalized: user.real_name ?? '',
          },
        },
      };
    },

    'usergroups.users.list': (call) => {
      const members = this.usergroups.get(String(call.body.usergroup ?? ''));
      if (!members) return { ok: false, error: 'no_such_subteam' };
      return { ok: true, users: [...members] };
    },

    'conversations.open': (call) => {
      const { body } = call;
      if (typeof body.channel === 'string' && body.channel !== '') {
        return { ok: true, channel: { id: body.channel } };
      }
      const users = String(body.users ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      if (users.length === 0) return { ok: false, error: 'users_list_not_supplied' };
      const unknown = users.find((u) => !this.users.has(u));
      if (unknown !== undefined) return { ok: false, error: 'user_not_found' };
      const id =
        users.length === 1 ? this.dmChannelFor(users[0]!) : `G${users.map((u) => u.slice(1)).join('')}`;
      return { ok: true, no_op: true, already_open: true, channel: { id } };
    },

    'files.getUploadURLExternal': (call) => {
      const { body } = call;
      const filename = typeof body.filename === 'string' ? body.filename : '';
      const length = Number(body.length);
      if (filename === '') return { ok: false, error: 'invalid_arguments' };
      if (!Number.isInteger(length) || length <= 0) return { ok: false, error: 'invalid_arguments' };
      const id = `F${String(++this.seq).padStart(8, '0')}`;
      this.files.set(id, {
        id,
        filename,
        length,
        altText: typeof body.alt_text === 'string' ? body.alt_text : undefined,
        bytes: undefined,
        completed: false,
        title: undefined,
        channel: undefined,
        initialComment: undefined,
        threadTs: undefined,
      });
      return { ok: true, upload_url: `${this.baseUrl}/upload/${id}`, file_id: id };
    },

    'files.completeUploadExternal': (call) => {
      const { body } = call;
      const list = Array.isArray(body.files) ? (body.files as Array<Record<string, unknown>>) : undefined;
      if (!list || list.length === 0) return { ok: false, error: 'invalid_arguments' };
      const files: StoredFile[] = [];
      for (const entry of list) {
        const file = this.files.get(String(entry.id ?? ''));
        if (!file) return { ok: false, error: 'file_not_found' };
        if (file.bytes === undefined) return { ok: false, error: 'file_not_uploaded' };
        files.push(file);
      }
      const channel =
        typeof body.channel_id === 'string' && body.channel_id !== '' ? body.channel_id : undefined;
      const threadTs =
        typeof body.thread_ts === 'string' && body.thread_ts !== '' ? body.thread_ts : undefined;
      const comment = typeof body.initial_comment === 'string' ? body.initial_comment : undefined;
      list.forEach((entry, i) => {
        const file = files[i]!;
        file.completed = true;
        file.title = typeof entry.title === 'string' ? entry.title : file.filename;
        file.channel = channel;
        file.initialComment = comment;
        file.threadTs = threadTs;
      });
      if (channel !== undefined) {
        // Sharing a file posts a message carrying it, in the channel or the thread.
        const stored = this.store(channel, { text: comment }, threadTs);
        stored.files.push(...files);
        if (threadTs !== undefined) {
          const parent = this.message(channel, threadTs);
          if (parent) parent.replyCount++;
        }
      }
      return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title, name: f.filename })) };
    },

    'apps.connections.open': () => {
      if (this.socketModeUrl === undefined) return { ok: false, error: 'socket_mode_not_configured' };
      return { ok: true, url: this.socketModeUrl };
    },
  };

  private store(
    channel: string,
    body: Readonly<Record<string, unknown>>,
    threadTs: string | undefined,
  ): StoredMessage {
    const version: MessageVersion = {
      text: typeof body.text === 'string' ? body.text : undefined,
      blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
      attachments: Array.isArray(body.attachments) ? body.attachments : undefined,
    };
    const stored: StoredMessage = {
      channel,
      ts: this.nextTs(),
      threadTs,
      ...version,
      files: [],
      history: [version],
      deleted: false,
      replyCount: 0,
    };
    const list = this.channels.get(channel) ?? [];
    list.push(stored);
    this.channels.set(channel, list);
    return stored;
  }

  private messageJson(m: StoredMessage): Record<string, unknown> {
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

  private checkViewBody(method: string, view: unknown): Record<string, unknown> | null {
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

  private openView(call: RecordedCall, parentId: string | undefined): Record<string, unknown> {
    const { body } = call;
    const triggerId = typeof body.trigger_id === 'string' ? body.trigger_id : undefined;
    if (triggerId === undefined || triggerId === '') return { ok: false, error: 'invalid_trigger_id' };
    const issued = this.triggers.get(triggerId);
    if (issued) {
      if (issued.used) return { ok: false, error: 'exchanged_trigger_id' };
      if (Date.now() - issued.issuedAt > TRIGGER_LIFETIME_MS) {
        return { ok: false, error: 'expired_trigger_id' };
      }
      issued.used = true;
    } else if (this.strictTriggerIds) {
      return { ok: false, error: 'invalid_trigger_id' };
    }
    const invalid = this.checkViewBody(call.method, body.view);
    if (invalid) return invalid;
    const view = body.view as Record<string, unknown>;
    const stored: StoredView = {
      id: `V${String(++this.seq).padStart(8, '0')}`,
      triggerId,
      view,
      hash: `h${++this.seq}`,
      history: [view],
      parentId,
    };
    this.views.set(stored.id, stored);
    return { ok: true, view: this.viewJson(stored) };
  }

  private viewJson(v: StoredView): Record<string, unknown> {
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

  private async handleUpload(
    id: string,
    raw: Buffer,
    contentType: string,
    res: ServerResponse,
  ): Promise<void> {
    const call: RecordedCall = {
      index: this.calls.length,
      method: 'upload',
      body: { file_id: id, length: raw.length },
      token: undefined,
      contentType,
      at: Date.now(),
      status: 200,
      response: undefined,
    };
    this.calls.push(call);
    const file = this.files.get(id);
    if (!file) {
      this.unexpected.push({
        method: 'POST',
        path: `/upload/${id}`,
        reason: 'upload to a URL the fake never gave',
      });
      call.status = 404;
      call.response = { ok: false, error: 'file_not_found' };
      res.writeHead(404).end('not found');
      this.events.emit('call', call);
      return;
    }
    let bytes = raw;
    if (contentType.includes('multipart/form-data')) {
      // The SDK sends the bytes as the one file part of a multipart form.
      const form = await readForm(raw, contentType);
      const part = [...form.values()].find((v): v is File => typeof v !== 'string');
      bytes = part ? Buffer.from(await part.arrayBuffer()) : Buffer.alloc(0);
    }
    if (bytes.length !== file.length) {
      this.violation('upload', `file ${id} announced ${file.length} bytes but ${bytes.length} arrived`);
    }
    file.bytes = bytes;
    call.response = { ok: true };
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${bytes.length}`);
    this.events.emit('call', call);
  }
}
