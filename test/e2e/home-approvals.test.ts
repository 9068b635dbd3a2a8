import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION, DENY_ACTION, DENY_CALLBACK } from '../../src/commands/approvals/render.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { blocksOf, openHome, pressOnHome, published, textOf } from '../support/home-driver.js';
import { viewSubmissionPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { expectCleanSlack } from './answers.js';
import { askForApproval, primeCatalog, stored } from './guardrails-kit.js';

// Approvals on the Home tab: an approver sees what waits for them with the cards' own Approve and
// Deny, decided on the server at click time exactly as on the card; someone who approves nothing
// has no such section, and their click changes nothing.

const APPROVALS = 'C0APPROVE';
const [ADA, BOB, CAROL] = ['U0ADA', 'U0BOB', 'U0CAROL'];

const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB, U0CAROL] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1h
  lease: { required_above_per_hour: 20, default: 2h, remind_before: 10m }
`);

describe('approvals on the Home tab', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lets an approver approve from Home, and refuses anyone else there', async () => {
    const pending = await askForApproval(stack, 'create big-01 h100-hgx-80gb.8x', {
      userId: ADA,
      approvalChannel: APPROVALS,
    });

    let since = stack.slack.mark();
    await openHome(stack, BOB);
    await published(stack, since, (t) => t.includes('Waiting for your approval'), BOB);
    const bobs = textOf(homeOf(stack.slack, BOB));
    expect(bobs).toContain('create big-01 h100-hgx-80gb.8x');
    expect(bobs).toContain(`<@${ADA}>`);

    // Carol approves nothing: no such section on her Home, and a forged click is refused there.
    since = stack.slack.mark();
    await openHome(stack, CAROL);
    await published(stack, since, () => true, CAROL);
    expect(textOf(homeOf(stack.slack, CAROL))).not.toContain('Waiting for your approval');
    since = stack.slack.mark();
    await pressOnHome(stack, APPROVE_ACTION, pending.approvalId, CAROL);
    await published(stack, since, (t) => t.includes('Only approvers may decide this request'), CAROL);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');

    // Bob's Approve, from his Home: decided, queued, and his Home says so without the request.
    const approve = blocksOf(homeOf(stack.slack, BOB))
      .flatMap((b) => b.elements ?? [])
      .find((e) => e.action_id === APPROVE_ACTION && e.value === pending.approvalId);
    expect(approve).toBeDefined();
    since = stack.slack.mark();
    await pressOnHome(stack, APPROVE_ACTION, pending.approvalId, BOB);
    const after = await published(stack, since, (t) => t.includes('Approved.'), BOB);
    expect(JSON.stringify(after.body.view)).toContain('Waiting for your approval*\\nNothing right now.');
    expect((await stored(stack, pending.approvalId)).state).toBe('approved');
    await until('the approved job to be queued', async () =>
      (await stack.queue.getJob(pending.approvalId)) ? true : undefined,
    );
    // The card in the approvals channel is closed as if clicked there.
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === APPROVALS && JSON.stringify(c.body).includes('Approved'),
      10_000,
      since,
    );

    // Made, the machine is Ada's, on her Home with the stop time of its lease.
    await until('the lease of big-01', async () =>
      (await stack.guardrails.leases.activeFor(ADA)).some((l) => l.instance === 'big-01') ? true : undefined,
    );
    since = stack.slack.mark();
    await openHome(stack, ADA);
    const adas = await published(stack, since, (t) => t.includes('*big-01*'), ADA);
    expect(JSON.stringify(adas.body.view)).toMatch(/\*big-01\*[^"]* · lease ends <!date\^\d+/);
    expectCleanSlack(stack);
  }, 60_000);

  it('lets an approver deny from Home with a reason, and says so there', async () => {
    const pending = await askForApproval(stack, 'create big-02 h100-hgx-80gb.8x', {
      userId: ADA,
      approvalChannel: APPROVALS,
    });
    let since = stack.slack.mark();
    await openHome(stack, BOB);
    await published(stack, since, (t) => t.includes('create big-02'), BOB);
    since = stack.slack.mark();
    await pressOnHome(stack, DENY_ACTION, pending.approvalId, BOB);
    const opened = await stack.slack.waitFor('views.open', () => true, 5_000, since);
    const modal = stack.slack.views.get((opened.response as { view: { id: string } }).view.id)!;
    expect(modal.view.callback_id).toBe(DENY_CALLBACK);
    const submitted = await stack.interact(
      viewSubmissionPayload({
        callbackId: DENY_CALLBACK,
        userId: BOB,
        values: { reason: { value: { type: 'plain_text_input', value: 'Use the 1x type first.' } } },
        privateMetadata: String(modal.view.private_metadata),
        viewId: modal.id,
      }),
    );
    expect(submitted.status).toBe(200);
    const after = await published(stack, since, (t) => t.includes('Denied.'), BOB);
    expect(JSON.stringify(after.body.view)).not.toContain('create big-02');
    const denied = await stored(stack, pending.approvalId);
    expect(denied.state).toBe('denied');
    expect(denied.decision?.reason).toBe('Use the 1x type first.');
    expectCleanSlack(stack);
  }, 30_000);

  it("publishes again the Home of an approver who opened it before when a new request arrives, and no one else's", async () => {
    // Bob (an approver) and Carol (not one) have opened their Home before; nothing waits for Bob yet.
    let since = stack.slack.mark();
    await openHome(stack, BOB);
    await published(stack, since, () => true, BOB);
    expect(textOf(homeOf(stack.slack, BOB))).not.toContain('create big-03');
    since = stack.slack.mark();
    await openHome(stack, CAROL);
    await published(stack, since, () => true, CAROL);

    since = stack.slack.mark();
    await askForApproval(stack, 'create big-03 h100-hgx-80gb.8x', {
      userId: ADA,
      approvalChannel: APPROVALS,
    });
    // Without opening it again, Bob's Home lists the new request with its Approve and Deny.
    const refreshed = await published(stack, since, (t) => t.includes('create big-03'), BOB);
    expect(JSON.stringify(refreshed.body.view)).toContain('Waiting for your approval');
    expect(textOf(homeOf(stack.slack, BOB))).toContain('create big-03 h100-hgx-80gb.8x');
    // Carol, who approves nothing, and Ada, who asked, are left alone.
    const others = stack.slack
      .callsTo('views.publish')
      .filter((c) => c.index >= since && c.body.user_id !== BOB);
    expect(others).toHaveLength(0);
  }, 30_000);
});
