import { LogLevel, type WebAPIPlatformError, WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';

const TOKEN = 'xoxb-test';
let fake: FakeSlackApi;
let client: WebClient;

function clientFor(token: string, extra: ConstructorParameters<typeof WebClient>[1] = {}): WebClient {
  return new WebClient(token, {
    slackApiUrl: fake.apiUrl,
    logLevel: LogLevel.ERROR,
    retryConfig: { retries: 0 },
    ...extra,
  });
}

async function slackError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as WebAPIPlatformError).data?.error ?? (err as Error).message);
  }
  throw new Error('expected the call to fail');
}

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

beforeEach(async () => {
  fake = await FakeSlackApi.start({
    users: [
      { id: 'U0ADA', name: 'ada', real_name: 'Ada Lovelace', display_name: 'ada.l' },
      { id: 'U0BOB', name: 'bob', real_name: 'Bob Page' },
    ],
    usergroups: { S0ADMINS: ['U0ADA'] },
    socketModeUrl: 'ws://127.0.0.1:1/link',
  });
  client = clientFor(TOKEN);
});

afterEach(async () => {
  await fake.close();
});

describe('fake Slack Web API with the real WebClient', () => {
  it('answers auth.test with the bot identity Bolt needs', async () => {
    const res = await client.auth.test();
    expect(res).toMatchObject({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0FAKE' });
    fake.assertNoViolations();
  });

  it('keeps what a channel shows: postMessage creates, update edits in place with history, delete removes', async () => {
    const posted = await client.chat.postMessage({
      channel: 'C1',
      text: 'queued',
      blocks: [section('*queued*')],
    });
    expect(posted.channel).toBe('C1');
    const ts = posted.ts!;
    await client.chat.update({ channel: 'C1', ts, text: 'working', blocks: [section('*working*')] });
    await client.chat.update({ channel: 'C1', ts, text: 'done', blocks: [section('*done* in 12 s')] });

    const [message] = fake.channelView('C1');
    expect(message?.text).toBe('done');
    expect(message?.blocks).toEqual([section('*done* in 12 s')]);
    expect(message?.history.map((v) => v.text)).toEqual(['queued', 'working', 'done']);

    // The form body's blocks arrived as a JSON string and were decoded.
    expect(fake.callsTo('chat.update')[0]?.contentType).toContain('application/x-www-form-urlencoded');
    expect(fake.callsTo('chat.update')[0]?.body.blocks).toEqual([section('*working*')]);

    await client.chat.delete({ channel: 'C1', ts });
    expect(fake.channelView('C1')).toEqual([]);
    expect(await slackError(client.chat.update({ channel: 'C1', ts, text: 'x' }))).toBe('message_not_found');
    fake.assertNoViolations();
  });

  it('keeps thread replies apart from the channel view', async () => {
    const parent = await client.chat.postMessage({ channel: 'C1', text: 'instances' });
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts!, text: 'page 1' });
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts!, text: 'page 2' });
    expect(fake.channelView('C1').map((m) => m.text)).toEqual(['instances']);
    expect(fake.thread('C1', parent.ts!).map((m) => m.text)).toEqual(['page 1', 'page 2']);
    expect(fake.message('C1', parent.ts!)?.replyCount).toBe(2);
    expect(
      await slackError(client.chat.postMessage({ channel: 'C1', thread_ts: '1.000001', text: 'x' })),
    ).toBe('thread_not_found');
  });

  it('posts to a user id in the DM that conversations.open names', async () => {
    const open = await client.conversations.open({ users: 'U0ADA' });
    const dm = open.channel?.id;
    expect(dm).toBe(fake.dmChannelFor('U0ADA'));
    const posted = await client.chat.postMessage({ channel: 'U0ADA', text: 'your kubeconfig' });
    expect(posted.channel).toBe(dm);
    expect(fake.messages(dm!).map((m) => m.text)).toEqual(['your kubeconfig']);
    expect(await slackError(client.conversations.open({ users: 'U0NOBODY' }))).toBe('user_not_found');
  });

  it('records ephemeral messages per user', async () => {
    const res = await client.chat.postEphemeral({ channel: 'C1', user: 'U0ADA', text: 'only you see this' });
    expect(res.message_ts).toBeTruthy();
    expect(fake.ephemerals).toMatchObject([{ channel: 'C1', user: 'U0ADA', text: 'only you see this' }]);
    expect(fake.channelView('C1')).toEqual([]);
  });

  it('opens, updates and pushes views, refusing reused, expired and stale-hash requests', async () => {
    const modal = (title: string) => ({
      type: 'modal' as const,
      callback_id: 'create_instance',
      title: { type: 'plain_text' as const, text: title },
      submit: { type: 'plain_text' as const, text: 'Create' },
      blocks: [section('loading…')],
    });
    const trigger = fake.issueTriggerId();
    const opened = await client.views.open({ trigger_id: trigger, view: modal('Create instance') });
    const id = opened.view!.id!;
    expect(await slackError(client.views.open({ trigger_id: trigger, view: modal('Again') }))).toBe(
      'exchanged_trigger_id',
    );
    expect(
      await slackError(client.views.open({ trigger_id: fake.issueTriggerId(3100), view: modal('Late') })),
    ).toBe('expired_trigger_id');

    const updated = await client.views.update({
      view_id: id,
      hash: opened.view!.hash!,
      view: modal('Create: H100'),
    });
    expect(fake.views.get(id)?.history.map((v) => (v.title as { text: string }).text)).toEqual([
      'Create instance',
      'Create: H100',
    ]);
    expect(
      await slackError(client.views.update({ view_id: id, hash: opened.view!.hash!, view: modal('Stale') })),
    ).toBe('hash_conflict');
    expect(updated.view?.hash).not.toBe(opened.view?.hash);

    const pushed = await client.views.push({ trigger_id: fake.issueTriggerId(), view: modal('Confirm') });
    expect(pushed.view?.previous_view_id).toBe(id);
    fake.assertNoViolations();
  });

  it('serves users.info with profile names and usergroups.users.list', async () => {
    const ada = await client.users.info({ user: 'U0ADA' });
    expect(ada.user?.name).toBe('ada');
    expect(ada.user?.profile?.display_name).toBe('ada.l');
    expect(ada.user?.profile?.real_name).toBe('Ada Lovelace');
    fake.setUser({ id: 'U0CAT', name: 'cat' });
    expect((await client.users.info({ user: 'U0CAT' })).user?.profile?.display_name).toBe('');
    expect(await slackError(client.users.info({ user: 'U0NONE' }))).toBe('user_not_found');

    expect((await client.usergroups.users.list({ usergroup: 'S0ADMINS' })).users).toEqual(['U0ADA']);
    expect(await slackError(client.usergroups.users.list({ usergroup: 'S0NONE' }))).toBe('no_such_subteam');
  });

  it('round-trips files.uploadV2: upload URL, the bytes, and completion into a thread', async () => {
    const parent = await client.chat.postMessage({ channel: 'C1', text: 'metrics for train-01' });
    const png = Buffer.from([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...Array.from({ length: 300 }, (_, i) => i % 256),
    ]);
    const res = await client.filesUploadV2({
      channel_id: 'C1',
      thread_ts: parent.ts!,
      file: png,
      filename: 'train-01-gpu-util.png',
      title: 'GPU utilisation, last 1h',
      initial_comment: 'avg 87%, max 100%',
    });
    expect(res.ok).toBe(true);
    expect(fake.callsTo('files.getUploadURLExternal')[0]?.body).toMatchObject({
      filename: 'train-01-gpu-util.png',
      length: String(png.length),
    });
    expect(fake.callsTo('upload')).toHaveLength(1);

    const [file] = [...fake.files.values()];
    expect(file?.bytes?.equals(png)).toBe(true);
    expect(file).toMatchObject({
      completed: true,
      title: 'GPU utilisation, last 1h',
      channel: 'C1',
      initialComment: 'avg 87%, max 100%',
      threadTs: parent.ts,
    });
    const [reply] = fake.thread('C1', parent.ts!);
    expect(reply?.text).toBe('avg 87%, max 100%');
    expect(reply?.files.map((f) => f.id)).toEqual([file?.id]);
    fake.assertNoViolations();
  });

  it('refuses to complete an upload whose bytes never arrived', async () => {
    const { file_id } = await client.files.getUploadURLExternal({ filename: 'a.png', length: 10 });
    expect(
      await slackError(client.files.completeUploadExternal({ files: [{ id: file_id! }], channel_id: 'C1' })),
    ).toBe('file_not_uploaded');
  });

  it('gives apps.connections.open the Socket Mode URL, for the app token only', async () => {
    const res = await clientFor('xapp-test').apps.connections.open();
    expect(res.url).toBe('ws://127.0.0.1:1/link');
    expect(await slackError(client.apps.connections.open())).toBe('invalid_auth');
  });

  it('checks the bearer token', async () => {
    expect(await slackError(clientFor('xoxb-wrong').auth.test())).toBe('invalid_auth');
    expect(
      await slackError(
        new WebClient(undefined, {
          slackApiUrl: fake.apiUrl,
          retryConfig: { retries: 0 },
          logLevel: LogLevel.ERROR,
        }).auth.test(),
      ),
    ).toBe('not_authed');
  });

  it('fails on methods it does not know, and assertNoViolations lists them', async () => {
    expect(await slackError(client.apiCall('reactions.add', { channel: 'C1', name: 'tada' }))).toBe(
      'unknown_method',
    );
    expect(fake.unexpected).toEqual([
      { method: 'POST', path: '/api/reactions.add', reason: 'unknown method' },
    ]);
    expect(() => fake.assertNoViolations()).toThrow(/unexpected POST \/api\/reactions.add: unknown method/);
  });

  it('records a violation for blocks without a text fallback', async () => {
    await client.chat.postMessage({ channel: 'C1', blocks: [section('no fallback')] } as never);
    expect(fake.violations).toEqual([
      { method: 'chat.postMessage', rule: 'blocks sent without a text fallback' },
    ]);
    expect(() => fake.assertNoViolations()).toThrow(/chat.postMessage: blocks sent without a text fallback/);
  });

  it('rejects messages and views beyond Block Kit limits, as Slack does, and records each', async () => {
    const tooMany = Array.from({ length: 51 }, (_, i) => section(`row ${i}`));
    expect(await slackError(client.chat.postMessage({ channel: 'C1', text: 'list', blocks: tooMany }))).toBe(
      'invalid_blocks',
    );
    const long = [
      { type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } },
      section('s'.repeat(3001)),
      { type: 'section', fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' })) },
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'b'.repeat(76) }, action_id: 'a'.repeat(256) },
        ],
      },
    ];
    const posted = await slackError(client.chat.postMessage({ channel: 'C1', text: 'x', blocks: long }));
    expect(posted).toBe('invalid_blocks');
    const modal = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'A title far longer than 24' },
      blocks: Array.from({ length: 101 }, (_, i) => section(`${i}`)),
    };
    expect(await slackError(client.views.open({ trigger_id: fake.issueTriggerId(), view: modal }))).toBe(
      'invalid_arguments',
    );
    const rules = fake.violations.map((v) => `${v.method}: ${v.rule}`);
    expect(rules).toEqual([
      'chat.postMessage: 51 blocks (max 50 in a message)',
      'chat.postMessage: blocks[0].text has 151 characters (max 150)',
      'chat.postMessage: blocks[1].text has 3001 characters (max 3000)',
      'chat.postMessage: blocks[2] has 11 fields (max 10)',
      'chat.postMessage: blocks[3].elements[0].action_id has 256 characters (max 255)',
      'chat.postMessage: blocks[3].elements[0].text has 76 characters (max 75)',
      'views.open: view.101 blocks (max 100 in a view)',
      'views.open: view.title has 26 characters (max 24)',
    ]);
    expect(fake.channelView('C1')).toEqual([]);
  });

  it('decodes JSON bodies as well as form bodies', async () => {
    const res = await request(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel: 'C1', text: 'json', blocks: [section('json body')] }),
    });
    expect(await res.body.json()).toMatchObject({ ok: true, channel: 'C1' });
    expect(fake.channelView('C1')[0]?.blocks).toEqual([section('json body')]);
  });

  it('injects a 429 with Retry-After, which the SDK honours', async () => {
    fake.rateLimit('chat.postMessage', 7);
    const strict = clientFor(TOKEN, { rejectRateLimitedCalls: true });
    const err = await strict.chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebAPIRateLimitedError);
    expect((err as WebAPIRateLimitedError).retryAfter).toBe(7);

    // With retries on, the SDK waits Retry-After (0 s here) and the second attempt lands.
    fake.rateLimit('chat.postMessage', 0);
    const patient = clientFor(TOKEN, { retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 } });
    await patient.chat.postMessage({ channel: 'C1', text: 'after the limit' });
    expect(fake.callsTo('chat.postMessage').map((c) => c.status)).toEqual([429, 429, 200]);
    expect(fake.channelView('C1').map((m) => m.text)).toEqual(['after the limit']);
  });

  it('injects a Slack error for the next call', async () => {
    fake.failWith('chat.postMessage', 'channel_not_found');
    expect(await slackError(client.chat.postMessage({ channel: 'C9', text: 'x' }))).toBe('channel_not_found');
    await client.chat.postMessage({ channel: 'C9', text: 'second try' });
    expect(fake.channelView('C9')).toHaveLength(1);
  });

  it('waits for a call by event, including one made before waiting', async () => {
    const later = fake.waitFor('chat.update', (call) => call.body.text === 'done');
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'queued' });
    const earlier = await fake.waitFor('chat.postMessage');
    expect(earlier.body.text).toBe('queued');
    const since = fake.mark();
    await client.chat.update({ channel: 'C1', ts: posted.ts!, text: 'working' });
    await client.chat.update({ channel: 'C1', ts: posted.ts!, text: 'done' });
    expect((await later).body.text).toBe('done');
    const next = await fake.waitFor('chat.update', undefined, 1000, since);
    expect(next.body.text).toBe('working');
    await expect(fake.waitFor('chat.delete', undefined, 50)).rejects.toThrow(
      /no matching chat.delete call within 50 ms/,
    );
  });
});

describe('conversations and limits as Slack documents them', () => {
  it('refuses posts where the bot cannot post: private, DM, group DM, archived', async () => {
    fake.setConversation('G0SECRET', { kind: 'private' });
    fake.setConversation('D0PEOPLE', { kind: 'im' });
    fake.setConversation('C0MPDM', { kind: 'mpim' });
    fake.setConversation('C0OLD', { kind: 'public', member: true, archived: true });
    const post = (channel: string) => slackError(client.chat.postMessage({ channel, text: 'x' }));
    expect(await post('G0SECRET')).toBe('not_in_channel');
    expect(await post('D0PEOPLE')).toBe('channel_not_found');
    expect(await post('C0MPDM')).toBe('channel_not_found');
    expect(await post('C0OLD')).toBe('is_archived');
    // Invited: the same post lands.
    fake.setConversation('G0SECRET', { kind: 'private', member: true });
    await client.chat.postMessage({ channel: 'G0SECRET', text: 'now in' });
    expect(fake.channelView('G0SECRET').map((m) => m.text)).toEqual(['now in']);
  });

  it('posts in a public channel without membership, but an ephemeral there needs it', async () => {
    fake.setConversation('C0OPEN', { kind: 'public', member: false });
    await client.chat.postMessage({ channel: 'C0OPEN', text: 'chat:write.public' });
    expect(await slackError(client.chat.postEphemeral({ channel: 'C0OPEN', user: 'U0ADA', text: 'x' }))).toBe(
      'not_in_channel',
    );
    expect(fake.ephemerals).toEqual([]);
  });

  it('holds a 429 for Retry-After on one conversation while others go through', async () => {
    fake.rateLimit('chat.postMessage', 30, 1, { channel: 'C0BUSY' });
    const strict = clientFor(TOKEN, { rejectRateLimitedCalls: true });
    for (let i = 0; i < 2; i++) {
      const err = await strict.chat.postMessage({ channel: 'C0BUSY', text: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebAPIRateLimitedError);
      expect((err as WebAPIRateLimitedError).retryAfter).toBeGreaterThan(28);
    }
    await strict.chat.postMessage({ channel: 'C0CALM', text: 'unaffected' });
    expect(fake.channelView('C0CALM')).toHaveLength(1);
    expect(fake.channelView('C0BUSY')).toHaveLength(0);
  });

  it('answers a share of calls 429 or not_in_channel at random, repeatably', async () => {
    fake.chaos({ rateLimited: 0.3, notInChannel: 0.3, seed: 7 });
    const strict = clientFor(TOKEN, { rejectRateLimitedCalls: true });
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      outcomes.push(
        await strict.chat
          .postMessage({ channel: 'C1', text: `m${i}` })
          .then(() => 'ok')
          .catch((e: unknown) =>
            e instanceof WebAPIRateLimitedError ? '429' : String((e as WebAPIPlatformError).data?.error),
          ),
      );
    }
    expect(new Set(outcomes)).toEqual(new Set(['ok', '429', 'not_in_channel']));
    fake.chaos(undefined);
    await strict.chat.postMessage({ channel: 'C1', text: 'calm again' });
  });

  it('opens a view only within 3 s of the trigger', async () => {
    const stale = fake.issueTriggerId(3_100);
    const view = { type: 'modal', title: { type: 'plain_text', text: 'x' }, blocks: [] };
    expect(await slackError(client.views.open({ trigger_id: stale, view: view as never }))).toBe(
      'expired_trigger_id',
    );
    const fresh = fake.issueTriggerId(2_000);
    await client.views.open({ trigger_id: fresh, view: view as never });
  });
});
