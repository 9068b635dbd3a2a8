import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFamily } from '../../src/commands/handlers.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { instanceTypeOf } from '../../src/store/instance-types-seen.js';
import { handlers } from '../fixtures/clone-family/handlers.js';
import { specs } from '../fixtures/clone-family/specs.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { answeredPrivately, refused } from '../support/slash-requests.js';
import { askForApproval, click, messageWhen, primeCatalog, REQUEST_CHANNEL } from './guardrails-kit.js';

// A family added beside the built-in ones (test/fixtures/clone-family: a spec and a handler, as a
// contributor writes them) is typed like any other command: `/gpu clone …` through a signed request
// to the real listener parses, is in help, is checked, priced, approved, leased and remembered, with
// nothing else in gpuops changed for it.

addFamily({ specs, handlers });

const H100 = 'h100-hgx-80gb.8x';
const APPROVALS = 'C0APPROVE';

describe('a command of an added family, typed in Slack', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // An H100 8x costs $23.12/h: above the threshold, and leased.
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  threshold_per_hour: 20
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  lease: { required_above_per_hour: 20, default: 8h, remind_before: 30m }
`),
    });
    await primeCatalog(stack);
    await stack.cloud.createInstance({ name: 'train-01', type: H100 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is listed by /gpu help, and /gpu help clone shows its usage and example', async () => {
    const overview = JSON.stringify(await (await stack.command('help')).answer());
    expect(overview).toContain(
      '/gpu clone &lt;instance&gt; &lt;new-name&gt;` — a new instance of the same type',
    );
    const topic = JSON.stringify(await (await stack.command('help clone')).answer());
    expect(topic).toContain('Example: `/gpu clone train-01 train-02`');
  });

  it('answers a typo in its words or arguments like any command’s, with its usage', async () => {
    expect(await refused(stack, 'clon train-01 copy-1')).toContain('Did you mean `/gpu clone`?');
    const missing = await refused(stack, 'clone train-01');
    expect(missing).toContain('`/gpu clone` needs a name for the copy');
    expect(missing).toContain('/gpu clone &lt;instance&gt; &lt;new-name&gt;');
  });

  it('refuses a source that does not exist in one sentence, before anything is posted or queued', async () => {
    expect(await answeredPrivately(stack, 'clone trian-01 copy-1')).toBe(
      'No instance "trian-01" in this project. Did you mean `train-01`? (`/gpu ls` lists them.)',
    );
  });

  it("prices it by its source's type, waits for an approver, then runs leased and remembers the copy's type", async () => {
    const pending = await askForApproval(stack, 'clone train-01 copy-3', { approvalChannel: APPROVALS });
    expect(pending.ack).toContain('$23.12/h');
    const card = JSON.stringify(pending.card.blocks);
    expect(card).toContain('/gpu clone train-01 copy-3');
    expect(card).toContain('$23.12/h');
    expect(stack.slack.message(REQUEST_CHANNEL, pending.requesterTs!)?.text).toBe(
      `Waiting for approval in <#${APPROVALS}>: /gpu clone train-01 copy-3`,
    );

    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    const done = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    expect(done.text).toMatch(/copy-3 is a copy of train-01\. Leased: it stops at /);
    expect(await stack.guardrails.leases.get(pending.approvalId)).toMatchObject({
      instance: 'copy-3',
      owner: 'U0ADA',
    });
    expect(await instanceTypeOf(stack.store, stack.sim.info.projectId, 'copy-3', undefined)).toBe(H100);
  });
});
