import { createHmac, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { checkBlocks } from '../../src/devkit/block-kit-limits.js';

// Plays Slack toward the bot: builds slash command and interaction payloads as Slack sends them, signs
// them exactly as Slack does (v0 HMAC-SHA256 over `v0:{timestamp}:{raw body}`), and serves the
// response_url the bot answers on.

export const DEFAULTS = {
  teamId: 'T0FAKE',
  teamDomain: 'fake-team',
  apiAppId: 'A0FAKE',
  channelId: 'C0GPU',
  channelName: 'gpu-ops',
  userId: 'U0ADA',
  userName: 'ada',
  /** Slack's legacy verification token; Bolt ignores it, Slack still sends it. */
  token: 'legacy-verification-token',
} as const;

/** `v0=` + hex HMAC-SHA256 of `v0:${timestamp}:${rawBody}` with the signing secret. */
export function signSlackRequest(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/** A trigger id shaped like Slack's. Use the fake's issueTriggerId() to have views.open check its age. */
export function randomTriggerId(): string {
  return `${Date.now()}.${Math.floor(Math.random() * 1e12)}.${randomBytes(16).toString('hex')}`;
}

export interface SlashCommandOptions {
  readonly text: string;
  readonly command?: string;
  readonly userId?: string;
  readonly userName?: string;
  readonly channelId?: string;
  readonly channelName?: string;
  readonly teamId?: string;
  readonly responseUrl?: string;
  readonly triggerId?: string;
}

/** The form-encoded body Slack posts for `/gpu <text>`. */
export function slashCommandBody(options: SlashCommandOptions): string {
  return new URLSearchParams({
    token: DEFAULTS.token,
    team_id: options.teamId ?? DEFAULTS.teamId,
    team_domain: DEFAULTS.teamDomain,
    channel_id: options.channelId ?? DEFAULTS.channelId,
    channel_name: options.channelName ?? DEFAULTS.channelName,
    user_id: options.userId ?? DEFAULTS.userId,
    user_name: options.userName ?? DEFAULTS.userName,
    command: options.command ?? '/gpu',
    text: options.text,
    api_app_id: DEFAULTS.apiAppId,
    is_enterprise_install: 'false',
    response_url: options.responseUrl ?? 'https://hooks.slack.invalid/commands/T0FAKE/1/none',
    trigger_id: options.triggerId ?? randomTriggerId(),
  }).toString();
}

interface UserRef {
  readonly userId?: string;
  readonly userName?: string;
  readonly teamId?: string;
}

function userOf(options: UserRef): Record<string, string> {
  const id = options.userId ?? DEFAULTS.userId;
  const name = options.userName ?? DEFAULTS.userName;
  return { id, username: name, name, team_id: options.teamId ?? DEFAULTS.teamId };
}

export interface BlockActionOptions extends UserRef {
  readonly actionId: string;
  readonly value?: string;
  readonly blockId?: string;
  /** Button label, as Slack echoes it. */
  readonly text?: string;
  readonly channelId?: string;
  /** The message the button sits on (its ts and content); omit for a button in a view. */
  readonly message?: { readonly ts: string; readonly text?: string; readonly blocks?: readonly unknown[] };
  /** The view the button sits on, for buttons in modals or App Home. */
  readonly view?: Readonly<Record<string, unknown>>;
  readonly responseUrl?: string;
  readonly triggerId?: string;
  readonly isEphemeral?: boolean;
}

/** A block_actions payload: one button press. */
export function blockActionsPayload(options: BlockActionOptions): Record<string, unknown> {
  const channelId = options.channelId ?? DEFAULTS.channelId;
  const actionTs = `${(Date.now() / 1000).toFixed(6)}`;
  const container = options.view
    ? { type: 'view', view_id: options.view.id }
    : {
        type: 'message',
        message_ts: options.message?.ts,
        channel_id: channelId,
        is_ephemeral: options.isEphemeral ?? false,
      };
  return {
    type: 'block_actions',
    user: userOf(options),
    api_app_id: DEFAULTS.apiAppId,
    token: DEFAULTS.token,
    container,
    trigger_id: options.triggerId ?? randomTriggerId(),
    team: { id: options.teamId ?? DEFAULTS.teamId, domain: DEFAULTS.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    ...(options.view
      ? { view: options.view }
      : {
          channel: { id: channelId, name: DEFAULTS.channelName },
          message: {
            type: 'message',
            ts: options.message?.ts,
            text: options.message?.text ?? '',
            blocks: options.message?.blocks ?? [],
          },
          response_url: options.responseUrl ?? 'https://hooks.slack.invalid/actions/T0FAKE/1/none',
        }),
    state: { values: {} },
    actions: [
      {
        type: 'button',
        action_id: options.actionId,
        block_id: options.blockId ?? 'actions',
        text: { type: 'plain_text', text: options.text ?? options.actionId, emoji: true },
        ...(options.value !== undefined ? { value: options.value } : {}),
        action_ts: actionTs,
      },
    ],
  };
}

export interface ViewSubmissionOptions extends UserRef {
  readonly callbackId: string;
  /** state.values: block_id → action_id → the element's value object (e.g. { type, value }). */
  readonly values: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly privateMetadata?: string;
  readonly viewId?: string;
  readonly hash?: string;
  readonly blocks?: readonly unknown[];
  readonly triggerId?: string;
  /** For modals with response_url_enabled inputs. */
  readonly responseUrls?: readonly {
    block_id: string;
    action_id: string;
    channel_id: string;
    response_url: string;
  }[];
}

/** A view_submission payload: the person pressed Submit on a modal. */
export function viewSubmissionPayload(options: ViewSubmissionOptions): Record<string, unknown> {
  const viewId = options.viewId ?? 'V0FAKEVIEW';
  return {
    type: 'view_submission',
    team: { id: options.teamId ?? DEFAULTS.teamId, domain: DEFAULTS.teamDomain },
    user: userOf(options),
    api_app_id: DEFAULTS.apiAppId,
    token: DEFAULTS.token,
    trigger_id: options.triggerId ?? randomTriggerId(),
    enterprise: null,
    is_enterprise_install: false,
    view: {
      id: viewId,
      team_id: options.teamId ?? DEFAULTS.teamId,
      type: 'modal',
      callback_id: options.callbackId,
      private_metadata: options.privateMetadata ?? '',
      blocks: options.blocks ?? [],
      state: { values: options.values },
      hash: options.hash ?? 'h0',
      title: { type: 'plain_text', text: 'gpuops' },
      root_view_id: viewId,
      previous_view_id: null,
      app_id: DEFAULTS.apiAppId,
      bot_id: 'B0BOT',
    },
    response_urls: options.responseUrls ?? [],
  };
}

/** A modal's state.values as Slack sends them: each value typed or picked in the block of that id. */
export function filledValues(
  blocks: ReadonlyArray<{ block_id?: string; element?: { type: string; action_id: string } }>,
  fields: Readonly<Record<string, string>>,
): Record<string, Record<string, unknown>> {
  const values: Record<string, Record<string, unknown>> = {};
  for (const [block, value] of Object.entries(fields)) {
    const element = blocks.find((b) => b.block_id === block)?.element;
    if (!element) continue;
    const picked = { text: { type: 'plain_text', text: value }, value };
    values[block] = {
      [element.action_id]: element.type.includes('select')
        ? { type: element.type, selected_option: picked }
        : { type: element.type, value },
    };
  }
  return values;
}

/** Interactivity bodies are form-encoded with the JSON in one `payload` field. */
export function interactionBody(payload: Readonly<Record<string, unknown>>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** An Events API envelope (event_callback) around one event, sent as JSON. */
export function eventCallbackBody(event: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    token: DEFAULTS.token,
    team_id: DEFAULTS.teamId,
    api_app_id: DEFAULTS.apiAppId,
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { team_id: DEFAULTS.teamId, user_id: 'U0BOT', is_bot: true, is_enterprise_install: false },
    ],
  };
}

export interface PostSignedOptions {
  readonly secret: string;
  /** Seconds since the epoch (default now); an old one makes a stale request. */
  readonly timestamp?: number;
  /** Sends a signature made with the wrong secret. */
  readonly badSignature?: boolean;
  /** Default: JSON for an object body, form-encoded for a string. */
  readonly contentType?: string;
  /** Marks a redelivery as Slack does (X-Slack-Retry-Num, X-Slack-Retry-Reason). */
  readonly retryNum?: number;
  readonly signal?: AbortSignal;
}

export interface SignedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** Milliseconds from sending to the full answer. */
  readonly elapsedMs: number;
  json(): unknown;
}

/** POSTs a body signed as Slack signs it. */
export async function postSigned(
  url: string,
  body: string | Readonly<Record<string, unknown>>,
  options: PostSignedOptions,
): Promise<SignedResponse> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const contentType =
    options.contentType ??
    (typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json');
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const secret = options.badSignature ? `${options.secret}-wrong` : options.secret;
  const headers: Record<string, string> = {
    'content-type': contentType,
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': signSlackRequest(secret, timestamp, raw),
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
  };
  if (options.retryNum !== undefined) {
    headers['x-slack-retry-num'] = String(options.retryNum);
    headers['x-slack-retry-reason'] = 'http_timeout';
  }
  const started = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers,
    body: raw,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.body.text();
  const elapsedMs = performance.now() - started;
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    elapsedMs,
    json: () => JSON.parse(text) as unknown,
  };
}

export interface ResponseUrlPost {
  /** The response URL's id (the last path segment). */
  readonly id: string;
  readonly body: Readonly<Record<string, unknown>>;
  readonly at: number;
  readonly responseType: string | undefined;
  readonly replaceOriginal: boolean | undefined;
  readonly deleteOriginal: boolean | undefined;
}

// Slack takes true or "true" alike.
function flag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return undefined;
}

/** Slack allows five posts to one response_url (within 30 minutes). */
const RESPONSE_URL_USES = 5;

/** The response_url endpoint: a real HTTP server that records what the bot posts there. */
export class ResponseUrlServer {
  readonly posts: ResponseUrlPost[] = [];
  readonly violations: string[] = [];
  /** Posts Slack refused because their URL had expired (404 expired_url), by URL id. */
  readonly refused: string[] = [];
  private readonly expired = new Set<string>();
  private bornExpired = 0;
  private readonly server: Server;
  private readonly events = new EventEmitter();
  private base = '';
  private seq = 0;

  private constructor() {
    this.events.setMaxListeners(0);
    this.server = createServer((req, res) => {
      void this.receive(req).then(
        (status) =>
          res
            .writeHead(status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: status === 200 })),
        () => res.writeHead(500).end(),
      );
    });
  }

  static async start(): Promise<ResponseUrlServer> {
    const server = new ResponseUrlServer();
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    server.base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    return server;
  }

  /** A fresh response URL; each slash command or interaction gets its own. */
  newUrl(): string {
    const url = `${this.base}/commands/${DEFAULTS.teamId}/${++this.seq}/${randomBytes(8).toString('hex')}`;
    if (this.bornExpired > 0) {
      this.bornExpired--;
      this.expire(url);
    }
    return url;
  }

  /** Slack stops taking answers on `url`, as 30 minutes after it was issued: 404 expired_url. */
  expire(url: string): void {
    this.expired.add(url.split('/').at(-1) ?? '');
  }

  /** The next `count` URLs issued have expired by the time anything is posted to them. */
  issueExpired(count = 1): void {
    this.bornExpired += count;
  }

  postsTo(url: string): ResponseUrlPost[] {
    const id = url.split('/').at(-1);
    return this.posts.filter((p) => p.id === id);
  }

  /** Resolves with the first post (already made or yet to come) matching the predicate. */
  waitForPost(
    predicate: (post: ResponseUrlPost) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<ResponseUrlPost> {
    const done = this.posts.find(predicate);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const onPost = (post: ResponseUrlPost) => {
        if (!predicate(post)) return;
        clearTimeout(timer);
        this.events.off('post', onPost);
        resolve(post);
      };
      const timer = setTimeout(() => {
        this.events.off('post', onPost);
        reject(new Error(`no matching response_url post within ${timeoutMs} ms; got ${this.posts.length}`));
      }, timeoutMs);
      this.events.on('post', onPost);
    });
  }

  async close(): Promise<void> {
    this.events.removeAllListeners();
    await new Promise<void>((resolve, reject) => {
      this.server.close((err) => (err ? reject(err) : resolve()));
      this.server.closeAllConnections();
    });
  }

  private async receive(req: IncomingMessage): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const id = (req.url ?? '').split('/').at(-1) ?? '';
    if (this.expired.has(id)) {
      this.refused.push(id);
      return 404;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      this.violations.push(`response_url ${id}: body is not JSON`);
      return 400;
    }
    if (this.posts.filter((p) => p.id === id).length >= RESPONSE_URL_USES) {
      this.violations.push(`response_url ${id} used more than ${RESPONSE_URL_USES} times`);
      return 404;
    }
    if (body.blocks !== undefined) {
      for (const problem of checkBlocks(body.blocks, 'message')) {
        this.violations.push(`response_url ${id}: ${problem}`);
      }
    }
    const post: ResponseUrlPost = {
      id,
      body,
      at: Date.now(),
      responseType: typeof body.response_type === 'string' ? body.response_type : undefined,
      replaceOriginal: flag(body.replace_original),
      deleteOriginal: flag(body.delete_original),
    };
    this.posts.push(post);
    this.events.emit('post', post);
    return 200;
  }
}
