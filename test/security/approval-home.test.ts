import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import { homeActionId, homeButtonValue } from '../../src/commands/home/home-buttons.js';
import type { RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { askForApproval, type Pending, stored } from '../e2e/guardrails-kit.js';
import type { BotStack } from '../support/bot-stack.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { type Cell, cellsOf, type DoorId, type TrickId } from './matrix.js';
import {
  APPROVE,
  CHANNEL,
  captured,
  EDITED_SIGNATURE,
  forgetDedupe,
  freshViewer,
  nextOperator,
  OPS,
  RATE_LIMITED,
  ROOT,
  runCell,
  type Seen,
  STALE,
  sendInteraction,
  startSecurityStack,
  TRICK_PERSON,
  TRICK_SENTENCE,
  useUpRateLimit,
} from './security-kit.js';

// The security matrix at the approval card's buttons and the Home tab's: a costly create waits for an
// admin (ROOT, or anyone clicking in the approvals channel, which grants admin); the Home tab's Stop
// runs `/gpu stop` for the channel its button names. A trick that worked would approve a machine into
// existence or stop one.

const BIG = 'h100-hgx-80gb.8x';
let asked = 0;

/** A costly create by `requester` (an operator unless named), waiting on its card in the approvals channel. */
function pending(stack: BotStack, requester = nextOperator()): Promise<Pending> {
  return askForApproval(stack, `create big-${++asked} ${BIG}`, {
    userId: requester,
    approvalChannel: APPROVE,
  });
}

/** Approve pressed on the card (in the approvals channel) or on the Home tab, as `userId`. */
function approvePress(pendingRequest: Pending, userId: string, where: 'card' | 'home', responseUrl?: string) {
  return blockActionsPayload({
    actionId: APPROVE_ACTION,
    value: pendingRequest.approvalId,
    text: 'Approve',
    userId,
    ...(where === 'home'
      ? { view: { id: `VHOME${userId}`, type: 'home', hash: 'h' } }
      : {
          channelId: pendingRequest.cardChannel,
          message: { ts: pendingRequest.card.ts, text: pendingRequest.card.text ?? '', blocks: [] },
          ...(responseUrl ? { responseUrl } : {}),
        }),
  });
}

const stillPending = (stack: BotStack, p: Pending) => async () => {
  expect((await stored(stack, p.approvalId)).state, 'the request still waits').toBe('pending');
};

/** The Home tab `userId` was shown after `since`, with the section whose text matches. */
async function homeNotice(stack: BotStack, since: number, userId: string, pattern: RegExp): Promise<string> {
  const texts = (view: unknown) =>
    ((view as { blocks?: Array<{ text?: { text?: string } }> }).blocks ?? []).map((b) => b.text?.text ?? '');
  const call: RecordedCall = await stack.slack.waitFor(
    'views.publish',
    (c) => c.body.user_id === userId && texts(c.body.view).some((t) => pattern.test(t)),
    10_000,
    since,
  );
  return String(texts(call.body.view).find((t) => pattern.test(t)));
}

/** A private answer on a response_url the test serves. */
async function answerOn(stack: BotStack, responseUrl: string): Promise<string> {
  const post = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id));
  return String(post.body.text);
}

type Attempt = (stack: BotStack, cell: Cell, baseline: () => Promise<void>) => Promise<Seen>;

const OUTSIDERS = ['guest', 'other-workspace', 'deactivated'] as const;

const APPROVAL: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack, _cell, baseline) => {
    const p = await pending(stack);
    await baseline();
    const response = await sendInteraction(stack, approvePress(p, ROOT, 'card'), EDITED_SIGNATURE);
    return { status: response.status, checks: [stillPending(stack, p)] };
  },
  ...Object.fromEntries(
    OUTSIDERS.map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const p = await pending(stack);
        const person = TRICK_PERSON[trick];
        const responseUrl = stack.responses.newUrl();
        expect((await stack.interact(approvePress(p, person, 'card', responseUrl))).status).toBe(200);
        const sentence = await answerOn(stack, responseUrl);
        return { sentence, pattern: TRICK_SENTENCE[trick], actor: person, checks: [stillPending(stack, p)] };
      },
    ]),
  ),
  'channel-grant': async (stack) => {
    const p = await pending(stack);
    const viewer = freshViewer();
    const since = stack.slack.mark();
    expect((await stack.interact(approvePress(p, viewer, 'home'))).status).toBe(200);
    const sentence = await homeNotice(stack, since, viewer, /Only approvers may decide/);
    return { sentence, actor: viewer, checks: [stillPending(stack, p)] };
  },
  'self-approval': async (stack) => {
    const p = await pending(stack, ROOT);
    expect((await stack.interact(approvePress(p, ROOT, 'card'))).status).toBe(200);
    const told = await until('the refusal', () =>
      stack.slack.ephemerals.find((e) => e.user === ROOT && /asked for this yourself/.test(String(e.text))),
    );
    return { sentence: String(told.text), actor: ROOT, checks: [stillPending(stack, p)] };
  },
  'replay-30s': async (stack, _cell, baseline) => {
    const p = await pending(stack);
    const send = captured(stack, approvePress(p, ROOT, 'card'));
    expect((await send()).status).toBe(200);
    await until('the approved machine', async () =>
      (await stack.cloud.listInstances()).find((i) => i.name === `big-${asked}` && i.state === 'running'),
    );
    await baseline();
    await forgetDedupe(stack);
    return { status: (await send()).status };
  },
  'replay-5min': async (stack, _cell, baseline) => {
    const p = await pending(stack);
    await baseline();
    const response = await sendInteraction(stack, approvePress(p, ROOT, 'card'), STALE);
    return { status: response.status, checks: [stillPending(stack, p)] };
  },
};

const HOME_BOX = 'home-box';
let homeBoxId = '';

/** Stop pressed on `userId`'s Home tab, the button naming `channel`. */
function homeStop(stack: BotStack, userId: string, channel = CHANNEL) {
  return blockActionsPayload({
    actionId: homeActionId('stop'),
    value: homeButtonValue({ t: `stop ${HOME_BOX}`, c: channel, p: stack.sim.info.projectId }),
    userId,
    view: { id: `VHOME${userId}`, type: 'home', hash: 'h' },
  });
}

async function boxState(stack: BotStack, state: string): Promise<void> {
  await until(`${HOME_BOX} ${state}`, async () =>
    (await stack.cloud.getInstance({ id: homeBoxId })).state === state ? true : undefined,
  );
}

const HOME: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack) => ({
    status: (await sendInteraction(stack, homeStop(stack, ROOT), EDITED_SIGNATURE)).status,
  }),
  ...Object.fromEntries(
    OUTSIDERS.map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const person = TRICK_PERSON[trick];
        const since = stack.slack.mark();
        expect((await stack.interact(homeStop(stack, person))).status).toBe(200);
        const sentence = await homeNotice(stack, since, person, TRICK_SENTENCE[trick]);
        return { sentence, actor: person };
      },
    ]),
  ),
  'channel-grant': async (stack) => {
    const viewer = freshViewer();
    const since = stack.slack.mark();
    expect((await stack.interact(homeStop(stack, viewer, OPS))).status).toBe(200);
    const sentence = await homeNotice(stack, since, viewer, /needs the \*operator\* role/);
    return { sentence, actor: viewer };
  },
  'self-approval': async (stack) => {
    const p = await pending(stack, ROOT);
    const since = stack.slack.mark();
    expect((await stack.interact(approvePress(p, ROOT, 'home'))).status).toBe(200);
    const sentence = await homeNotice(stack, since, ROOT, /asked for this yourself/);
    return { sentence, actor: ROOT, checks: [stillPending(stack, p)] };
  },
  'replay-30s': async (stack, _cell, baseline) => {
    const send = captured(stack, homeStop(stack, nextOperator()));
    expect((await send()).status).toBe(200);
    await boxState(stack, 'stopped');
    await stack.drained();
    // Someone starts it again afterwards; the captured press must not stop it a second time.
    await stack.cloud.startInstance({ id: homeBoxId });
    await boxState(stack, 'running');
    await baseline();
    await forgetDedupe(stack);
    return { status: (await send()).status };
  },
  'replay-5min': async (stack) => ({
    status: (await sendInteraction(stack, homeStop(stack, nextOperator()), STALE)).status,
  }),
  'door-switch': async (stack) => {
    const userId = nextOperator();
    await useUpRateLimit(stack, userId);
    const since = stack.slack.mark();
    expect((await stack.interact(homeStop(stack, userId))).status).toBe(200);
    return { sentence: await homeNotice(stack, since, userId, RATE_LIMITED) };
  },
};

describe('security matrix: approval card and Home tab buttons', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startSecurityStack();
    homeBoxId = (await stack.cloud.createInstance({ name: HOME_BOX, type: 'rtx-a5000-24gb.1x' })).id;
    await boxState(stack, 'running');
  });
  afterAll(async () => {
    await stack?.close();
  });

  const attempts: Partial<Record<DoorId, Partial<Record<TrickId, Attempt>>>> = {
    approval: APPROVAL,
    home: HOME,
  };
  it.each(cellsOf(['approval', 'home']))('$name', async (cell) => {
    const attempt = attempts[cell.door]?.[cell.trick];
    if (!attempt) throw new Error(`no attempt written for ${cell.door} × ${cell.trick}`);
    await runCell(stack, cell, (baseline) => attempt(stack, cell, baseline));
  });
});
