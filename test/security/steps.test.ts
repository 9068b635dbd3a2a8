import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import { stepFunction } from '../../src/commands/workflow/step-manifest.js';
import type { FunctionDefinition, FunctionEnd } from '../../src/devkit/fake-slack-api.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, SIGNING_SECRET } from '../support/bot-stack.js';
import { blockActionsPayload, eventCallbackBody, postSigned } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { runStep } from '../support/workflow-steps.js';
import { type Cell, cellsOf, type DoorId, type TrickId } from './matrix.js';
import {
  APPROVE,
  CHANNEL,
  forgetDedupe,
  freshViewer,
  nextOperator,
  OPS,
  RATE_LIMITED,
  ROOT,
  runCell,
  type Seen,
  settledCloud,
  startSecurityStack,
  TRICK_PERSON,
  TRICK_SENTENCE,
  useUpRateLimit,
} from './security-kit.js';

// The security matrix at each Workflow Builder step. The fake Slack fills the step's person (its
// user_context) with whoever used the workflow, as Slack does; everything else in `inputs` is what a
// workflow's builder typed. A trick that worked would create, start or stop a machine, or add a Slurm
// user.

const STEP_IDS = [
  'create_instance',
  'start_instance',
  'stop_instance',
  'add_slurm_user',
  'get_capacity',
] as const;
type StepId = (typeof STEP_IDS)[number];
const doorOf = (step: StepId): DoorId => `step:${step}` as DoorId;

let made = 0;
/** What the builder typed for each step: something that changes the cloud when it runs. */
function inputsOf(step: StepId): Record<string, unknown> {
  switch (step) {
    case 'create_instance':
      return { name: `step-box-${++made}`, instance_type: 'rtx-a5000-24gb.1x' };
    case 'start_instance':
      return { instance: 'step-off' };
    case 'stop_instance':
      return { instance: 'step-on' };
    case 'add_slurm_user':
      return { cluster: 'slurm-1', public_key: ed25519PublicKey(`k${++made}@laptop`), sudo: true };
    case 'get_capacity':
      return {};
  }
}

const PREFIX = /^gpuops refused this step: /;

async function failure(run: { ended(): Promise<FunctionEnd> }): Promise<string> {
  const end = await run.ended();
  expect(end.state, JSON.stringify(end)).toBe('failed');
  return String((end as { error: string }).error).replace(PREFIX, '');
}

/** The step's signed function_executed delivery, kept to send again; `ageSeconds` old. */
function capturedStep(
  stack: BotStack,
  step: StepId,
  person: string,
  inputs: Record<string, unknown>,
  ageSeconds: number,
) {
  const definition = stepFunction(step) as unknown as FunctionDefinition;
  const { event } = stack.slack.functionRuns.start(step, definition, { ...inputs }, person);
  const body = eventCallbackBody(event);
  const timestamp = Math.floor(Date.now() / 1000) - ageSeconds;
  return {
    send: () => postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp }),
  };
}

async function settle(stack: BotStack, name: string, state: string): Promise<void> {
  const box = (await stack.cloud.listInstances()).find((i) => i.name === name)!;
  if (box.state !== state) {
    await (state === 'running'
      ? stack.cloud.startInstance({ id: box.id })
      : stack.cloud.stopInstance({ id: box.id }));
  }
  await until(`${name} ${state}`, async () =>
    (await stack.cloud.listInstances()).find((i) => i.name === name && i.state === state),
  );
}

type Attempt = (stack: BotStack, step: StepId, baseline: () => Promise<void>) => Promise<Seen>;

const ATTEMPTS: Partial<Record<TrickId, Attempt>> = {
  impersonate: async (stack, step) => {
    const viewer = freshViewer();
    const typed = { user_id: ROOT, user_context: { id: ROOT, secret: 'typed' } };
    const run = await runStep(stack, viewer, step, { ...typed, ...inputsOf(step) });
    return {
      sentence: await failure(run),
      pattern: /needs the operator role, and you have viewer/,
      actor: viewer,
    };
  },
  ...Object.fromEntries(
    (['guest', 'other-workspace', 'deactivated'] as const).map((trick) => [
      trick,
      async (stack: BotStack, step: StepId): Promise<Seen> => {
        const person = TRICK_PERSON[trick];
        const run = await runStep(stack, person, step, inputsOf(step));
        return { sentence: await failure(run), pattern: TRICK_SENTENCE[trick], actor: person };
      },
    ]),
  ),
  'channel-grant': async (stack, step) => {
    const viewer = freshViewer();
    const run = await runStep(stack, viewer, step, { channel_id: OPS, ...inputsOf(step) });
    return {
      sentence: await failure(run),
      pattern: /needs the operator role, and you have viewer/,
      actor: viewer,
    };
  },
  'self-approval': async (stack, step) => {
    const since = stack.slack.mark();
    const run = await runStep(stack, ROOT, step, {
      channel_id: CHANNEL,
      name: 'root-big',
      instance_type: 'h100-hgx-80gb.8x',
    });
    expect(run.response.status).toBe(200);
    const posted = await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === APPROVE,
      5_000,
      since,
    );
    const card = stack.slack.message(APPROVE, String((posted.response as { ts: string }).ts))!;
    const approve = (
      card.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value?: string }> }>
    )
      .flatMap((b) => b.elements ?? [])
      .find((e) => e.action_id === APPROVE_ACTION)!;
    await stack.interact(
      blockActionsPayload({
        actionId: APPROVE_ACTION,
        value: approve.value!,
        userId: ROOT,
        channelId: APPROVE,
        message: { ts: card.ts, text: card.text ?? '' },
      }),
    );
    const told = await until('the refusal', () =>
      stack.slack.ephemerals.find((e) => e.user === ROOT && /asked for this yourself/.test(String(e.text))),
    );
    return {
      sentence: String(told.text),
      actor: ROOT,
      checks: [async () => expect(stack.slack.functionRuns.runs.get(run.executionId)!.state).toBe('running')],
    };
  },
  'replay-30s': async (stack, step, baseline) => {
    const user = nextOperator();
    const captured = capturedStep(stack, step, user, inputsOf(step), 40);
    expect((await captured.send()).status).toBe(200);
    // Taken (a start of a machine whose price is not known yet waits for an approver instead).
    await until('the first delivery taken', async () =>
      (await stack.guardrails.audit.latest(50)).find((e) => e.actor === user && e.event === 'request'),
    );
    await stack.drained();
    // Put back what the first run changed, so a second run would show.
    if (step === 'start_instance') await settle(stack, 'step-off', 'stopped');
    if (step === 'stop_instance') await settle(stack, 'step-on', 'running');
    await baseline();
    await forgetDedupe(stack);
    return { status: (await captured.send()).status };
  },
  'replay-5min': async (stack, step) => {
    const captured = capturedStep(stack, step, nextOperator(), inputsOf(step), 6 * 60);
    return { status: (await captured.send()).status };
  },
  'door-switch': async (stack, step) => {
    const user = nextOperator();
    await useUpRateLimit(stack, user);
    const run = await runStep(stack, user, step, inputsOf(step));
    return { sentence: await failure(run), pattern: RATE_LIMITED };
  },
};

describe('security matrix: workflow steps', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startSecurityStack();
    await stack.cloud.createInstance({ name: 'step-on', type: 'rtx-a5000-24gb.1x' });
    await stack.cloud.createInstance({ name: 'step-off', type: 'rtx-a5000-24gb.1x' });
    await settledCloud(stack);
    await settle(stack, 'step-off', 'stopped');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each(cellsOf(STEP_IDS.map(doorOf)))('$name', async (cell: Cell) => {
    const step = cell.door.slice('step:'.length) as StepId;
    const attempt = ATTEMPTS[cell.trick];
    if (!attempt) throw new Error(`no attempt written for ${cell.door} × ${cell.trick}`);
    await runCell(stack, cell, (baseline) => attempt(stack, step, baseline));
  });
});
