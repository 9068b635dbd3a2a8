import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTEND_ACTION } from '../../src/commands/approvals/render.js';
import { homeActionId, homeButtonValue } from '../../src/commands/home/home-buttons.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { IDLE_ACTIONS } from '../../src/render/idle-alert.js';
import { PAGE_ACTIONS } from '../../src/render/instances.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { openHome, pressOnHome, published } from '../support/home-driver.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { stepResult } from '../support/workflow-steps.js';
import { createFormSubmission, ephemeralTo, requestJobsInQueue } from './guardrails-kit.js';

// The rate limit counts a person's requests whatever door they come through (docs/policy.md): after
// their typed commands used up the limit, a form, a Home button, a list page, a workflow step or an
// answer the listener gives itself is refused with the same sentence, and nothing starts.

const CHANNEL = 'C0GPU';
const LIMIT = 2;
const LIMITED =
  /^You have sent 2 requests in an hour, the most gpuops takes from one person, so nothing was started\. Please try again in \d+ s/;

const POLICY = parsePolicy(`
default_role: admin
approvals:
  always: []
  unknown_price: allow
  threshold_per_hour: 1000000
rate_limits:
  per_user: { requests: ${LIMIT}, per: 1h }
  per_channel: { requests: 0 }
`);

describe('one rate limit at every door', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'A', policy: POLICY });
    await stack.cloud.createInstance({ name: 'box-1', type: 'rtx-a5000-24gb.1x' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** `user` types `/gpu ls` up to the limit (each taken, then one refused); their jobs so far. */
  async function useUpTheLimit(user: string): Promise<number> {
    for (let i = 0; i < LIMIT; i++) {
      const answer = await (await stack.command('ls', { userId: user, channelId: CHANNEL })).answer();
      expect(String(answer.text)).not.toMatch(LIMITED);
    }
    const over = await (await stack.command('ls', { userId: user, channelId: CHANNEL })).answer();
    expect(String(over.text)).toMatch(LIMITED);
    return jobsOf(user);
  }

  /** Request jobs of `user` on the queue, whatever state they are in. */
  async function jobsOf(user: string): Promise<number> {
    const jobs = await stack.queue.getJobs([
      'waiting',
      'active',
      'delayed',
      'prioritized',
      'completed',
      'failed',
    ]);
    return jobs.filter((j) => j && (j.data as { ctx?: { userId?: string } }).ctx?.userId === user).length;
  }

  it('refuses a form submission on the form itself', async () => {
    const user = 'U0FORM';
    const jobs = await useUpTheLimit(user);
    const response = await stack.interact(
      createFormSubmission(user, { v: 1, form: 'create', channelId: CHANNEL }, 'form-1', 'rtx-a5000-24gb.1x'),
    );
    const body = response.json() as { response_action?: string; errors?: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors ?? {}).join(' ')).toMatch(LIMITED);
    expect(Object.values(body.errors ?? {}).join(' ')).not.toContain('`');
    expect(await jobsOf(user)).toBe(jobs);
  });

  it('refuses a Home button, saying so on the Home tab', async () => {
    const user = 'U0HOME';
    const jobs = await useUpTheLimit(user);
    let since = stack.slack.mark();
    await openHome(stack, user);
    await published(stack, since, () => true, user);
    since = stack.slack.mark();
    const value = homeButtonValue({ t: 'stop box-1', c: CHANNEL, p: stack.sim.info.projectId });
    await pressOnHome(stack, homeActionId('stop'), value, user);
    const after = await published(stack, since, (t) => t.includes('You have sent 2 requests'), user);
    expect(JSON.stringify(after.body.view)).toContain('so nothing was started');
    expect(await jobsOf(user)).toBe(jobs);
  });

  it('refuses the next page of a list, on the list', async () => {
    const user = 'U0PAGE';
    const jobs = await useUpTheLimit(user);
    const responseUrl = stack.responses.newUrl();
    const pressed = await stack.interact(
      blockActionsPayload({
        actionId: PAGE_ACTIONS.next,
        value: 'ls --page 2',
        userId: user,
        channelId: CHANNEL,
        message: { ts: '1700000000.000100', text: 'Instances' },
        responseUrl,
      }),
    );
    expect(pressed.status).toBe(200);
    const told = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id));
    expect(String(told.body.text)).toMatch(LIMITED);
    expect(await jobsOf(user)).toBe(jobs);
  });

  it('refuses Keep on an idle alert and Extend on a lease reminder, changing neither', async () => {
    const user = 'U0ALERT';
    await useUpTheLimit(user);
    const box = (await stack.cloud.listInstances()).find((i) => i.name === 'box-1')!;
    const since = stack.slack.mark();
    const responseUrl = stack.responses.newUrl();
    const kept = await stack.interact(
      blockActionsPayload({
        actionId: IDLE_ACTIONS.keep,
        value: JSON.stringify({ i: box.id, p: stack.sim.info.projectId, n: box.name }),
        userId: user,
        channelId: CHANNEL,
        message: { ts: '1700000000.000200', text: 'Idle GPU alert' },
        responseUrl,
      }),
    );
    expect(kept.status).toBe(200);
    const told = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id));
    expect(String(told.body.text)).toMatch(LIMITED);
    // The alert keeps its buttons: nobody is recorded as keeping the machine.
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.update')).toEqual([]);

    const extended = await stack.interact(
      blockActionsPayload({
        actionId: EXTEND_ACTION,
        value: `lease-of-someone|${Date.now() + 3_600_000}`,
        userId: user,
        channelId: CHANNEL,
        message: { ts: '1700000000.000300', text: 'stops in about 10 minutes' },
      }),
    );
    expect(extended.status).toBe(200);
    await ephemeralTo(stack, user, /^You have sent 2 requests in an hour/);
  });

  it('fails a workflow step run by that person with the sentence', async () => {
    const user = 'U0STEP';
    const jobs = await useUpTheLimit(user);
    const ended = await stepResult(stack, user, 'get_capacity', {});
    expect(ended.state).toBe('failed');
    expect((ended as { error: string }).error).toMatch(/You have sent 2 requests in an hour/);
    expect(await jobsOf(user)).toBe(jobs);
  });

  it('refuses an answer the listener gives itself (/gpu approvals, /gpu audit)', async () => {
    const user = 'U0DIRECT';
    await useUpTheLimit(user);
    for (const text of ['approvals', 'audit 5']) {
      const answer = await (await stack.command(text, { userId: user, channelId: CHANNEL })).answer();
      expect(String(answer.text), `/gpu ${text}`).toMatch(LIMITED);
    }
  });

  it('counts the other doors first, so typing afterwards is refused too', async () => {
    const user = 'U0SWITCH';
    for (let i = 0; i < LIMIT; i++) {
      const answer = await (await stack.command('approvals', { userId: user, channelId: CHANNEL })).answer();
      expect(String(answer.text)).not.toMatch(LIMITED);
    }
    const typed = await (await stack.command('stop box-1', { userId: user, channelId: CHANNEL })).answer();
    expect(String(typed.text)).toMatch(LIMITED);
    expect((await requestJobsInQueue(stack)).filter((j) => j.data.ctx.userId === user)).toHaveLength(0);
  });
});
