import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import { blockActionsPayload, interactionBody, postSigned } from '../support/slack-driver.js';
import {
  askForApproval,
  buttonsOf,
  click,
  denyWithReason,
  ephemeralTo,
  finished,
  leaseReminder,
  messageWhen,
  primeCatalog,
  REQUEST_CHANNEL,
  requestJobsInQueue,
  stored,
  until,
} from './guardrails-kit.js';

const APPROVALS = 'C0APPROVE';
const LEADS = Array.from({ length: 50 }, (_, i) => `U0L${String(i).padStart(2, '0')}`);

// Ada asks; Bob approves (listed), and so does anyone in @leads; Carol operates but approves nothing.
const POLICY = parsePolicy(`
default_role: viewer
roles:
  admin: { users: [U0LEAD] }
  operator: { users: [U0ADA, U0BOB, U0CAROL] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB], groups: [S0LEADS] }
  channel: ${APPROVALS}
  expires_after: 1h
pricing:
  types:
    cpu.16x: { gpu_type: CPU, gpu_count: 0 }
`);

const text = (blocks: unknown) => JSON.stringify(blocks ?? []);

describe('approvals through Slack, shape B', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY, slack: { usergroups: { S0LEADS: LEADS } } });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows a costly create to approvers with its cost, and tells the requester where it went', async () => {
    const pending = await askForApproval(stack, 'create big-0 h100-hgx-80gb.8x', {
      approvalChannel: APPROVALS,
    });
    expect(pending.ack).toContain(`<#${APPROVALS}>`);
    expect(pending.ack).toContain('$23.12/h');
    const card = text(pending.card.blocks);
    expect(card).toContain('/gpu create big-0 h100-hgx-80gb.8x');
    expect(card).toContain('$23.12/h · $554.88/day');
    expect(card).toContain('8 × H100_SXM5_80GB at $2.89 per GPU-hour');
    expect(card).toContain('<@U0ADA>');
    expect(card).toContain(stack.sim.info.projectId);
    expect(card).toMatch(/Provisioning\*\\n+about \d+ min/);
    expect(buttonsOf(pending.card.blocks).map((b) => b.text.text)).toEqual(['Approve', 'Deny']);
    const mine = stack.slack.message(REQUEST_CHANNEL, pending.requesterTs!)!;
    expect(mine.text).toBe(`Waiting for approval in <#${APPROVALS}>: /gpu create big-0 h100-hgx-80gb.8x`);
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('answers a typo at once and never shows it to an approver', async () => {
    await stack.cloud.createInstance({ name: 'demo-1', type: 'h100-hgx-80gb.8x' });
    const cards = () => stack.slack.callsTo('chat.postMessage').filter((c) => c.body.channel === APPROVALS);
    const before = cards().length;
    const answers: Record<string, string> = {};
    for (const line of ['start nosuchbox', 'create t2 notatype.1x', 'create t3 h100-hgx-80gb.5x']) {
      const { answer } = await stack.command(line, { channelId: REQUEST_CHANNEL });
      answers[line] = String((await answer()).text);
    }
    expect(answers['start nosuchbox']).toMatch(
      /^No instance "nosuchbox" in this project\. This project has: .*demo-1.*\. Check the name with `\/gpu ls`\.$/,
    );
    expect(answers['create t2 notatype.1x']).toContain(
      '"notatype.1x" is not an instance type this cloud offers. Types you can create: ',
    );
    expect(answers['create t2 notatype.1x']).toContain('h100-hgx-80gb.8x');
    expect(answers['create t3 h100-hgx-80gb.5x']).toContain('is not an instance type this cloud offers');
    expect(cards()).toHaveLength(before);
    expect(await requestJobsInQueue(stack)).toEqual([]);
    // The real names still reach the approver.
    const pending = await askForApproval(stack, 'start demo-1', { approvalChannel: APPROVALS });
    expect(text(pending.card.blocks)).toContain('/gpu start demo-1');
  });

  it('says "price unknown" and why on the card of a type it cannot price', async () => {
    const pending = await askForApproval(stack, 'create box-1 cpu.16x', { approvalChannel: APPROVALS });
    const card = text(pending.card.blocks);
    expect(card).toContain(
      'price unknown: cpu.16x has no GPUs, and the platform prices GPU configurations only',
    );
    expect(card).not.toMatch(/\$0\.00/);
    expect(pending.ack).toContain('Its price is unknown');
  });

  it('runs the machine once someone else approves, and edits the card and the request in place', async () => {
    const pending = await askForApproval(stack, 'create big-1 h100-hgx-80gb.8x', {
      approvalChannel: APPROVALS,
    });
    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    const done = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    expect(done.text).toMatch(/big-1 is running at/);
    const phases = done.history.map((v) => String(v.text).split(':')[0]);
    expect(phases.slice(0, 2)).toEqual(['Waiting for approval in <#C0APPROVE>', 'Approved by <@U0BOB>']);
    const card = await messageWhen(stack, APPROVALS, pending.card.ts, /^Approved by <@U0BOB>/);
    expect(buttonsOf(card.blocks)).toEqual([]);
    expect(text(card.blocks)).toContain('$23.12/h · $554.88/day');
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'big-1')).toHaveLength(1);
    expect(await stack.queue.getJob(pending.approvalId)).toBeDefined();
    expect((await stored(stack, pending.approvalId)).decision?.by).toBe('U0BOB');
  });

  it('denies with a reason: card and request edited, nothing runs', async () => {
    await stack.cloud.createInstance({ name: 'keep-me', type: 'rtx-a5000-24gb.1x' });
    const pending = await askForApproval(stack, 'rm keep-me', { approvalChannel: APPROVALS });
    expect(pending.ack).toContain('`/gpu rm` always needs an approval');
    await denyWithReason(stack, pending, 'U0BOB', 'Not during the freeze');
    const card = await messageWhen(stack, APPROVALS, pending.card.ts, /^Denied by <@U0BOB>/);
    expect(card.text).toContain('Not during the freeze');
    expect(buttonsOf(card.blocks)).toEqual([]);
    const mine = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Denied/);
    expect(text(mine.blocks)).toContain('Not during the freeze');
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect(await stack.store.job(pending.approvalId)).toBeUndefined();
  });

  it('refuses the requester approving their own request: ephemeral, nothing changes', async () => {
    await stack.cloud.createInstance({ name: 'self-1', type: 'rtx-a5000-24gb.1x' });
    const pending = await askForApproval(stack, 'rm self-1', { userId: 'U0BOB', approvalChannel: APPROVALS });
    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    const refusal = await ephemeralTo(stack, 'U0BOB', /asked for this yourself/);
    expect(refusal.channel).toBe(APPROVALS);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(stack.slack.message(APPROVALS, pending.card.ts)!.history).toHaveLength(1);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
  });

  it("refuses a non-approver's Approve and Deny: ephemeral, no reason asked, nothing changes", async () => {
    await stack.cloud.createInstance({ name: 'other-1', type: 'rtx-a5000-24gb.1x' });
    const pending = await askForApproval(stack, 'rm other-1', { approvalChannel: APPROVALS });
    const since = stack.slack.mark();
    expect((await click(stack, pending, 'U0CAROL')).status).toBe(200);
    expect((await click(stack, pending, 'U0CAROL', 'Deny', stack.slack.issueTriggerId())).status).toBe(200);
    const refusal = await ephemeralTo(stack, 'U0CAROL', /Only approvers may decide this request/);
    expect(refusal.text).toContain('<@U0BOB>');
    await until(
      () => stack.slack.ephemerals.filter((e) => e.user === 'U0CAROL').length >= 2,
      'both refusals',
    );
    expect(stack.slack.callsTo('views.open').filter((c) => c.index >= since)).toEqual([]);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(stack.slack.message(APPROVALS, pending.card.ts)!.history).toHaveLength(1);
  });

  it('lists what a person may decide with /gpu approvals, with the buttons', async () => {
    const bob = await (await stack.command('approvals', { userId: 'U0BOB' })).answer();
    expect(bob.response_type).toBe('ephemeral');
    expect(text(bob.blocks)).toContain('/gpu rm other-1');
    // His own is not his to decide: it is named under what waits for someone else, without buttons.
    const own = text(bob.blocks).split(/of yours waits? for someone else:/)[1] ?? '';
    expect(own).toContain('/gpu rm self-1');
    expect(text(bob.blocks).split('/gpu rm self-1')).toHaveLength(2);
    expect(buttonsOf(bob.blocks).map((b) => b.text.text)).toContain('Approve');
    const carol = await (await stack.command('approvals', { userId: 'U0CAROL' })).answer();
    expect(carol.text).toContain('Nothing waits for your approval');
  });

  it('makes exactly one job and one machine of fifty concurrent Approve clicks', async () => {
    const pending = await askForApproval(stack, 'create fifty-1 h100-hgx-80gb.8x', {
      approvalChannel: APPROVALS,
    });
    const listsBefore = stack.slack.callsTo('usergroups.users.list').length;
    const approvedBefore = approvedCount((await stack.metrics.render()).body);
    const answers = await Promise.all(LEADS.map((lead) => click(stack, pending, lead)));
    expect(answers.map((a) => a.status)).toEqual(LEADS.map(() => 200));
    await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    await until(
      () => stack.slack.ephemerals.filter((e) => /Already approved by/.test(String(e.text))).length === 49,
      '49 "already approved" answers',
    );
    await finished(stack, pending.approvalId);
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect(stack.sim.control.createCount('createInstance', 'fifty-1')).toBe(1);
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'fifty-1')).toHaveLength(1);
    const decided = await stored(stack, pending.approvalId);
    expect(LEADS).toContain(decided.decision?.by);
    // One lookup of the group at most, however many clicks.
    expect(stack.slack.callsTo('usergroups.users.list').length - listsBefore).toBeLessThanOrEqual(1);
    // One approval counted, however many clicks (read against the count before: other tests approve too).
    expect(approvedCount((await stack.metrics.render()).body)).toBe(approvedBefore + 1);
  });

  it('refuses a forged Approve (bad signature) with 401, and nothing changes', async () => {
    await stack.cloud.createInstance({ name: 'forged-1', type: 'rtx-a5000-24gb.1x' });
    const pending = await askForApproval(stack, 'rm forged-1', { approvalChannel: APPROVALS });
    const payload = blockActionsPayload({
      actionId: APPROVE_ACTION,
      value: pending.approvalId,
      userId: 'U0BOB',
      channelId: APPROVALS,
      message: { ts: pending.card.ts },
    });
    const forged = await postSigned(stack.url, interactionBody(payload), {
      secret: SIGNING_SECRET,
      badSignature: true,
    });
    expect(forged.status).toBe(401);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(stack.slack.message(APPROVALS, pending.card.ts)!.history).toHaveLength(1);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
  });

  it('makes one request of a double submission', async () => {
    const since = stack.slack.mark();
    const [a, b] = await Promise.all([
      stack.command('create twin-1 h100-hgx-80gb.8x'),
      stack.command('create twin-1 h100-hgx-80gb.8x'),
    ]);
    const answers = [a.response.text, b.response.text].join(' ');
    expect(answers).toContain('needs an approval');
    expect(answers).toContain('Already on it');
    await stack.slack.waitFor('chat.postMessage', (c) => c.body.channel === APPROVALS, 5_000, since);
    expect(
      stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= since && c.body.channel === APPROVALS),
    ).toHaveLength(1);
  });

  it('keeps Block Kit within limits everywhere', () => {
    expect(stack.slack.violations).toEqual([]);
    expect(stack.slack.unexpected).toEqual([]);
  });
});

describe('expiry', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  approvers: { users: [U0BOB] }
  expires_after: 1s
`),
      approvalExpiryEveryMs: 200,
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('closes an expired request: buttons removed, card and request say so, a late click does nothing', async () => {
    // No approvals channel in this policy: the card goes to the channel of the request.
    await stack.cloud.createInstance({ name: 'old-1', type: 'rtx-a5000-24gb.1x' });
    const pending = await askForApproval(stack, 'rm old-1', { approvalChannel: REQUEST_CHANNEL });
    const card = await messageWhen(stack, REQUEST_CHANNEL, pending.card.ts, /^Expired/);
    expect(buttonsOf(card.blocks)).toEqual([]);
    expect(text(card.blocks)).toContain('nobody decided within 1s');
    const mine = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Expired/);
    expect(text(mine.blocks)).toContain('ask again if it is still needed');
    expect((await stored(stack, pending.approvalId)).state).toBe('expired');
    expect((await click(stack, { ...pending, cardChannel: REQUEST_CHANNEL }, 'U0BOB')).status).toBe(200);
    await ephemeralTo(stack, 'U0BOB', /It expired/);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect((await stack.metrics.render()).body).toMatch(/gpuops_approvals_total\{outcome="expired"\} 1/);
  });
});

describe('leases on costly machines', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA, U0CAROL] }
approvals:
  approvers: { users: [U0BOB] }
  lease: { required_above_per_hour: 20, default: 3s, remind_before: 1s }
`),
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('gives an approved costly machine a stop time, reminds its owner with Extend, and stops it at the (extended) time', async () => {
    const pending = await askForApproval(stack, 'create lease-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    expect(text(pending.card.blocks)).toContain('stops 3s after it is running');
    await click(stack, pending, 'U0BOB');
    const done = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    expect(done.text).toMatch(/Leased: it stops at .* unless extended/);
    const first = (await stack.guardrails!.leases.get(pending.approvalId))!;

    // The reminder comes to the owner's DM a second before the stop time.
    const { dm, message: reminder, extend } = await leaseReminder(stack, 'U0ADA');
    expect(buttonsOf(reminder.blocks).map((b) => b.text.text)).toEqual(['Extend']);
    expect((await extend('U0CAROL')).status).toBe(200);
    await ephemeralTo(stack, 'U0CAROL', /Only <@U0ADA> or an approver may extend/);
    expect((await extend('U0ADA')).status).toBe(200);
    await messageWhen(stack, dm, reminder.ts, /now stops at/);
    const extended = (await stack.guardrails!.leases.get(pending.approvalId))!;
    expect(extended.stopAt).toBe(first.stopAt + 3_000);
    expect((await extend('U0ADA')).status).toBe(200);
    await ephemeralTo(stack, 'U0ADA', /Already extended/);

    // Stopped through the normal stop job, at the extended time, not the first one.
    await until(
      async () =>
        (await stack.cloud.listInstances()).find((i) => i.name === 'lease-1' && i.state === 'stopped'),
      'lease-1 to be stopped',
      20_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(extended.stopAt);
    expect(await stack.queue.getJob(`lease-${pending.approvalId}-${extended.stopAt}`)).toBeDefined();
    expect(await stack.queue.getJob(`lease-${pending.approvalId}-${first.stopAt}`)).toBeUndefined();
    await until(
      () => stack.slack.messages(dm).find((m) => /lease of lease-1 ended/.test(String(m.text))),
      'the DM that it ended',
    );
    const audit = await stack.guardrails!.audit.latest(50);
    expect(audit.find((e) => e.operation === 'lease.extend')).toMatchObject({
      actor: 'U0ADA',
      outcome: 'extended',
    });
    expect(audit.find((e) => e.operation === 'stop' && e.actor === 'gpuops')).toMatchObject({
      event: 'request',
      outcome: 'queued',
    });
    expect(stack.slack.violations).toEqual([]);
  });
});

function approvedCount(metrics: string): number {
  const m = /gpuops_approvals_total\{outcome="approved"\} (\d+)/.exec(metrics);
  return m ? Number(m[1]) : 0;
}
