import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import { GPU_WORDS } from '../support/gpu-words.js';
import {
  interactionBody,
  postSigned,
  type SignedResponse,
  slashCommandBody,
  viewSubmissionPayload,
} from '../support/slack-driver.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { SIGNING_SECRET, slash, startRig, TYPE } from './support/reliability-rig.js';

// Whatever arrives at /slack/events, the listener answers in time with something a person can read,
// and only what Slack signed makes a job. Fuzzed `/gpu` text and form submissions (property-based,
// thousands of cases, fixed seeds), forged, stale and replayed signatures, and oversized bodies, against
// a listener composed as `gpuops web`. No worker runs here: whatever the fuzz queues stays queued.

const SEEDS = { text: 20_241, words: 20_242, forms: 20_243 };
/** What an answer must never show: internals instead of a sentence. */
const NOT_CLEAR =
  /undefined|\[object Object\]|\bNaN\b|\n\s+at |\bat [\w.<>]+ \(.*:\d+:\d+\)|TypeError|ReferenceError/;

/** The grammar's words (from the specs), and values and noise to mix them with. */
const WORDS = [
  ...GPU_WORDS,
  'on',
  'off',
  TYPE,
  'h100-hgx-80gb.8x',
  'v1.31',
  '1Ti',
  '512Gi',
  'train-1',
  'prod',
  'k=v',
  'a=',
  '=b',
  '<@U0ADA>',
  '<#C0GPU|gpu>',
  '&lt;',
  '&amp;',
  '"quoted name"',
  "'single'",
  '`code`',
  '*',
  '…',
  '🚀',
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
  '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60',
  '0',
  '-1',
  '99999999999999999999',
  '1e309',
  'null',
  '{}',
  '[]',
];

describe('bad input at the listener', () => {
  let rig: Rig;
  let web: Bot;
  let seq = 0;

  beforeAll(async () => {
    rig = await startRig();
    web = await rig.start('web');
    // A worker only long enough to cache the catalogue, so forms open with their real fields.
    const worker = await rig.start('worker');
    await rig.catalogue();
    await worker.stop();
  });

  afterAll(async () => {
    await rig?.close();
  });

  /** A 200 with something a person can read, or an empty ack whose answer went to the channel or a form. */
  async function expectClear(
    response: SignedResponse,
    channelId: string,
    since: number,
    triggerId?: string,
  ): Promise<void> {
    expect(response.status).toBe(200);
    if (response.text === '') {
      // A form opens before the acknowledgement; a channel message is posted right after it.
      const form = rig.slack.calls
        .slice(since)
        .some((c) => c.method === 'views.open' && triggerId !== undefined && c.body.trigger_id === triggerId);
      if (form) return;
      const shown = await rig.slack
        .waitFor('chat.postMessage', (c) => c.body.channel === channelId, 5_000, since)
        .then(() => true)
        .catch(() => false);
      expect(shown, 'an empty acknowledgement must come with a channel message or a form').toBe(true);
      return;
    }
    const body = response.json() as { text?: unknown; response_type?: unknown };
    expect(body.response_type).toBe('ephemeral');
    expect(typeof body.text).toBe('string');
    expect(String(body.text).trim()).not.toBe('');
    expect(JSON.stringify(body)).not.toMatch(NOT_CLEAR);
  }

  async function fuzzText(text: string): Promise<void> {
    const n = ++seq;
    const channelId = `C0FZ${n}`;
    const triggerId = `${Date.now()}.${n}.fuzz`;
    const sent = await slash(rig, web.url, text, { channelId, userId: `U0FZ${n}`, triggerId });
    await expectClear(sent.response, channelId, sent.since, triggerId);
  }

  it('answers thousands of fuzzed /gpu texts clearly and keeps running', async () => {
    const started = Date.now();
    const before = seq;
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 300, unit: 'binary' }), fuzzText), {
      numRuns: 1_200,
      seed: SEEDS.text,
    });
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 40 })), { maxLength: 10 })
          .map((words) => words.join(' ')),
        fuzzText,
      ),
      { numRuns: 1_800, seed: SEEDS.words },
    );
    // Still up and still itself.
    expect((await request(`${web.url.replace('/slack/events', '')}/healthz`)).statusCode).toBe(200);
    const help = await slash(rig, web.url, 'help', { channelId: 'C0FZHELP' });
    expect(String((help.response.json() as { text: string }).text)).toContain('gpu');
    expect(web.logLines.filter((l) => /"level":"(error|fatal)"/.test(l))).toEqual([]);
    console.info(
      `[reliability] bad input: ${seq - before} fuzzed /gpu texts answered clearly in ${Math.round((Date.now() - started) / 1000)} s`,
    );
  });

  it('answers fuzzed form submissions with errors on the fields, or takes them', async () => {
    // The real forms, opened as a person would.
    const opened: StoredView[] = [];
    for (const text of [
      'create',
      'keys add',
      'k8s create',
      'k8s pool add prod',
      'slurm create',
      'slurm pool add hpc',
      'slurm adduser hpc',
    ]) {
      const since = rig.slack.mark();
      const triggerId = rig.slack.issueTriggerId();
      const sent = await slash(rig, web.url, text, { channelId: 'C0FORMS', triggerId });
      expect(sent.response.status).toBe(200);
      const call = rig.slack.calls
        .slice(since)
        .find((c) => c.method === 'views.open' && c.response?.ok === true);
      if (call) opened.push(rig.slack.views.get((call.response as { view: { id: string } }).view.id)!);
    }
    expect(opened.length).toBeGreaterThanOrEqual(4);

    const started = Date.now();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...opened),
        fc.array(fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom(...WORDS), fc.constant('')), {
          minLength: 12,
          maxLength: 12,
        }),
        fc.oneof(
          { weight: 6, arbitrary: fc.constant<string | undefined>(undefined) },
          { weight: 1, arbitrary: fc.string({ maxLength: 120 }) },
          { weight: 1, arbitrary: fc.json() },
        ),
        fc.boolean(),
        async (stored, texts, metadata, dropSome) => {
          runs++;
          const n = ++seq;
          const view = stored.view as { callback_id: string; private_metadata: string; blocks: Block[] };
          const inputs = view.blocks.filter((b) => b.type === 'input' && b.block_id && b.element?.action_id);
          const values: Record<string, Record<string, unknown>> = {};
          inputs.forEach((block, i) => {
            if (dropSome && i % 2 === 1) return;
            values[block.block_id!] = {
              [block.element!.action_id!]: elementValue(block.element!, texts[i % texts.length]!),
            };
          });
          const since = rig.slack.mark();
          const response = await postSigned(
            web.url,
            interactionBody(
              viewSubmissionPayload({
                callbackId: view.callback_id,
                values,
                privateMetadata: metadata ?? view.private_metadata,
                viewId: stored.id,
                hash: stored.hash,
                blocks: view.blocks,
                userId: `U0FM${n}`,
              }),
            ),
            { secret: SIGNING_SECRET },
          );
          expect(response.status).toBe(200);
          if (response.text === '') {
            // Taken: the request shows in the form's channel (its "Queued" message or an approval card),
            // posted right after the acknowledgement.
            const channel = (JSON.parse(view.private_metadata) as { channelId: string }).channelId;
            await rig.slack.waitFor('chat.postMessage', (c) => c.body.channel === channel, 5_000, since);
            return;
          }
          const body = response.json() as { response_action?: string; errors?: Record<string, unknown> };
          expect(body.response_action).toBe('errors');
          const blockIds = new Set(inputs.map((b) => b.block_id));
          const errors = Object.entries(body.errors ?? {});
          expect(errors.length).toBeGreaterThan(0);
          for (const [block, message] of errors) {
            expect(blockIds.has(block)).toBe(true);
            expect(typeof message).toBe('string');
            expect(String(message).trim()).not.toBe('');
            expect(String(message)).not.toMatch(NOT_CLEAR);
          }
        },
      ),
      { numRuns: 1_200, seed: SEEDS.forms },
    );
    expect(web.logLines.filter((l) => /"level":"(error|fatal)"/.test(l))).toEqual([]);
    console.info(
      `[reliability] bad input: ${runs} fuzzed submissions of ${opened.length} forms answered clearly in ${Math.round((Date.now() - started) / 1000)} s`,
    );
  });

  it('refuses forged, stale and replayed signatures and oversized bodies with no job', async () => {
    const jobsBefore = await rig.pendingRequests();
    const postsBefore = rig.slack.callsTo('chat.postMessage').length;
    const body = slashCommandBody({ text: `create forged-1 ${TYPE}`, channelId: 'C0SIG' });
    const now = Math.floor(Date.now() / 1000);

    // Signed with another secret.
    expect((await postSigned(web.url, body, { secret: SIGNING_SECRET, badSignature: true })).status).toBe(
      401,
    );
    // Stale: signed correctly, six minutes ago (Slack's window is five).
    expect((await postSigned(web.url, body, { secret: SIGNING_SECRET, timestamp: now - 360 })).status).toBe(
      401,
    );
    // Replayed: a request captured with its signature, sent again once its timestamp is old.
    const old = now - 400;
    const captured = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(old),
      'x-slack-signature': `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${old}:${body}`).digest('hex')}`,
    };
    expect((await raw(web.url, captured, body)).statusCode).toBe(401);
    // The captured signature with a fresh timestamp does not match, and neither does a changed body.
    expect(
      (await raw(web.url, { ...captured, 'x-slack-request-timestamp': String(now) }, body)).statusCode,
    ).toBe(401);
    const fresh = {
      ...captured,
      'x-slack-request-timestamp': String(now),
      'x-slack-signature': `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${now}:${body}`).digest('hex')}`,
    };
    expect((await raw(web.url, fresh, body.replace('forged-1', 'forged-2'))).statusCode).toBe(401);
    // No signature at all.
    expect(
      (await raw(web.url, { 'content-type': 'application/x-www-form-urlencoded' }, body)).statusCode,
    ).toBe(401);
    // Oversized: two megabytes, correctly signed. The answer comes from the length alone.
    const huge = slashCommandBody({
      text: `create big-1 ${TYPE} ${'x'.repeat(2 * 1024 * 1024)}`,
      channelId: 'C0SIG',
    });
    expect([401, 413]).toContain(await oversized(web.url, huge));

    expect(await rig.pendingRequests()).toBe(jobsBefore);
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(postsBefore);
    expect(rig.slack.channelView('C0SIG')).toEqual([]);
    // The genuine request still works.
    const ok = await postSigned(web.url, slashCommandBody({ text: 'help', channelId: 'C0SIG' }), {
      secret: SIGNING_SECRET,
    });
    expect(ok.status).toBe(200);
  });
});

interface Block {
  readonly type: string;
  readonly block_id?: string;
  readonly element?: {
    readonly type: string;
    readonly action_id?: string;
    readonly options?: ReadonlyArray<{ text: unknown; value: string }>;
    readonly option_groups?: ReadonlyArray<{ options: ReadonlyArray<{ text: unknown; value: string }> }>;
  };
}

/** The value Slack would send for an element, typed or picked, with `text` as what was typed or chosen. */
function elementValue(element: NonNullable<Block['element']>, text: string): Record<string, unknown> {
  const options = element.options ?? element.option_groups?.flatMap((g) => g.options) ?? [];
  const pick = (i: number) =>
    options.length > 0 && i % 3 !== 0
      ? options[i % options.length]!
      : { text: { type: 'plain_text', text: text || 'x' }, value: text || 'x' };
  switch (element.type) {
    case 'static_select':
    case 'external_select':
    case 'radio_buttons':
      return { type: element.type, selected_option: text === '' ? null : pick(text.length) };
    case 'multi_static_select':
    case 'multi_external_select':
    case 'checkboxes':
      return {
        type: element.type,
        selected_options: text === '' ? [] : [pick(text.length), pick(text.length + 1)],
      };
    case 'number_input':
      return { type: element.type, value: text };
    default:
      return { type: element.type, value: text === '' ? null : text };
  }
}

/** Sends the headers of a signed request whose body is `body`, and the status it gets before the body. */
function oversized(url: string, body: string): Promise<number> {
  const timestamp = Math.floor(Date.now() / 1000);
  const length = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(length),
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`,
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.flushHeaders();
    // The body follows only if the server waits for it (it should not: the length says enough).
    setTimeout(() => {
      if (!req.destroyed) req.end(body);
    }, 1_000).unref();
  });
}

async function raw(url: string, headers: Record<string, string>, body: string) {
  const res = await request(url, { method: 'POST', headers, body });
  await res.body.dump();
  return res;
}
