import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION, EXTEND_ACTION } from '../../src/commands/approvals/render.js';
import { IDLE_ACTIONS } from '../../src/render/idle-alert.js';
import { PAGE_ACTIONS } from '../../src/render/instances.js';
import type { Lease } from '../../src/store/leases.js';
import { askForApproval } from '../e2e/guardrails-kit.js';
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
  POLICY,
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

// The security matrix at the buttons the watchers and lists post: Stop on an idle-GPU alert, Extend on
// a lease reminder, and Next under a paged list. A trick that worked would stop the alert's machine,
// move a lease's stop time, or run a listing as someone who may not.

const BOX = 'idle-box';
let boxId = '';

/** A button on an idle alert about BOX in the watching channel, pressed as `userId`. */
function idlePress(stack: BotStack, userId: string, action = IDLE_ACTIONS.stop, responseUrl?: string) {
  return blockActionsPayload({
    actionId: action,
    value: JSON.stringify({ i: boxId, p: stack.sim.info.projectId, n: BOX }),
    text: 'Stop',
    userId,
    channelId: CHANNEL,
    message: { ts: '1700000000.000200', text: `${BOX} has been idle` },
    ...(responseUrl ? { responseUrl } : {}),
  });
}

/** Next under a list in the channel, pressed as `userId`; the list answers on `responseUrl`. */
function nextPage(userId: string, responseUrl: string) {
  return blockActionsPayload({
    actionId: PAGE_ACTIONS.next,
    value: 'ls --page 2',
    userId,
    channelId: CHANNEL,
    isEphemeral: true,
    message: { ts: '1700000000.000300', text: 'Instances' },
    responseUrl,
  });
}

/** The lease of a costly machine an operator asked for in the approvals channel (which grants admin). */
let lease: Lease;

/** Extend pressed as `userId` in `channelId`, on a reminder of the lease as it stood at `stopAt`. */
function extendPress(userId: string, channelId: string, stopAt = lease.stopAt) {
  return blockActionsPayload({
    actionId: EXTEND_ACTION,
    value: `${lease.id}|${stopAt}`,
    text: 'Extend',
    userId,
    channelId,
    message: { ts: '1700000000.000400', text: 'stops in about 15 minutes' },
  });
}

async function currentLease(stack: BotStack): Promise<Lease> {
  const now = await stack.guardrails.leases.get(lease.id);
  if (!now) throw new Error('the lease is gone');
  return now;
}

const leaseUnchanged = (stack: BotStack, stopAt: () => number) => async () => {
  expect((await currentLease(stack)).stopAt, "the lease's stop time").toBe(stopAt());
};

/** A private answer on a response_url the test serves. */
async function answerOn(stack: BotStack, responseUrl: string): Promise<string> {
  const post = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id));
  return String(post.body.text);
}

/** The ephemeral `userId` was shown after it matched. */
async function ephemeral(stack: BotStack, userId: string, pattern: RegExp): Promise<string> {
  const told = await until(`an ephemeral to ${userId}`, () =>
    stack.slack.ephemerals.find((e) => e.user === userId && pattern.test(String(e.text))),
  );
  return String(told.text);
}

async function boxState(stack: BotStack, state: string): Promise<void> {
  await until(`${BOX} ${state}`, async () =>
    (await stack.cloud.getInstance({ id: boxId })).state === state ? true : undefined,
  );
}

/** The replay was dropped before any listener: the guard says so in the log. */
const droppedAsReplay = (stack: BotStack, since: number) => async () => {
  await until('the replay dropped', () =>
    stack.logLines
      .slice(since)
      .some((line) => line.includes('dropped a button press Slack already delivered'))
      ? true
      : undefined,
  );
};

type Attempt = (stack: BotStack, cell: Cell, baseline: () => Promise<void>) => Promise<Seen>;

const OUTSIDERS = ['guest', 'other-workspace', 'deactivated'] as const;

/** The person-based tricks of a door whose press is answered on its response_url. */
function outsiders(press: (stack: BotStack, person: string, responseUrl: string) => Record<string, unknown>) {
  return Object.fromEntries(
    OUTSIDERS.map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const person = TRICK_PERSON[trick];
        const responseUrl = stack.responses.newUrl();
        expect((await stack.interact(press(stack, person, responseUrl))).status).toBe(200);
        const sentence = await answerOn(stack, responseUrl);
        return { sentence, pattern: TRICK_SENTENCE[trick], actor: person };
      },
    ]),
  ) as Partial<Record<TrickId, Attempt>>;
}

const IDLE_LEASE: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack) => ({
    status: (await sendInteraction(stack, idlePress(stack, ROOT), EDITED_SIGNATURE)).status,
  }),
  ...outsiders((stack, person, url) => idlePress(stack, person, IDLE_ACTIONS.stop, url)),
  'channel-grant': async (stack) => {
    const viewer = freshViewer();
    const stopAt = (await currentLease(stack)).stopAt;
    // Pressed where the viewer is (their own DM with the bot), naming a lease asked for in the
    // approvals channel, whose grant would make them an approver there.
    const dm = stack.slack.dmChannelFor(viewer);
    expect((await stack.interact(extendPress(viewer, dm, stopAt))).status).toBe(200);
    const sentence = await ephemeral(stack, viewer, /or an approver may extend this lease/);
    return { sentence, actor: viewer, checks: [leaseUnchanged(stack, () => stopAt)] };
  },
  'self-approval': async (stack) => {
    const owner = lease.owner;
    const dm = stack.slack.dmChannelFor(owner);
    // The owner's first Extend takes the lease to lease.max_total from its start…
    expect((await stack.interact(extendPress(owner, dm, lease.stopAt))).status).toBe(200);
    const atMax = lease.startedAt + (POLICY.approvals.lease?.maxTotalSeconds ?? 0) * 1000;
    await until('the lease at lease.max_total', async () =>
      (await currentLease(stack)).stopAt === atMax ? true : undefined,
    );
    // …and the next one is theirs to ask an approver for.
    expect((await stack.interact(extendPress(owner, dm, atMax))).status).toBe(200);
    const sentence = await ephemeral(stack, owner, /^Not extended/);
    return { sentence, actor: owner, checks: [leaseUnchanged(stack, () => atMax)] };
  },
  'replay-30s': async (stack, _cell, baseline) => {
    const send = captured(stack, idlePress(stack, nextOperator()));
    expect((await send()).status).toBe(200);
    await boxState(stack, 'stopped');
    await stack.drained();
    // Someone starts it again afterwards; the captured Stop must not stop it a second time.
    await stack.cloud.startInstance({ id: boxId });
    await boxState(stack, 'running');
    await baseline();
    await forgetDedupe(stack);
    const since = stack.logLines.length;
    return { status: (await send()).status, checks: [droppedAsReplay(stack, since)] };
  },
  'replay-5min': async (stack) => ({
    status: (await sendInteraction(stack, idlePress(stack, nextOperator()), STALE)).status,
  }),
  'door-switch': async (stack) => {
    const userId = nextOperator();
    await useUpRateLimit(stack, userId);
    const responseUrl = stack.responses.newUrl();
    expect((await stack.interact(idlePress(stack, userId, IDLE_ACTIONS.stop, responseUrl))).status).toBe(200);
    return { sentence: await answerOn(stack, responseUrl), pattern: RATE_LIMITED };
  },
};

const LIST_PAGE: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack) => ({
    status: (await sendInteraction(stack, nextPage(ROOT, stack.responses.newUrl()), EDITED_SIGNATURE)).status,
  }),
  ...outsiders((_stack, person, url) => nextPage(person, url)),
  'replay-30s': async (stack, _cell, baseline) => {
    const responseUrl = stack.responses.newUrl();
    const send = captured(stack, nextPage(freshViewer(), responseUrl));
    expect((await send()).status).toBe(200);
    expect(await answerOn(stack, responseUrl), 'the first press lists page 2').toBeTruthy();
    await baseline();
    await forgetDedupe(stack);
    const since = stack.logLines.length;
    return { status: (await send()).status, checks: [droppedAsReplay(stack, since)] };
  },
  'replay-5min': async (stack) => ({
    status: (await sendInteraction(stack, nextPage(freshViewer(), stack.responses.newUrl()), STALE)).status,
  }),
  'door-switch': async (stack) => {
    const userId = freshViewer();
    await useUpRateLimit(stack, userId);
    const responseUrl = stack.responses.newUrl();
    expect((await stack.interact(nextPage(userId, responseUrl))).status).toBe(200);
    return { sentence: await answerOn(stack, responseUrl), pattern: RATE_LIMITED };
  },
};

describe('security matrix: idle-alert, lease and list-page buttons', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // A machine above $20/h gets a lease (the kit's policy leases none of the machines it uses).
    const leased = { ...POLICY.approvals.lease!, requiredAbovePerHour: 20 };
    stack = await startSecurityStack({
      policy: { ...POLICY, approvals: { ...POLICY.approvals, lease: leased } },
      captureLogs: true,
    });
    boxId = (await stack.cloud.createInstance({ name: BOX, type: 'rtx-a5000-24gb.1x' })).id;
    await boxState(stack, 'running');
    // An operator asks for a costly machine in the approvals channel; ROOT approves; it runs leased.
    const pending = await askForApproval(stack, 'create leased-1 h100-hgx-80gb.8x', {
      userId: nextOperator(),
      channelId: APPROVE,
      approvalChannel: APPROVE,
    });
    const approve = blockActionsPayload({
      actionId: APPROVE_ACTION,
      value: pending.approvalId,
      text: 'Approve',
      userId: ROOT,
      channelId: APPROVE,
      message: { ts: pending.card.ts, text: pending.card.text ?? '' },
    });
    expect((await stack.interact(approve)).status).toBe(200);
    lease = await until('the lease', () => stack.guardrails.leases.get(pending.approvalId), 20_000);
    expect(lease.channelId).toBe(APPROVE);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  const attempts: Partial<Record<DoorId, Partial<Record<TrickId, Attempt>>>> = {
    'idle-lease': IDLE_LEASE,
    'list-page': LIST_PAGE,
  };
  it.each(cellsOf(['idle-lease', 'list-page']))('$name', async (cell) => {
    const attempt = attempts[cell.door]?.[cell.trick];
    if (!attempt) throw new Error(`no attempt written for ${cell.door} × ${cell.trick}`);
    await runCell(stack, cell, (baseline) => attempt(stack, cell, baseline));
  });
});
