import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { blockActionsPayload, type ResponseUrlPost } from '../support/slack-driver.js';

// A list longer than a page: `/gpu ls` shows the first 20 with Next, the button shows the next page
// in place of the list (through the press's response_url), Previous goes back, and `--page N` asks
// for a page directly. The same buttons sit under every paged list.

const CHANNEL = 'C0PAGES';
const COUNT = 45;

interface Button {
  readonly action_id: string;
  readonly value: string;
  readonly text: { readonly text: string };
}

const names = (post: ResponseUrlPost) =>
  [...JSON.stringify(post.body.blocks).matchAll(/\*(page-\d+)\*/g)].map((m) => m[1]);
const pageLine = (post: ResponseUrlPost) => JSON.stringify(post.body.blocks).match(/Page \d+ of \d+/)?.[0];
function buttons(post: ResponseUrlPost): Button[] {
  const blocks = post.body.blocks as Array<{ type: string; elements?: Button[] }>;
  return blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);
}

describe('paged lists', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({ transitionMs: 50 });
    const all = Array.from({ length: COUNT }, (_, i) => `page-${String(i + 1).padStart(2, '0')}`);
    for (let i = 0; i < all.length; i += 15) {
      await Promise.all(
        all.slice(i, i + 15).map((name) => stack.cloud.createInstance({ name, type: 'cpu.16x' })),
      );
    }
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
  });

  async function list(text: string): Promise<ResponseUrlPost> {
    const { responseUrl } = await stack.command(text, { channelId: CHANNEL });
    return stack.responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
  }

  async function press(button: Button, on: ResponseUrlPost): Promise<ResponseUrlPost> {
    const responseUrl = stack.responses.newUrl();
    const response = await stack.interact(
      blockActionsPayload({
        actionId: button.action_id,
        value: button.value,
        channelId: CHANNEL,
        isEphemeral: true,
        message: { ts: '1.000001', blocks: on.body.blocks as unknown[] },
        responseUrl,
      }),
    );
    expect(response.status).toBe(200);
    return stack.responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
  }

  it('shows the first page with Next, and Next shows the next page in place of the list', async () => {
    const first = await list('ls');
    expect(pageLine(first)).toBe('Page 1 of 3');
    expect(names(first)).toEqual(
      Array.from({ length: 20 }, (_, i) => `page-${String(i + 1).padStart(2, '0')}`),
    );
    expect(buttons(first).map((b) => b.text.text)).toEqual(['Next (2) ▶']);

    const second = await press(buttons(first)[0]!, first);
    expect(second.replaceOriginal).toBe(true);
    expect(pageLine(second)).toBe('Page 2 of 3');
    expect(names(second)[0]).toBe('page-21');
    expect(names(second)).toHaveLength(20);
    expect(buttons(second).map((b) => b.text.text)).toEqual(['◀ Previous (1)', 'Next (3) ▶']);

    const back = await press(buttons(second)[0]!, second);
    expect(pageLine(back)).toBe('Page 1 of 3');
    expect(names(back)[0]).toBe('page-01');
  });

  it('takes --page N, and the last page has only Previous', async () => {
    const last = await list('ls --page 3');
    expect(pageLine(last)).toBe('Page 3 of 3');
    expect(names(last)).toEqual(['page-41', 'page-42', 'page-43', 'page-44', 'page-45']);
    expect(buttons(last).map((b) => b.text.text)).toEqual(['◀ Previous (2)']);
  });

  it('says what --page takes when it is not a page number', async () => {
    const { response } = await stack.command('ls --page none', { channelId: CHANNEL });
    expect(String((response.json() as { text: string }).text)).toMatch(/"none" is not a valid page number/);
  });
});
