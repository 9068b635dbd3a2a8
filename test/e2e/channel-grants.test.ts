import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import { homeActionId, homeButtonValue } from '../../src/commands/home/home-buttons.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { listSchedules } from '../../src/store/schedules.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { openHome, pressOnHome, published, textOf } from '../support/home-driver.js';
import { askForApproval, click, primeCatalog, stored, until } from './guardrails-kit.js';

// A role granted to a channel counts only for what is typed or clicked in that channel's message
// (docs/policy.md). The Home tab is no channel: there the person's own roles decide, for the
// approvals it lists, its Approve and its Start, Stop and Metrics buttons, whatever channel the
// request or the button names.

const [ADA, EVE, FRED] = ['U0ADA', 'U0EVE', 'U0FRED'];

/** Jobs ever queued for `user`'s `kind` requests, whatever became of them. */
async function jobsFor(stack: BotStack, user: string, kind: string): Promise<number> {
  const states = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'] as const;
  const jobs = await stack.queue.getJobs([...states]);
  return jobs.filter((j) => j?.data.ctx?.userId === user && j.data.command?.kind === kind).length;
}

/** The request's refused decision by `approver`, on the audit trail. */
async function refusedDecision(stack: BotStack, approvalId: string, approver: string) {
  return (await stack.guardrails.audit.latest(50)).find(
    (e) =>
      e.event === 'decision' &&
      e.approvalId === approvalId &&
      e.approver === approver &&
      e.outcome === 'refused',
  );
}

describe('an admin role granted to the approvals channel', () => {
  const ADMINS = 'C0ADMINS';
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
default_role: viewer
roles:
  admin: { channels: [${ADMINS}] }
  operator: { users: [${ADA}] }
approvals:
  channel: ${ADMINS}
  threshold_per_hour: 10
`),
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lends nothing on the Home tab: the request is not listed there, and an Approve there is refused', async () => {
    const pending = await askForApproval(stack, 'create big-01 h100-hgx-80gb.8x', {
      userId: ADA,
      approvalChannel: ADMINS,
    });

    // Eve is a viewer in no channel: her Home lists nothing for her to decide.
    let since = stack.slack.mark();
    await openHome(stack, EVE);
    await published(stack, since, () => true, EVE);
    const home = textOf(homeOf(stack.slack, EVE));
    expect(home).not.toContain('create big-01');
    expect(home).not.toContain('Waiting for your approval');

    // Her Approve from Home (the card's own button, as Slack would deliver it) is refused.
    since = stack.slack.mark();
    await pressOnHome(stack, APPROVE_ACTION, pending.approvalId, EVE);
    await published(stack, since, (t) => t.includes('Only approvers may decide this request'), EVE);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect(await refusedDecision(stack, pending.approvalId, EVE)).toMatchObject({ actor: ADA });

    // Clicked on the card in the approvals channel, the channel's grant counts: approved and queued.
    await click(stack, pending, EVE);
    await until(
      async () => ((await stored(stack, pending.approvalId)).state === 'approved' ? true : undefined),
      'the approval',
    );
    expect((await stored(stack, pending.approvalId)).decision?.by).toBe(EVE);
  }, 60_000);
});

describe('an operator role granted to the channel requests are made in (peer approval)', () => {
  const OPS = 'C0OPS';
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
default_role: viewer
roles:
  operator: { channels: [${OPS}] }
approvals:
  threshold_per_hour: 10
`),
    });
    await stack.cloud.createInstance({ name: 'box-1', type: 'rtx-a5000-24gb.1x' });
    await stack.cloud.createInstance({ name: 'box-2', type: 'rtx-a5000-24gb.1x' });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lets no viewer approve from Home through the channel’s grant, but a click on the card there counts', async () => {
    // Eve asks in the operators' channel, where she is an operator.
    const pending = await askForApproval(stack, 'rm box-1', {
      userId: EVE,
      channelId: OPS,
      approvalChannel: OPS,
    });

    let since = stack.slack.mark();
    await openHome(stack, FRED);
    await published(stack, since, () => true, FRED);
    expect(textOf(homeOf(stack.slack, FRED))).not.toContain('rm box-1');
    since = stack.slack.mark();
    await pressOnHome(stack, APPROVE_ACTION, pending.approvalId, FRED);
    await published(stack, since, (t) => t.includes('may approve it'), FRED);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect(await refusedDecision(stack, pending.approvalId, FRED)).toBeDefined();
    expect((await stack.cloud.listInstances()).map((i) => i.name)).toContain('box-1');

    await click(stack, pending, FRED);
    await until(
      async () => ((await stored(stack, pending.approvalId)).state === 'approved' ? true : undefined),
      'the approval',
    );
  }, 60_000);

  it('refuses a schedule whose firings the channel’s grant would not cover, saying why', async () => {
    const { answer } = await stack.command('schedule stop box-2 weekdays 20:00', {
      userId: EVE,
      channelId: OPS,
    });
    expect(String((await answer()).text)).toBe(
      '`/gpu schedule stop` makes `/gpu stop` happen later, on your own roles (a channel’s role does not count then): it needs the *operator* role, and yours is *viewer*. Ask an admin to grant operator to you or to a user group you are in, in the gpuops policy file.'.replace(
        '’',
        "'",
      ),
    );
    expect(await jobsFor(stack, EVE, 'schedule.stop')).toBe(0);
    expect(await listSchedules(stack.store, { userId: EVE })).toEqual([]);
    const audit = await stack.guardrails.audit.latest(20);
    expect(audit.find((e) => e.operation === 'schedule.stop' && e.actor === EVE)).toMatchObject({
      outcome: 'refused',
    });
    // Typed in the channel, what runs now still counts the channel's grant: queued, no refusal.
    const { response } = await stack.command('stop box-2', { userId: EVE, channelId: OPS });
    expect(response.status).toBe(200);
    expect(response.text).not.toMatch(/role/);
    await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === OPS && String(c.body.text).includes('stop box-2'),
    );
  }, 30_000);

  it('refuses a Home Start for the granting channel to someone who is an operator only there', async () => {
    const since = stack.slack.mark();
    await openHome(stack, EVE);
    await published(stack, since, () => true, EVE);

    // The button names the operators' channel (where the machine's messages go); the press is on Home.
    const value = homeButtonValue({ t: 'start box-2', c: OPS, p: stack.sim.info.projectId });
    const pressed = stack.slack.mark();
    await pressOnHome(stack, homeActionId('start'), value, EVE);
    await published(
      stack,
      pressed,
      (t) => t.includes('`/gpu start` needs the *operator* role, and you have *viewer*'),
      EVE,
    );
    expect(await jobsFor(stack, EVE, 'start')).toBe(0);
    const audit = await stack.guardrails.audit.latest(20);
    expect(
      audit.find((e) => e.operation === 'start' && e.actor === EVE && e.target === 'box-2'),
    ).toMatchObject({ event: 'request', outcome: 'refused', channel: OPS });
  }, 30_000);
});
