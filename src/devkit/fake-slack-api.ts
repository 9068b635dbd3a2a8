import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSeededRandom, type SeededRandom } from '../sim/seeded-random.js';
import { slackMethods } from './slack/methods.js';
import { SlackState } from './slack/slack-state.js';
import {
  closeServer,
  decodeField,
  decodeForm,
  type FakeChaos,
  type FakeSlackOptions,
  type Handler,
  type Injection,
  type RecordedCall,
  readBody,
  readForm,
} from './slack/types.js';

// The one fake of Slack's Web API, for the tests, the benchmarks and `gpuops demo`: a real HTTP server
// on loopback that the bot's WebClient and Bolt talk to (SLACK_API_URL). It answers the methods gpuops
// uses as Slack documents them (src/devkit/slack/methods.ts), keeps what a person would see
// (src/devkit/slack/slack-state.ts), records every call, checks Block Kit limits, serves response_urls
// and file uploads, and can answer a method with a rate limit or an error on demand. It fails a test
// on a request it did not expect (`unexpected`), and lists what it got.

export type { FunctionDefinition, FunctionEnd, FunctionRun } from './slack/function-runs.js';
export type * from './slack/types.js';

export class FakeSlackApi extends SlackState {
  readonly calls: RecordedCall[] = [];

  private readonly server: Server;
  private readonly tokens: ReadonlySet<string>;
  private readonly appToken: string;
  private readonly handlers: Readonly<Record<string, Handler>> = slackMethods(this);
  private readonly injections = new Map<string, Injection[]>();
  /** `method channel` → when the rate limit Slack answered there ends. */
  private readonly limitedUntil = new Map<string, number>();
  private chaosOptions: (FakeChaos & { readonly random: SeededRandom }) | undefined;

  private constructor(options: FakeSlackOptions) {
    super(options);
    this.tokens = new Set(options.tokens ?? ['xoxb-test']);
    this.appToken = options.appToken ?? 'xapp-test';
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

  /** Base of the Web API: a WebClient's slackApiUrl, and SLACK_API_URL. */
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

  /**
   * The next `times` calls to `method` get HTTP 429 with Retry-After. With `channel`, only calls to
   * that conversation, and the limit then holds as Slack's does: every call to `method` there within
   * Retry-After is answered 429 too (with the seconds left), while other conversations go through.
   */
  rateLimit(
    method: string,
    retryAfterSeconds = 1,
    times = 1,
    options: { readonly channel?: string } = {},
  ): void {
    this.inject(method, {
      remaining: times,
      status: 429,
      body: { ok: false, error: 'ratelimited' },
      headers: { 'retry-after': String(retryAfterSeconds) },
      ...(options.channel !== undefined
        ? { channel: options.channel, holdMs: retryAfterSeconds * 1000 }
        : {}),
    });
  }

  /** The next `times` calls to `method` (to `channel`, when given) answer { ok: false, error }. */
  failWith(method: string, error: string, times = 1, options: { readonly channel?: string } = {}): void {
    this.inject(method, {
      remaining: times,
      status: 200,
      body: { ok: false, error },
      headers: {},
      ...(options.channel !== undefined ? { channel: options.channel } : {}),
    });
  }

  /** Whether a per-conversation rate limit (rateLimit with `channel`) still holds there now. */
  isRateLimited(method: string, channel: string): boolean {
    return this.heldLimit(method, channel) !== undefined;
  }

  /** The next `times` calls to `method` are answered as usual, after `delayMs` (a slow Slack). */
  slow(method: string, delayMs: number, times = 1): void {
    this.inject(method, { remaining: times, status: 200, body: {}, headers: {}, delayMs });
  }

  /** Random rate limits and not_in_channel answers from now on (see FakeChaos); undefined stops them. */
  chaos(options: FakeChaos | undefined): void {
    this.chaosOptions = options ? { ...options, random: createSeededRandom(options.seed ?? 1) } : undefined;
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

  private takeInjection(method: string, channel: string | undefined): Injection | undefined {
    const list = this.injections.get(method);
    const index = list?.findIndex((i) => i.channel === undefined || i.channel === channel) ?? -1;
    const first = index >= 0 ? list![index] : undefined;
    if (!first) return undefined;
    first.remaining--;
    if (first.remaining <= 0) list!.splice(index, 1);
    return first;
  }

  /** A rate limit still holding for this method and conversation: its answer, with the seconds left. */
  private heldLimit(method: string, channel: string | undefined): Injection | undefined {
    if (channel === undefined) return undefined;
    const until = this.limitedUntil.get(`${method} ${channel}`) ?? 0;
    const left = until - Date.now();
    if (left <= 0) return undefined;
    return {
      remaining: 0,
      status: 429,
      body: { ok: false, error: 'ratelimited' },
      headers: { 'retry-after': String(Math.ceil(left / 1000)) },
    };
  }

  private chaosAnswer(method: string, channel: string | undefined): Injection | undefined {
    const chaos = this.chaosOptions;
    if (!chaos) return undefined;
    const applies = chaos.methods ? chaos.methods.includes(method) : method.startsWith('chat.');
    if (!applies) return undefined;
    const draw = chaos.random.next();
    const limited = chaos.rateLimited ?? 0;
    if (draw < limited) {
      return {
        remaining: 0,
        status: 429,
        body: { ok: false, error: 'ratelimited' },
        headers: { 'retry-after': String(chaos.retryAfterSeconds ?? 1) },
      };
    }
    if (channel !== undefined && draw < limited + (chaos.notInChannel ?? 0)) {
      return { remaining: 0, status: 200, body: { ok: false, error: 'not_in_channel' }, headers: {} };
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await readBody(req);
    const contentType = String(req.headers['content-type'] ?? '');
    if (req.method === 'POST' && url.pathname.startsWith('/response/')) {
      const [status, answer] = this.respond(
        url.pathname.slice('/response/'.length),
        await this.decode(raw, contentType),
      );
      res
        .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(answer));
      return;
    }
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
    const channel = typeof body.channel === 'string' ? body.channel : undefined;
    let injected =
      this.heldLimit(method, channel) ??
      this.takeInjection(method, channel) ??
      this.chaosAnswer(method, channel);
    if (injected?.delayMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, injected!.delayMs));
      injected = undefined;
    }
    if (injected?.holdMs !== undefined && channel !== undefined) {
      this.limitedUntil.set(`${method} ${channel}`, Date.now() + injected.holdMs);
    }
    if (injected) {
      call.status = injected.status;
      call.response = injected.body;
      headers = injected.headers;
    } else {
      call.response = await this.answer(method, call);
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
    return this.tokens.has(token) || this.functionRuns.tokenValid(token) ? null : 'invalid_auth';
  }

  private async answer(method: string, call: RecordedCall): Promise<Record<string, unknown>> {
    const handler = this.handlers[method];
    if (!handler) {
      this.unexpected.push({ method: 'POST', path: `/api/${method}`, reason: 'unknown method' });
      this.options.onUnknownMethod?.(method);
      return { ok: false, error: 'unknown_method' };
    }
    const authError = this.authorize(method, call.token);
    if (authError) return { ok: false, error: authError };
    return handler(call);
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
