import { expect } from 'vitest';
import type { RecordedCall, StoredView } from '../../src/devkit/fake-slack-api.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import type { BotStack } from './bot-stack.js';
import { SIGNING_SECRET } from './bot-stack.js';
import { blockActionsPayload, eventCallbackBody, postSigned } from './slack-driver.js';

// Playing Slack's side of the Home tab for end-to-end tests: the signed app_home_opened event, the
// views.publish calls it causes, and presses of the published view's buttons.

export type Block = {
  type: string;
  text?: { text?: string };
  elements?: Array<Record<string, unknown>>;
} & Record<string, unknown>;

export const blocksOf = (view: StoredView | undefined): Block[] =>
  (view?.view.blocks as Block[] | undefined) ?? [];
export const textOf = (view: StoredView | undefined) => JSON.stringify(blocksOf(view));

/** Slack telling the bot that `user` opened its Home tab, signed as Slack signs it. */
export async function openHome(
  stack: BotStack,
  user = 'U0ADA',
  channel = `D${user.slice(1)}`,
): Promise<void> {
  const response = await postSigned(
    stack.url,
    eventCallbackBody({
      type: 'app_home_opened',
      user,
      channel,
      tab: 'home',
      event_ts: `${(Date.now() / 1000).toFixed(6)}`,
    }),
    { secret: SIGNING_SECRET },
  );
  expect(response.status).toBe(200);
}

/** The next views.publish for `user` (after `since`) whose view `match` accepts. */
export async function published(
  stack: BotStack,
  since: number,
  match: (text: string) => boolean,
  user = 'U0ADA',
  timeoutMs = 15_000,
): Promise<RecordedCall> {
  return stack.slack.waitFor(
    'views.publish',
    (c) =>
      c.body.user_id === user &&
      (c.response as { ok?: boolean }).ok === true &&
      match(JSON.stringify(c.body.view)),
    timeoutMs,
    since,
  );
}

/** Presses a button of the person's Home tab as Slack delivers it: container and view of type home. */
export async function pressOnHome(
  stack: BotStack,
  actionId: string,
  value: string,
  user = 'U0ADA',
): Promise<void> {
  const home = homeOf(stack.slack, user)!;
  const response = await stack.interact(
    blockActionsPayload({
      actionId,
      value,
      userId: user,
      view: { ...home.view, id: home.id, hash: home.hash, type: 'home' },
    }),
  );
  expect(response.status).toBe(200);
}
