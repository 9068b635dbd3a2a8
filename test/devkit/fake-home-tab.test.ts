import { LogLevel, type WebAPIPlatformError, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { PNG_SIGNATURE } from '../support/png.js';

// views.publish in the fake, as Slack documents it, driven by the real WebClient over HTTP: one Home
// view per person, replaced in place; a stale hash refused; a slack_file image only once uploaded.

let fake: FakeSlackApi;
let client: WebClient;

async function slackError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as WebAPIPlatformError).data?.error ?? (err as Error).message);
  }
  throw new Error('expected the call to fail');
}

const home = (text: string, extra: Record<string, unknown>[] = []) => ({
  type: 'home' as const,
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }, ...extra] as never[],
});

beforeEach(async () => {
  fake = await FakeSlackApi.start({});
  client = new WebClient('xoxb-test', {
    slackApiUrl: fake.apiUrl,
    logLevel: LogLevel.ERROR,
    retryConfig: { retries: 0 },
  });
});
afterEach(async () => {
  await fake.close();
});

describe('views.publish in the fake Slack', () => {
  it('keeps one Home view per person, replaced by each publish, and refuses a stale hash', async () => {
    const first = await client.views.publish({ user_id: 'U0ADA', view: home('one') });
    const second = await client.views.publish({ user_id: 'U0ADA', view: home('two') });
    expect(second.view?.id).toBe(first.view?.id);
    expect(second.view?.hash).not.toBe(first.view?.hash);
    expect(JSON.stringify(homeOf(fake, 'U0ADA')?.view.blocks)).toContain('two');
    expect(homeOf(fake, 'U0BOB')).toBeUndefined();
    expect(
      await slackError(
        client.views.publish({ user_id: 'U0ADA', view: home('three'), hash: first.view!.hash! }),
      ),
    ).toBe('hash_conflict');
    expect(JSON.stringify(homeOf(fake, 'U0ADA')?.view.blocks)).toContain('two');
  });

  it('refuses a modal, more than 100 blocks, a repeated action_id and an image of a file never uploaded', async () => {
    expect(
      await slackError(
        client.views.publish({
          user_id: 'U0ADA',
          view: { type: 'modal', title: { type: 'plain_text', text: 'x' }, blocks: [] } as never,
        }),
      ),
    ).toBe('invalid_arguments');
    const many = Array.from({ length: 100 }, () => ({ type: 'divider' }));
    expect(await slackError(client.views.publish({ user_id: 'U0ADA', view: home('x', many) }))).toBe(
      'invalid_arguments',
    );
    // Two buttons of one block with the same action_id: Slack cannot tell which was pressed.
    const twice = {
      type: 'actions',
      elements: ['a', 'b'].map((v) => ({
        type: 'button',
        action_id: 'same',
        value: v,
        text: { type: 'plain_text', text: v },
      })),
    };
    expect(await slackError(client.views.publish({ user_id: 'U0ADA', view: home('x', [twice]) }))).toBe(
      'invalid_arguments',
    );
    const image = { type: 'image', slack_file: { id: 'F404' }, alt_text: 'chart' };
    expect(await slackError(client.views.publish({ user_id: 'U0ADA', view: home('x', [image]) }))).toBe(
      'invalid_arguments',
    );
    expect(homeOf(fake, 'U0ADA')).toBeUndefined();
    // Uploaded (to no channel: private to the bot), the same file may be shown.
    const png = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(16)]);
    const uploaded = await client.files.uploadV2({ file: png, filename: 'week.png' });
    const id = (uploaded as unknown as { files: Array<{ files: Array<{ id: string }> }> }).files[0]!.files[0]!
      .id;
    const shown = { type: 'image', slack_file: { id }, alt_text: 'chart' };
    const ok = await client.views.publish({ user_id: 'U0ADA', view: home('x', [shown]) });
    expect(ok.ok).toBe(true);
    // Deleted, it can be shown no more.
    await client.files.delete({ file: id });
    expect(await slackError(client.files.delete({ file: id }))).toBe('file_not_found');
    expect(await slackError(client.views.publish({ user_id: 'U0ADA', view: home('y', [shown]) }))).toBe(
      'invalid_arguments',
    );
  });

  it('answers not_enabled when the app has no Home tab', async () => {
    const off = await FakeSlackApi.start({ homeTabEnabled: false });
    const offClient = new WebClient('xoxb-test', { slackApiUrl: off.apiUrl, retryConfig: { retries: 0 } });
    expect(await slackError(offClient.views.publish({ user_id: 'U0ADA', view: home('x') }))).toBe(
      'not_enabled',
    );
    await off.close();
  });
});
