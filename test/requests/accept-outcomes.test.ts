import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { createQueue } from '../../src/jobs/queue.js';
import { degradedRefusal, MaybeQueuedError } from '../../src/jobs/replicated.js';
import { createLogger } from '../../src/log/logger.js';
import type { Guardrails } from '../../src/policy/guardrails.js';
import type { AcceptDeps } from '../../src/requests/accept-kit.js';
import { type AcceptExtra, acceptRequest } from '../../src/requests/accept-request.js';
import { NOT_STARTED } from '../../src/requests/enqueue-request.js';
import { type AuditEntry, createAudit } from '../../src/store/audit.js';
import { createRateLimiter } from '../../src/store/rate-limiter.js';
import { startPrivateRedis } from '../../src/sys/private-redis.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { until } from '../support/until.js';

// What the accept step (src/requests/accept-request.ts) answers after the role check, through its one
// door acceptRequest: a workflow step with nowhere to show a card, a schedule's firing within or above
// what was approved, degraded mode, the rate limits, the budgets (refused under a hard cap, else their
// owners decide), a name that is not there, and the audit trail of a queued request and of one the
// queue never took. Ada asks; Bob approves; Owen and Ola own the budget.

const APPROVALS = 'C0APPROVE';
const H100 = 'h100-hgx-80gb.8x';
/** Needs no approver by cost (an 8×H100 costs about $23/h), only rm waits, and nothing names a card's channel. */
const NO_CARD_CHANNEL = policyOf(
  'accept-outcomes.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  '  always: [rm, configs]',
  '  threshold_per_hour: 1000',
);
const WITH_CARD_CHANNEL = policyOf(
  'accept-outcomes-channel.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  '  always: [rm, configs]',
  '  threshold_per_hour: 1000',
  `  channel: ${APPROVALS}`,
);
/** An 8×H100 (about $23/h) waits for an approver by its cost. */
const ABOVE_10_PER_HOUR = policyOf(
  'accept-outcomes-threshold.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  '  threshold_per_hour: 10',
  `  channel: ${APPROVALS}`,
);
/** An 8×H100 costs more than the threshold, and the default project's $1 budget is always over. */
const budgetPolicy = (hardCap: boolean) =>
  policyOf(
    `accept-outcomes-budget-${hardCap}.yaml`,
    'default_role: operator',
    'approvals:',
    '  approvers: { users: [U0BOB] }',
    '  threshold_per_hour: 10',
    `  channel: ${APPROVALS}`,
    'budgets:',
    '  ml:',
    '    monthly_usd: 1',
    `    projects: [${DEFAULT_PROJECT}]`,
    '    owners: [U0OWEN, U0OLA]',
    `    hard_cap: ${hardCap}`,
  );

describe('the accept step after the role check', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(() => {}, { policy: NO_CARD_CHANNEL });
    await stack.machines(...Array.from({ length: 30 }, (_, i) => `ao-${i + 1}`));
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const ctx = (extra: Partial<JobContext> = {}): JobContext => ({
    teamId: 'T0FAKE',
    channelId: 'C0GPU',
    userId: 'U0ADA',
    projectId: DEFAULT_PROJECT,
    requestedAt: Date.now(),
    ...extra,
  });
  /** A workflow step that reports nowhere: its channel is its person's id. */
  const stepCtx = (extra: Partial<JobContext> = {}) =>
    ctx({
      channelId: 'U0ADA',
      step: { executionId: `Fx${++n}`, callbackId: 'remove_machine', quiet: false },
      ...extra,
    });
  const next = () => `ao-${++n}`;
  const rm = (instance = next()) => ({ kind: 'rm', instance }) as GpuCommand;
  const stop = (instance = next()) => ({ kind: 'stop', instance }) as GpuCommand;
  const start = (instance = next()) => ({ kind: 'start', instance }) as GpuCommand;
  const withPolicy = (policy: Guardrails['policy'], more: Partial<AcceptDeps> = {}): AcceptDeps => ({
    ...stack.deps,
    guardrails: { ...stack.guardrails, policy },
    ...more,
  });
  const entriesOf = async (match: Partial<AuditEntry>) =>
    (await stack.guardrails.audit.latest(500)).filter((e) =>
      Object.entries(match).every(([k, v]) => (e as unknown as Record<string, unknown>)[k] === v),
    );
  const instanceOf = (c: GpuCommand) => (c as { instance: string }).instance;
  const jobFor = async (c: GpuCommand) =>
    (await stack.jobs()).filter((j) => (j.data.command as { instance?: string }).instance === instanceOf(c));
  /** Approval cards (they carry the Approve button) for the request's machine. */
  const cardsFor = (c: GpuCommand) =>
    stack.slack
      .callsTo('chat.postMessage')
      .filter((call) => JSON.stringify(call.body).includes(` ${instanceOf(c)}`))
      .filter((call) => JSON.stringify(call.body.blocks ?? []).includes('"Approve"'));

  describe('a workflow step with no channel, for a request that needs an approval', () => {
    it('is refused in one sentence naming both fixes, on the channel field, audited, with no card', async () => {
      const command = rm();
      const c = stepCtx();
      const result = await acceptRequest(stack.deps, command, c);
      const sentence =
        'This request needs an approval, and the step has no channel to show it in: give the step a channel for progress (approvers see the card there), or set approvals.channel in the gpuops policy.';
      expect(result).toEqual({ status: 'rejected', message: sentence, plain: sentence, field: 'channel' });
      expect(cardsFor(command)).toEqual([]);
      expect(await stack.guardrails.approvals.listPending()).toEqual([]);
      const entries = await entriesOf({ actor: 'U0ADA', operation: 'rm', target: instanceOf(command) });
      expect(entries.map((e) => e.outcome)).toEqual(['rejected']);
    });

    it('goes to the policy’s approvals channel when there is one', async () => {
      const command = rm();
      const result = await acceptRequest(withPolicy(WITH_CARD_CHANNEL), command, stepCtx());
      expect(result.status).toBe('pending-approval');
      expect(result.status === 'pending-approval' && result.approvalChannel).toBe(APPROVALS);
      expect(cardsFor(command).map((c) => c.body.channel)).toEqual([APPROVALS]);
    });

    it('shows its card in the step’s channel when the step has one', async () => {
      const command = rm();
      const result = await acceptRequest(stack.deps, command, stepCtx({ channelId: 'C0GPU' }));
      expect(result.status === 'pending-approval' && result.approvalChannel).toBe('C0GPU');
    });

    it('is no concern of a request from a person’s own conversation that is not a step', async () => {
      const command = rm();
      const result = await acceptRequest(stack.deps, command, ctx({ channelId: 'U0ADA' }));
      expect(result.status === 'pending-approval' && result.approvalChannel).toBe('U0ADA');
    });
  });

  describe("a schedule's firing", () => {
    it('within what an approver agreed is queued with no card', async () => {
      const command = start();
      const result = await acceptRequest(withPolicy(ABOVE_10_PER_HOUR), command, ctx({ schedule: 'sch-1' }), {
        scheduled: { approved: true },
      });
      expect(result.status).toBe('queued');
      expect(cardsFor(command)).toEqual([]);
      const jobs = await jobFor(command);
      expect(jobs.map((j) => j.data.command.kind)).toEqual(['start']);
      // Without the schedule's approval such a start waits for an approver.
      const asked = await acceptRequest(withPolicy(ABOVE_10_PER_HOUR), start(), ctx());
      expect(asked.status).toBe('pending-approval');
    });

    it('within what was agreed needs no card even for what the policy always sends to approvers', async () => {
      const command = rm();
      const result = await acceptRequest(stack.deps, command, ctx({ schedule: 'sch-2' }), {
        scheduled: { approved: true },
      });
      expect(result.status).toBe('queued');
      expect(cardsFor(command)).toEqual([]);
    });

    it("within what was agreed still waits for a budget's owners, for the budget's reason alone", async () => {
      const command = start();
      const result = await acceptRequest(
        withPolicy(budgetPolicy(false)),
        command,
        ctx({ schedule: 'sch-4' }),
        {
          scheduled: { approved: true },
        },
      );
      if (result.status !== 'pending-approval')
        throw new Error(`expected pending-approval, got ${result.status}`);
      expect(result.notice).toMatch(
        /needs an approval: Budget ml: forecast \$[\d,]+ of \$1 with this request\. I sent it to <#C0APPROVE>, where the budget's owners/,
      );
      expect(await jobFor(command)).toEqual([]);
    });

    it('above it asks an approver, for the reason given first, whatever it costs', async () => {
      const ask = 'The schedule starts more machines than its approver agreed to.';
      const command = stop();
      const extra: AcceptExtra = { scheduled: { ask } };
      const result = await acceptRequest(
        withPolicy(WITH_CARD_CHANNEL),
        command,
        ctx({ schedule: 'sch-3' }),
        extra,
      );
      if (result.status !== 'pending-approval')
        throw new Error(`expected pending-approval, got ${result.status}`);
      expect(result.notice).toContain(`needs an approval: ${ask} I sent it to <#${APPROVALS}>`);
      expect(await jobFor(command)).toEqual([]);
    });
  });

  // Degraded mode; not named so: vitest.mutation.config.ts leaves out tests named "degraded mode".
  describe('Redis without a replica', () => {
    const NO_REPLICA = 'the Redis primary has no replica';
    const degraded = (why: string | undefined) => withPolicy(NO_CARD_CHANNEL, { degraded: async () => why });

    it('refuses a change in one sentence naming the cause, audits it, and queues nothing', async () => {
      const command = stop();
      const result = await acceptRequest(degraded(NO_REPLICA), command, ctx());
      const message = degradedRefusal(NO_REPLICA);
      expect(message.startsWith(':warning: ')).toBe(true);
      expect(result).toEqual({
        status: 'rejected',
        message,
        plain: message.slice(':warning: '.length),
        field: 'channel',
      });
      expect(await jobFor(command)).toEqual([]);
      const entries = await entriesOf({ operation: 'stop', target: instanceOf(command) });
      expect(entries.map((e) => e.outcome)).toEqual(['rejected']);
    });

    it('still answers a lookup', async () => {
      const ls = parseCommand('ls');
      if (!ls.ok) throw new Error(ls.error.message);
      const result = await acceptRequest(
        degraded(NO_REPLICA),
        ls.command,
        ctx({ requestedAt: Date.now() + 1 }),
      );
      expect(result.status).toBe('queued');
    });

    it('takes changes again once a replica is back, or when the check itself fails', async () => {
      expect((await acceptRequest(degraded(undefined), stop(), ctx())).status).toBe('queued');
      const failing = withPolicy(NO_CARD_CHANNEL, {
        degraded: async () => {
          throw new Error('INFO replication did not answer');
        },
      });
      expect((await acceptRequest(failing, stop(), ctx())).status).toBe('queued');
    });
  });

  it('refuses a person over the rate limit before anything else, and queues nothing', async () => {
    const policy = policyOf(
      'accept-outcomes-rate.yaml',
      'default_role: operator',
      'rate_limits:',
      '  per_user: { requests: 1, per: 1h }',
      '  per_channel: { requests: 0 }',
    );
    const deps = withPolicy(policy);
    const limited: AcceptDeps = {
      ...deps,
      guardrails: {
        ...deps.guardrails,
        rateLimiter: createRateLimiter(stack.redis, `${stack.store.prefix}:rl`, policy.rateLimits),
      },
    };
    const first = stop();
    const second = stop();
    const who = ctx({ userId: 'U0RATE' });
    expect((await acceptRequest(limited, first, who)).status).toBe('queued');
    const refused = await acceptRequest(limited, second, ctx({ userId: 'U0RATE' }));
    expect(refused.status).toBe('refused');
    expect(refused.status === 'refused' && refused.message).toMatch(/try again/i);
    expect(await jobFor(second)).toEqual([]);
  });

  describe('a create over a budget', () => {
    const create = () => {
      const parsed = parseCommand(`create ${next()} ${H100}`);
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.command;
    };

    it('is refused under a hard cap in one sentence, on the type field, audited, and nothing is queued', async () => {
      const command = create();
      const result = await acceptRequest(withPolicy(budgetPolicy(true)), command, ctx());
      if (result.status !== 'rejected') throw new Error(`expected rejected, got ${result.status}`);
      expect(result.message).toMatch(/^:no_entry: \S/);
      expect(result.plain).toBe(result.message.slice(':no_entry: '.length));
      expect(result.field).toBe('type');
      expect(await stack.jobs()).not.toContainEqual(expect.objectContaining({ name: 'create' }));
      const entries = await entriesOf({ operation: 'create', outcome: 'refused' });
      expect(entries).toHaveLength(1);
    });

    it("waits for the budget's owners, named with the budget's reason before the policy's", async () => {
      const command = create();
      // The channel's project is the budget's; the organisation's default project is another one.
      const result = await acceptRequest(
        withPolicy(budgetPolicy(false), { defaultProjectId: 'c0ffee00-0000-4000-8000-000000000000' }),
        command,
        ctx(),
      );
      if (result.status !== 'pending-approval')
        throw new Error(`expected pending-approval, got ${result.status}`);
      expect(result.notice).toMatch(
        /needs an approval: Budget ml: forecast \$[\d,]+ of \$1 with this request\. It costs about .+ I sent it to <#C0APPROVE>, where the budget's owners \(<@U0OWEN>, <@U0OLA>\) can approve or deny it until/,
      );
      const stored = await stack.guardrails.approvals.get(result.approvalId);
      expect(stored?.display?.owners).toEqual(['U0OWEN', 'U0OLA']);
      expect(stored?.display?.approvers).toBe("the budget's owners (<@U0OWEN>, <@U0OLA>)");
    });
  });

  it('audits a request naming a type that is not there as rejected, and queues nothing', async () => {
    const parsed = parseCommand('create odd-1 no-such-type.1x');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const result = await acceptRequest(stack.deps, parsed.command, ctx());
    expect(result.status).toBe('rejected');
    expect((await stack.jobs()).filter((j) => JSON.stringify(j.data.command).includes('odd-1'))).toEqual([]);
    const entries = await entriesOf({ operation: 'create', target: 'odd-1' });
    expect(entries.map((e) => e.outcome)).toEqual(['rejected']);
  });

  it('puts a queued request on the trail once, with its job, and shows that entry in the audit channel', async () => {
    const published: AuditEntry[] = [];
    const audit = createAudit(stack.redis, {
      prefix: stack.store.prefix,
      retentionSeconds: 3600,
      log: createLogger({ level: 'silent' }),
      publish: async (entry) => {
        published.push(entry);
      },
    });
    const deps: AcceptDeps = { ...stack.deps, guardrails: { ...stack.guardrails, audit } };
    const command = stop();
    const c = ctx();
    const result = await acceptRequest(deps, command, c);
    if (result.status !== 'queued') throw new Error(`expected queued, got ${result.status}`);
    const entries = await entriesOf({ operation: 'stop', target: instanceOf(command) });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      event: 'request',
      actor: 'U0ADA',
      outcome: 'queued',
      jobId: result.jobId,
    });
    expect(published).toEqual([entries[0]]);
    // The same request again finds the job: no second entry anywhere.
    expect((await acceptRequest(deps, command, c)).status).toBe('duplicate');
    expect(published).toHaveLength(1);
    expect(await entriesOf({ operation: 'stop', target: instanceOf(command) })).toHaveLength(1);
  });

  describe('a request the queue does not take', () => {
    it('says on the trail that it never started when the queue refused it', async () => {
      // The queue's own Redis, which dies: the add is refused before it leaves gpuops.
      const server = await startPrivateRedis();
      const dead = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
      dead.on('error', () => {});
      const queue = createQueue(dead, `{${stack.store.prefix}-dead}`);
      queue.on('error', () => {});
      await queue.waitUntilReady();
      await server.kill();
      await until('the queue connection to see its Redis gone', () => dead.status !== 'ready' || undefined);
      try {
        const command = stop();
        await expect(acceptRequest({ ...stack.deps, queue }, command, ctx())).rejects.toThrow(
          /Stream isn't writeable/,
        );
        const entries = await entriesOf({ operation: 'stop', target: instanceOf(command) });
        expect(entries.map((e) => [e.event, e.outcome])).toEqual([
          ['outcome', 'failed'],
          ['request', 'queued'],
        ]);
        expect(entries[0]?.parameters).toMatchObject({ detail: NOT_STARTED });
        expect(entries[0]?.jobId).toBe(entries[1]?.jobId);
      } finally {
        await queue.close().catch(() => {});
        dead.disconnect();
        await server.close();
      }
    });

    it('says nothing of the kind when the job may still run', async () => {
      const own = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1, enableOfflineQueue: false });
      own.on('error', () => {});
      const queue = createQueue(own, `{${stack.store.prefix}-maybe}`);
      queue.on('error', () => {});
      await queue.waitUntilReady();
      try {
        const command = stop();
        // The add went through; then the queue's connection is gone before the job could be taken back.
        const attempt = acceptRequest(
          {
            ...stack.deps,
            queue,
            replicated: async () => {
              own.disconnect();
              throw new Error('no replica took the write');
            },
          },
          command,
          ctx(),
        );
        await expect(attempt).rejects.toBeInstanceOf(MaybeQueuedError);
        const entries = await entriesOf({ operation: 'stop', target: instanceOf(command) });
        expect(entries.map((e) => e.outcome)).not.toContain('failed');
      } finally {
        await queue.close().catch(() => {});
        own.disconnect();
      }
    });
  });
});
