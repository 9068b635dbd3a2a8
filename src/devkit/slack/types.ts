import type { IncomingMessage, Server } from 'node:http';

// The data of the fake Slack Web API (src/devkit/fake-slack-api.ts), as tests, the demo and the
// benchmarks read it, and the helpers that decode what Slack's clients send.

export interface FakeUser {
  readonly id: string;
  readonly name: string;
  readonly real_name?: string;
  readonly display_name?: string;
  readonly is_bot?: boolean;
  readonly deleted?: boolean;
  readonly tz?: string;
  /** Home workspace; default the fake's own. Another one is a Slack Connect member of a shared channel. */
  readonly team_id?: string;
  /** Multi-channel guest. */
  readonly is_restricted?: boolean;
  /** Single-channel guest (Slack sets is_restricted too). */
  readonly is_ultra_restricted?: boolean;
  /** The person's Enterprise Grid organisation (users.info enterprise_user); default the fake's own, if any. */
  readonly enterprise_id?: string;
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
  /** The Enterprise Grid organisation the fake workspace belongs to (auth.test enterprise_id). */
  readonly enterpriseId?: string;
  /** Installed org-wide, as custom steps need: auth.test then names the organisation and no workspace. */
  readonly orgWideInstall?: boolean;
  readonly botUserId?: string;
  readonly botId?: string;
  /** Reject views.open/push trigger ids this fake did not issue (see issueTriggerId). */
  readonly strictTriggerIds?: boolean;
  /** How long an issued trigger id opens a view; Slack's is 3 s (the demo allows more for slow typing). */
  readonly triggerLifetimeMs?: number;
  /** Save uploaded files in this folder (the demo shows their paths). */
  readonly filesDir?: string;
  /** Told about each Web API method the fake does not know (the demo prints it). */
  readonly onUnknownMethod?: (method: string) => void;
  /**
   * Conversations as Slack knows them (see FakeConversation). A channel not listed here is a public
   * channel the bot is in, as before: strictness is opt-in, per conversation.
   */
  readonly conversations?: Readonly<Record<string, FakeConversation>>;
  /** The app's Home tab (manifest home_tab_enabled); default true. Off, views.publish answers not_enabled. */
  readonly homeTabEnabled?: boolean;
}

/**
 * A conversation and the bot's place in it, which decides what Slack answers: a private channel the
 * bot is not in gives `not_in_channel`, a DM or group DM between people (where `/gpu` can be typed)
 * gives `channel_not_found`, an archived channel `is_archived`. chat.postEphemeral needs the bot to be
 * a member even of a public channel (chat:write.public covers chat.postMessage only); response_urls
 * work everywhere.
 */
export interface FakeConversation {
  readonly kind: 'public' | 'private' | 'im' | 'mpim';
  /** Whether the bot is a member; default true for public channels, false otherwise. */
  readonly member?: boolean;
  readonly archived?: boolean;
}

/**
 * Random answers on Slack's bad days, for load runs: each Web API call of `methods` (default every
 * chat.* call) is answered 429 with `retryAfterSeconds` at rate `rateLimited`, and each call naming a
 * channel `not_in_channel` at rate `notInChannel`. Seeded, so a run can be repeated.
 */
export interface FakeChaos {
  readonly rateLimited?: number;
  readonly notInChannel?: number;
  readonly retryAfterSeconds?: number;
  readonly methods?: readonly string[];
  readonly seed?: number;
}

/** What a person could see change, in order, for whoever shows it (the demo's terminal). */
export type FakeActivity =
  | { readonly kind: 'message'; readonly edit: boolean; readonly message: StoredMessage }
  | { readonly kind: 'deleted'; readonly message: StoredMessage }
  | { readonly kind: 'ephemeral'; readonly replaced: boolean; readonly ephemeral: EphemeralMessage }
  | { readonly kind: 'view'; readonly updated: boolean; readonly view: StoredView };

/** Where a button or a command was, which decides what a post to its response_url does. */
export type ResponsePlace =
  | { readonly kind: 'message'; readonly channel: string; readonly ts: string }
  | { readonly kind: 'ephemeral'; readonly id: string; readonly channel: string }
  | { readonly kind: 'view'; readonly viewId: string };

/** What a response_url was given for. */
export interface ResponseOrigin {
  readonly userId: string;
  readonly channelId: string;
  /** The message a button was pressed on, when it was. */
  readonly place?: ResponsePlace;
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
  readonly id: string;
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
  /** Whose form it is: the user of the interaction that issued the trigger, when known. */
  readonly user: string | undefined;
  /** Closed by the person (submitted or cancelled): Slack's client closes views, not the API. */
  closed: boolean;
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
  /** Where the bytes were saved, with the `filesDir` option. */
  path: string | undefined;
}

export interface Injection {
  remaining: number;
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  /** Only calls naming this channel (body.channel) take it. */
  readonly channel?: string;
  /** A 429 that then holds for Retry-After seconds: calls within it are answered 429 too. */
  readonly holdMs?: number;
  /** Answer normally, but only after this long (a slow Slack). */
  readonly delayMs?: number;
}

export type Handler = (call: RecordedCall) => Record<string, unknown> | Promise<Record<string, unknown>>;

export const JSON_FIELDS = new Set(['blocks', 'view', 'attachments', 'files', 'metadata', 'outputs']);
export const TRIGGER_LIFETIME_MS = 3000;

/** Waits for a server to close after dropping its keep-alive sockets. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Form values are strings; blocks, view, attachments and files carry JSON inside them. */
export function decodeField(key: string, value: string): unknown {
  if (!JSON_FIELDS.has(key) || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // left as the string: the method's checks report it
  }
}

export function decodeForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) out[key] = decodeField(key, value);
  return out;
}

export async function readForm(raw: Buffer, contentType: string): Promise<FormData> {
  return new Request('http://fake.invalid/', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: raw,
  }).formData();
}
