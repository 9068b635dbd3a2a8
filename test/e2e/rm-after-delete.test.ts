import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { answeredPrivately, settled } from '../support/slash-requests.js';
import { stepResult } from '../support/workflow-steps.js';
import { askForApproval, click, messageWhen, REQUEST_CHANNEL, until } from './guardrails-kit.js';

// A machine gpuops deleted a moment ago is still in the cached listing the names of requests are
// checked against (it is refreshed every few minutes). A second `/gpu rm` of it, or a start, must be
// answered at once, to the requester alone, as a machine that is not there: never sent to an approver
// who would approve deleting nothing (the model test's finding, seed 1447480429).

const APPROVALS = 'C0APPROVE';
const TYPE = 'h100-hgx-80gb.1x';
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB] }
approvals:
  always: [rm]
  threshold_per_hour: 1000000
  unknown_price: allow
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1h
`);
const ADA = { userId: 'U0ADA', channelId: REQUEST_CHANNEL };
const GONE = (name: string) =>
  `No instance "${name}" in this project: it has been deleted (\`/gpu ls\` lists the machines there are).`;

describe('a request for a machine gpuops has just deleted', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY, transitionMs: 20 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** A running machine made outside gpuops, once the cached listing holds it (as the refresh leaves it). */
  async function listedMachine(name: string): Promise<string> {
    const made = await stack.cloud.createInstance({ name, type: TYPE });
    await until(
      async () => ((await stack.cloud.getInstance({ id: made.id })).state === 'running' ? true : undefined),
      `${name} to run`,
    );
    await addSystemJob(
      stack.queue,
      { v: 1, system: 'catalog.refresh', projectId: stack.sim.info.projectId },
      `list-${name}`,
    );
    await until(
      async () =>
        (await readCatalog(stack.store, stack.sim.info.projectId))?.catalog.instances?.some(
          (i) => i.name === name,
        ),
      `the cached listing to hold ${name}`,
    );
    return made.id;
  }

  /** Ada asks to delete `name`, Bob approves, and her message says it is deleted. */
  async function deleteThroughApproval(name: string): Promise<void> {
    const pending = await askForApproval(stack, `rm ${name}`, { ...ADA, approvalChannel: APPROVALS });
    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    await messageWhen(
      stack,
      REQUEST_CHANNEL,
      pending.requesterTs!,
      new RegExp(`^Done: .*${name} is deleted`),
    );
  }

  it('refuses a second rm at once, and nothing reaches the approval channel', async () => {
    await listedMachine('demo-2');
    await deleteThroughApproval('demo-2');
    // The cached listing still names demo-2: only what the delete told the listener can say it is gone.
    const cached = await readCatalog(stack.store, stack.sim.info.projectId);
    expect(cached?.catalog.instances?.map((i) => i.name)).toContain('demo-2');

    expect(await answeredPrivately(stack, 'rm demo-2', ADA)).toBe(GONE('demo-2'));
  });

  it('still refuses it after a refresh that could not list the machines (it keeps the old list)', async () => {
    await listedMachine('demo-5');
    await deleteThroughApproval('demo-5');
    const before = (await readCatalog(stack.store, stack.sim.info.projectId))!.catalog.refreshedAt;
    stack.sim.control.addFault({ operation: 'listInstances', status: 500, count: 1_000 });
    try {
      await addSystemJob(
        stack.queue,
        { v: 1, system: 'catalog.refresh', projectId: stack.sim.info.projectId },
        'list-without-machines',
      );
      const after = await until(async () => {
        const cached = await readCatalog(stack.store, stack.sim.info.projectId);
        return cached && cached.catalog.refreshedAt > before ? cached.catalog : undefined;
      }, 'a refresh whose listing of machines failed');
      expect(after.problems.join(' ')).toContain("The project's instances could not be refreshed");
      expect(after.instances?.map((i) => i.name)).toContain('demo-5');
    } finally {
      stack.sim.control.clearFaults();
    }
    expect(await answeredPrivately(stack, 'rm demo-5', ADA)).toBe(GONE('demo-5'));
  });

  it("refuses a start, a workflow step's stop or an rm by its id of a machine deleted by name", async () => {
    const id = await listedMachine('demo-3');
    await deleteThroughApproval('demo-3');
    expect(await answeredPrivately(stack, 'start demo-3', ADA)).toBe(GONE('demo-3'));
    // Another door, the same check: a workflow step fails with the sentence, as its author reads it.
    const step = await stepResult(stack, 'U0ADA', 'stop_instance', { instance: 'demo-3' });
    expect(step).toEqual({
      state: 'failed',
      error: `gpuops refused this step: ${GONE('demo-3').replaceAll('`', '')}`,
    });
    expect(await answeredPrivately(stack, `rm ${id}`, ADA)).toBe(GONE(id));
  });

  it('refuses a second rm of a machine gpuops itself made moments before (not listed yet)', async () => {
    await settled(stack, `create demo-4 ${TYPE}`, 'Done', ADA);
    await deleteThroughApproval('demo-4');
    expect(await answeredPrivately(stack, 'rm demo-4', ADA)).toBe(GONE('demo-4'));
  });

  it('takes a machine made again under the same name as there: its rm goes to the approver', async () => {
    await settled(stack, `create demo-4 ${TYPE}`, 'Done', ADA);
    const again = await askForApproval(stack, 'rm demo-4', { ...ADA, approvalChannel: APPROVALS });
    expect(again.ack).toContain('needs an approval');
  });
});
