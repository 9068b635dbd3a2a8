import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../../src/policy/load-policy.js';
import { REDIS_DOWN, registerGpuCommand } from '../../../src/slack/listeners/gpu-command.js';
import { createOpenModal } from '../../../src/slack/open-form.js';
import { REPLAYED_COMMAND } from '../../../src/slack/trigger-replays.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  startListenerStack,
} from '../../support/listener-stack.js';
import { randomTriggerId } from '../../support/slack-driver.js';

// `/gpu …` (src/slack/listeners/gpu-command.ts) alone: what the person reads in the acknowledgement,
// the message posted after it, and the job it queued, or that it queued nothing.

const withForms = (stack: Parameters<typeof registerGpuCommand>[1]) => ({
  ...stack,
  openModal: createOpenModal(stack),
});

interface Reply {
  readonly text?: string;
  readonly blocks?: unknown[];
  readonly response_type?: string;
}
const replyOf = (text: string): Reply => (text.trim() === '' ? {} : (JSON.parse(text) as Reply));

describe('the /gpu listener, open policy', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack((app, deps) => registerGpuCommand(app, withForms(deps)));
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  it('queues a channel command once, posts its Queued message, and keeps the trigger out of the job', async () => {
    const triggerId = randomTriggerId();
    const since = stack.slack.mark();
    const response = await stack.command('stop train-01', { triggerId });
    expect(response.status).toBe(200);
    // The channel message is the answer: the acknowledgement itself says nothing.
    expect(replyOf(response.text).text).toBeUndefined();
    const posted = await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === 'C0GPU',
      5_000,
      since,
    );
    expect(String(posted.body.text)).toMatch(/Queued/);
    const jobs = (await stack.jobs()).filter((j) => j.data.command.kind === 'stop');
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.data.command).toMatchObject({ kind: 'stop', instance: 'train-01' });
    expect(job.data.ctx).toMatchObject({ userId: 'U0ADA', channelId: 'C0GPU', projectId: DEFAULT_PROJECT });
    const data = JSON.stringify(job.data);
    expect(data).not.toContain(triggerId);
    expect(data).not.toContain('xoxb-');

    // Slack delivers the very same request again (same trigger): told so, nothing new queued.
    const replay = await stack.command('stop train-01', { triggerId });
    expect(replyOf(replay.text).text).toBe(REPLAYED_COMMAND);
    // Typed again (a new trigger) while the first is queued: the same job, said in one sentence.
    const again = await stack.command('stop train-01');
    expect(replyOf(again.text).text).toBe(`Already on it: that same request is job ${job.id}.`);
    expect((await stack.jobs()).filter((j) => j.data.command.kind === 'stop')).toHaveLength(1);
  });

  it('answers a read-only command privately and gives its job the response_url', async () => {
    const response = await stack.command('ls');
    const reply = replyOf(response.text);
    expect(reply.response_type).toBe('ephemeral');
    const id = /^:mag: Looking that up… \(job (\S+)\)$/.exec(String(reply.text))?.[1];
    expect(id, String(reply.text)).toBeDefined();
    const job = await stack.queue.getJob(id!);
    expect(job?.data.command.kind).toBe('ls');
    expect(job?.data.ctx.responseUrl).toMatch(/\/response\//);
  });

  it('answers a typo with one sentence and its help, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    const reply = replyOf((await stack.command('stpo train-01')).text);
    expect(reply.response_type).toBe('ephemeral');
    expect(reply.text).toMatch(/^There is no subcommand "stpo"\.\nDid you mean `\/gpu stop`\?/);
    expect(reply.text).not.toMatch(/Error|at .*\.ts/);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('says a subcommand this cloud lacks is not available, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    const reply = replyOf((await stack.command('projects')).text);
    expect(reply.text).toMatch(
      /^`\/gpu projects` does not work with this cloud: .+ `\/gpu help` lists what works here\.$/,
    );
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('answers `/gpu jobs` itself, from Redis, without a job', async () => {
    const before = (await stack.jobs()).length;
    const reply = replyOf((await stack.command('jobs')).text);
    expect(reply.response_type).toBe('ephemeral');
    expect(JSON.stringify(reply)).toMatch(/stop train-01/);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('says a kubeconfig goes to a direct message, and queues it for the requester', async () => {
    const reply = replyOf((await stack.command('k8s kubeconfig prod')).text);
    expect(reply.text).toBe(':envelope: I will send it to you in a direct message.');
    const jobs = (await stack.jobs()).filter((j) => j.data.command.kind === 'k8s.kubeconfig');
    expect(jobs.map((j) => j.data.ctx.userId)).toEqual(['U0ADA']);
  });

  it('opens the form of a command typed without its arguments, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    const triggerId = stack.slack.issueTriggerId(0, 'U0ADA');
    const since = stack.slack.mark();
    const response = await stack.command('create', { triggerId });
    expect(response.status).toBe(200);
    const opened = await stack.slack.waitFor('views.open', () => true, 5_000, since);
    expect(opened.body.trigger_id).toBe(triggerId);
    expect(String((opened.body.view as { callback_id?: string }).callback_id)).toMatch(/create/);
    expect(await stack.jobs()).toHaveLength(before);
  });
});

// Carol may only look; Ada, Dan and Eve operate, and their rm waits for Bob; each person may send two
// requests a minute.
const GUARDED = parsePolicy(
  [
    'default_role: viewer',
    'roles:',
    '  operator: { users: [U0ADA, U0DAN, U0EVE] }',
    'approvals:',
    '  approvers: { users: [U0BOB] }',
    '  channel: C0APPROVE',
    'rate_limits:',
    '  per_user: { requests: 2, per: 1m }',
    '  per_channel: { requests: 0 }',
  ].join('\n'),
  'guarded.yaml',
);

describe('the /gpu listener, guarded policy', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack((app, deps) => registerGpuCommand(app, withForms(deps)), {
      policy: GUARDED,
    });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  it('refuses a viewer a change in one sentence: no job, no channel message, the refusal audited', async () => {
    const since = stack.slack.mark();
    const reply = replyOf((await stack.command('stop train-01', { userId: 'U0CAROL' })).text);
    expect(reply.response_type).toBe('ephemeral');
    expect(reply.text).toMatch(/^`\/gpu stop` needs the \*operator\* role, and you have \*viewer\*/);
    expect(await stack.jobs()).toHaveLength(0);
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage')).toHaveLength(0);
    const audit = await stack.guardrails.audit.latest(10);
    expect(audit.some((e) => e.actor === 'U0CAROL' && e.outcome === 'refused')).toBe(true);
  });

  it('refuses the audit trail to someone who is not an admin, though it is answered without a job', async () => {
    const reply = replyOf((await stack.command('audit')).text);
    expect(reply.text).toMatch(/^`\/gpu audit` needs the \*admin\* role, and you have \*operator\*/);
    expect(await stack.jobs()).toHaveLength(0);
  });

  it('sends a removal to the approvers instead of the queue, and tells the requester where', async () => {
    await stack.machines('old-box');
    const since = stack.slack.mark();
    const reply = replyOf((await stack.command('rm old-box')).text);
    expect(reply.text).toContain('`/gpu rm old-box` needs an approval');
    expect(reply.text).toContain('I sent it to <#C0APPROVE>, where <@U0BOB> can approve or deny it');
    const card = await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === 'C0APPROVE',
      5_000,
      since,
    );
    expect(JSON.stringify(card.body.blocks)).toContain('/gpu rm old-box');
    expect(await stack.jobs()).toHaveLength(0);
  });

  it('answers Slack delivering a request for approval again with the replay sentence, and makes no second card', async () => {
    await stack.machines('spare-box');
    const triggerId = randomTriggerId();
    const since = stack.slack.mark();
    const asEve = { triggerId, userId: 'U0EVE' };
    const first = replyOf((await stack.command('rm spare-box', asEve)).text);
    expect(first.text).toContain('`/gpu rm spare-box` needs an approval');
    const replay = replyOf((await stack.command('rm spare-box', asEve)).text);
    expect(replay.text).toBe(REPLAYED_COMMAND);
    await stack.slack.waitFor('chat.postMessage', (c) => c.body.channel === 'C0APPROVE', 5_000, since);
    const cards = stack.slack.calls
      .slice(since)
      .filter((c) => c.method === 'chat.postMessage' && c.body.channel === 'C0APPROVE');
    expect(cards).toHaveLength(1);
    const pending = await stack.guardrails.approvals.listPending({ limit: 50 });
    expect(pending.filter((r) => JSON.stringify(r.command).includes('spare-box'))).toHaveLength(1);
  });

  it('slows one person to the policy rate, with when to try again', async () => {
    for (const page of [1, 2]) {
      const reply = replyOf((await stack.command(`ls --page ${page}`, { userId: 'U0DAN' })).text);
      expect(reply.text).toMatch(/Looking that up/);
    }
    const third = replyOf((await stack.command('ls --page 3', { userId: 'U0DAN' })).text);
    expect(third.text).toMatch(
      /^You have sent 2 requests in a minute, .*so nothing was started\. Please try again in \d+ s/,
    );
    expect((await stack.jobs()).filter((j) => j.data.ctx.userId === 'U0DAN')).toHaveLength(2);
  });
});

describe('the /gpu listener, Redis gone', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack((app, deps) => registerGpuCommand(app, withForms(deps)));
    stack.cutRedis();
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  it('says nothing was started, in one sentence, and posts nothing', async () => {
    const since = stack.slack.mark();
    const response = await stack.command('stop train-01');
    expect(response.status).toBe(200);
    expect(replyOf(response.text)).toEqual({ response_type: 'ephemeral', text: REDIS_DOWN });
    expect(stack.slack.calls.slice(since)).toEqual([]);
  });
});
