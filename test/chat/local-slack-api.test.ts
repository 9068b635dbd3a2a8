import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebClient } from '@slack/web-api';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalSlackApi } from '../../src/chat/local-slack-api.js';
import { PLAIN_STYLE } from '../../src/chat/render-terminal.js';

// The demo's Slack Web API, driven by the real WebClient the bot uses: what it prints is what a person
// would see in Slack, and what it remembers (buttons, forms, files) is what the terminal chat acts on.

const TOKEN = 'xoxb-local-test';
let api: LocalSlackApi;
let printed: string[];
let unknown: string[];
let viewer: string;
let files: string;
let slack: WebClient;

const approvalBlocks = [
  { type: 'section', text: { type: 'mrkdwn', text: ':raised_hand: *Approval needed* for <@U0ADA>' } },
  {
    type: 'actions',
    block_id: 'decide',
    elements: [
      { type: 'button', action_id: 'approve', value: 'apr-1', text: { type: 'plain_text', text: 'Approve' } },
      { type: 'button', action_id: 'deny', value: 'apr-1', text: { type: 'plain_text', text: 'Deny' } },
    ],
  },
];

beforeEach(async () => {
  printed = [];
  unknown = [];
  viewer = 'U0ADA';
  files = mkdtempSync(join(tmpdir(), 'local-slack-files-'));
  api = await LocalSlackApi.start({
    tokens: [TOKEN],
    teamId: 'T0DEMO',
    botUserId: 'U0GPUOPS',
    botId: 'B0GPUOPS',
    botName: 'gpuops',
    users: [
      { id: 'U0ADA', name: 'ada', realName: 'Augusta Ada King', displayName: 'Ada Lovelace' },
      { id: 'U0BOB', name: 'bob', realName: 'Robert Noyce', displayName: 'Bob Noyce' },
    ],
    usergroups: { S0LEADS: ['U0BOB'] },
    channels: { C0GPUOPS: 'gpu-ops' },
    filesDir: files,
    print: (lines) => printed.push(...lines),
    style: PLAIN_STYLE,
    viewer: () => viewer,
    onUnknownMethod: (method) => unknown.push(method),
  });
  slack = new WebClient(TOKEN, { slackApiUrl: api.apiUrl, retryConfig: { retries: 0 } });
});
afterEach(async () => {
  await api.close();
  rmSync(files, { recursive: true, force: true });
});

const shown = () => printed.join('\n');

describe('local Slack Web API', () => {
  it('prints posted and edited messages with their number, and numbers their buttons', async () => {
    const posted = await slack.chat.postMessage({
      channel: 'C0GPUOPS',
      text: 'Queued: /gpu ls',
      blocks: approvalBlocks,
    });
    expect(shown()).toBe(
      ['#1 gpuops in #gpu-ops', '  ✋ Approval needed for @ada', '  [1] Approve  [2] Deny', ''].join('\n'),
    );
    expect(api.inProgress().map((m) => m.number)).toEqual([1]);
    expect(api.buttonLabelled('approve')).toMatchObject({
      number: 1,
      actionId: 'approve',
      value: 'apr-1',
      place: { kind: 'message', channel: 'C0GPUOPS', ts: posted.ts },
    });

    printed = [];
    await slack.chat.update({ channel: 'C0GPUOPS', ts: posted.ts!, text: 'Done: /gpu ls', blocks: [] });
    expect(printed[0]).toBe('#1 edited · gpuops in #gpu-ops');
    expect(printed).toContain('  Done: /gpu ls');
    // The edit took the buttons away: pressing [1] now would press nothing.
    expect(api.stillThere(api.button(1)!)).toBe(false);
    expect(api.buttonLabelled('Approve')).toBeUndefined();
    expect(api.inProgress()).toEqual([]);
  });

  it('says who may see an answer and where: ephemeral, DM, thread reply', async () => {
    await slack.chat.postEphemeral({ channel: 'C0GPUOPS', user: 'U0BOB', text: 'for bob' });
    expect(printed[0]).toBe('only visible to @bob · gpuops in #gpu-ops');
    viewer = 'U0BOB';
    await slack.chat.postEphemeral({ channel: 'C0GPUOPS', user: 'U0BOB', text: 'again' });
    expect(printed).toContain('only visible to you (@bob) · gpuops in #gpu-ops');

    const dm = await slack.conversations.open({ users: 'U0ADA' });
    await slack.chat.postMessage({ channel: dm.channel!.id!, text: 'your kubeconfig' });
    expect(printed).toContain('#1 gpuops in a DM with @ada');

    const parent = await slack.chat.postMessage({ channel: 'C0GPUOPS', text: 'parent' });
    await slack.chat.postMessage({ channel: 'C0GPUOPS', thread_ts: parent.ts!, text: 'child' });
    expect(printed).toContain('#3 gpuops in #gpu-ops, reply to #2');
  });

  it('serves response URLs: replacing or deleting the message a button was on, or answering privately', async () => {
    const posted = await slack.chat.postMessage({
      channel: 'C0GPUOPS',
      text: 'card',
      blocks: approvalBlocks,
    });
    const place = { kind: 'message', channel: 'C0GPUOPS', ts: posted.ts! } as const;
    const post = async (url: string, body: Record<string, unknown>) => {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    };
    printed = [];
    await post(api.responseUrl({ userId: 'U0BOB', channelId: 'C0GPUOPS', place }), {
      replace_original: true,
      text: 'Approved by <@U0BOB>',
    });
    expect(printed.slice(0, 2)).toEqual(['#1 edited · gpuops in #gpu-ops', '  Approved by @bob']);

    printed = [];
    await post(api.responseUrl({ userId: 'U0ADA', channelId: 'C0GPUOPS' }), {
      response_type: 'ephemeral',
      text: 'Instances (0)',
    });
    expect(printed[0]).toBe('only visible to you (@ada) · gpuops in #gpu-ops');

    printed = [];
    await post(api.responseUrl({ userId: 'U0BOB', channelId: 'C0GPUOPS', place }), { delete_original: true });
    expect(printed[0]).toBe('#1 deleted');
    expect(api.message('C0GPUOPS', posted.ts!)?.deleted).toBe(true);
  });

  it('opens and updates forms for the person whose trigger it was', async () => {
    const trigger = api.issueTrigger('U0ADA');
    const view = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'Add an SSH key' },
      submit: { type: 'plain_text' as const, text: 'Add key' },
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Loading…' } }],
    };
    const opened = await slack.views.open({ trigger_id: trigger, view });
    expect(printed.slice(0, 3)).toEqual([
      'form opened for you (@ada)',
      '▣ Add an SSH key  (Add key · Cancel)',
      '│ Loading…',
    ]);
    expect(api.topView('U0ADA')?.id).toBe(opened.view!.id);
    expect(api.topView('U0BOB')).toBeUndefined();
    printed = [];
    await slack.views.update({ view_id: opened.view!.id!, view: { ...view, blocks: [] } });
    expect(printed[0]).toBe('form updated for you (@ada)');
    api.closeView(opened.view!.id!);
    expect(api.topView('U0ADA')).toBeUndefined();
  });

  it('saves uploaded files and prints where, in the thread they were shared in', async () => {
    const parent = await slack.chat.postMessage({ channel: 'C0GPUOPS', text: 'Working: /gpu metrics' });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await slack.files.uploadV2({
      channel_id: 'C0GPUOPS',
      thread_ts: parent.ts!,
      file: png,
      filename: '../metrics-train-1.png',
      title: 'train-1 GPU utilisation',
      initial_comment: 'summary',
    });
    const path = join(files, 'metrics-train-1.png');
    expect(printed).toContain('#2 gpuops in #gpu-ops, reply to #1');
    expect(printed).toContain(`  📎 train-1 GPU utilisation saved to ${path}`);
    expect(readFileSync(path)).toEqual(png);
    expect(api.savedFiles().map((f) => f.path)).toEqual([path]);
  });

  it('answers the lookups the bot makes, and refuses a wrong token or an unknown method', async () => {
    expect(await slack.auth.test()).toMatchObject({ ok: true, user_id: 'U0GPUOPS', bot_id: 'B0GPUOPS' });
    const ada = await slack.users.info({ user: 'U0ADA' });
    expect(ada.user?.profile).toMatchObject({ display_name: 'Ada Lovelace', real_name: 'Augusta Ada King' });
    expect((await slack.usergroups.users.list({ usergroup: 'S0LEADS' })).users).toEqual(['U0BOB']);
    await expect(slack.apiCall('reactions.add', { channel: 'C0GPUOPS' })).rejects.toMatchObject({
      data: { error: 'unknown_method' },
    });
    expect(unknown).toEqual(['reactions.add']);
    const stranger = new WebClient('xoxb-wrong', { slackApiUrl: api.apiUrl, retryConfig: { retries: 0 } });
    await expect(stranger.auth.test()).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
  });
});
