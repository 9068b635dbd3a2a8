import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_ACTIONS } from '../../src/render/instances.js';
import { createFormSubmission } from '../e2e/guardrails-kit.js';
import { type BotStack, SIGNING_SECRET } from '../support/bot-stack.js';
import {
  blockActionsPayload,
  postSigned,
  randomTriggerId,
  slashCommandBody,
} from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { type Cell, cellsOf, type TrickId } from './matrix.js';
import {
  CHANNEL,
  captured,
  EDITED_SIGNATURE,
  forgetDedupe,
  nextOperator,
  RATE_LIMIT,
  RATE_LIMITED,
  ROOT,
  runCell,
  type Seen,
  STALE,
  sendCommand,
  sendInteraction,
  startSecurityStack,
  TRICK_PERSON,
  TRICK_SENTENCE,
  useUpRateLimit,
} from './security-kit.js';

// The security matrix at the two doors a person types into: `/gpu` and a submitted form. Each cell
// creates a cheap machine if the trick worked; the cloud must be unchanged after it.

const TYPE = 'rtx-a5000-24gb.1x';

/** The text a slash command's acknowledgement showed. */
const ackText = (raw: string) => (raw ? String((JSON.parse(raw) as { text?: string }).text ?? '') : '');

/** The sentence a refused form shows: the view replaced with it, or a field error. */
function formAnswer(raw: string): string {
  if (!raw) return '';
  const body = JSON.parse(raw) as {
    response_action?: string;
    view?: { blocks?: Array<{ text?: { text?: string } }> };
    errors?: Record<string, string>;
  };
  if (body.response_action === 'errors') return Object.values(body.errors ?? {}).join(' ');
  return String(body.view?.blocks?.[0]?.text?.text ?? '');
}

async function running(stack: BotStack, name: string): Promise<void> {
  await until(`${name} running`, async () =>
    (await stack.cloud.listInstances()).find((i) => i.name === name && i.state === 'running'),
  );
}

/** Next-page presses under a list, until the rate limit refuses one. */
async function useUpWithPages(stack: BotStack, user: string): Promise<void> {
  for (let i = 0; i <= RATE_LIMIT; i++) {
    await stack.interact(
      blockActionsPayload({
        actionId: PAGE_ACTIONS.next,
        value: 'ls --page 2',
        userId: user,
        channelId: CHANNEL,
        message: { ts: '1700000000.000100', text: 'Instances' },
        responseUrl: stack.responses.newUrl(),
      }),
    );
  }
}

type Attempt = (stack: BotStack, cell: Cell, baseline: () => Promise<void>) => Promise<Seen>;

const SLASH: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack) => ({
    status: (await sendCommand(stack, `create as-root-1 ${TYPE}`, { userId: ROOT }, EDITED_SIGNATURE)).status,
  }),
  ...Object.fromEntries(
    (['guest', 'other-workspace', 'deactivated'] as const).map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const person = TRICK_PERSON[trick];
        const response = await sendCommand(stack, `create ${trick}-slash ${TYPE}`, { userId: person });
        return { sentence: ackText(response.text), pattern: TRICK_SENTENCE[trick], actor: person };
      },
    ]),
  ),
  'replay-30s': async (stack, _cell, baseline) => {
    const userId = nextOperator();
    const body = slashCommandBody({
      text: `create replay-slash ${TYPE}`,
      userId,
      triggerId: randomTriggerId(),
    });
    const timestamp = Math.floor(Date.now() / 1000) - 40;
    expect((await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp })).status).toBe(200);
    await running(stack, 'replay-slash');
    await baseline();
    await forgetDedupe(stack);
    return { status: (await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp })).status };
  },
  'replay-5min': async (stack) => ({
    status: (await sendCommand(stack, `create stale-slash ${TYPE}`, { userId: nextOperator() }, STALE))
      .status,
  }),
  'door-switch': async (stack) => {
    const userId = nextOperator();
    await useUpWithPages(stack, userId);
    const response = await sendCommand(stack, `create switch-slash ${TYPE}`, { userId });
    return { sentence: ackText(response.text), pattern: RATE_LIMITED };
  },
};

/** A create form opened in the channel (its project set, as the listener sets it) and submitted by `userId`. */
const form = (stack: BotStack, userId: string, name: string) =>
  createFormSubmission(
    userId,
    { v: 1, form: 'create', channelId: CHANNEL, projectId: stack.sim.info.projectId },
    name,
    TYPE,
  );

const FORM: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack) => ({
    status: (await sendInteraction(stack, form(stack, ROOT, 'as-root-2'), EDITED_SIGNATURE)).status,
  }),
  ...Object.fromEntries(
    (['guest', 'other-workspace', 'deactivated'] as const).map((trick) => [
      trick,
      async (stack: BotStack): Promise<Seen> => {
        const person = TRICK_PERSON[trick];
        const response = await stack.interact(form(stack, person, `${trick}-form`));
        return { sentence: formAnswer(response.text), pattern: TRICK_SENTENCE[trick], actor: person };
      },
    ]),
  ),
  'replay-30s': async (stack, _cell, baseline) => {
    const send = captured(stack, form(stack, nextOperator(), 'replay-form'));
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.text, 'the first submission is taken').toBe('');
    await running(stack, 'replay-form');
    await baseline();
    await forgetDedupe(stack);
    return { status: (await send()).status };
  },
  'replay-5min': async (stack) => ({
    status: (await sendInteraction(stack, form(stack, nextOperator(), 'stale-form'), STALE)).status,
  }),
  'door-switch': async (stack) => {
    const userId = nextOperator();
    await useUpRateLimit(stack, userId);
    const response = await stack.interact(form(stack, userId, 'switch-form'));
    return { sentence: formAnswer(response.text), pattern: RATE_LIMITED };
  },
};

describe('security matrix: slash command and form submission', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startSecurityStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const attempts = { slash: SLASH, form: FORM } as const;
  it.each(cellsOf(['slash', 'form']))('$name', async (cell) => {
    const attempt = attempts[cell.door as 'slash' | 'form'][cell.trick];
    if (!attempt) throw new Error(`no attempt written for ${cell.door} × ${cell.trick}`);
    await runCell(stack, cell, (baseline) => attempt(stack, cell, baseline));
  });
});
