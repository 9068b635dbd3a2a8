import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import { NotReplicatedError } from '../../src/jobs/replicated.js';
import { createLogger } from '../../src/log/logger.js';
import { driveApproved, sweepApproved } from '../../src/requests/drive-approved.js';
import { registerApprovalActions } from '../../src/slack/listeners/approval-actions.js';
import { createAudit } from '../../src/store/audit.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { type Asked, approvalKit } from './approval-kit.js';

// The approved half of a request's lifecycle (src/requests/drive-approved.ts) when something around it
// goes wrong: Slack refusing an edit, an audit trail that cannot be written, a record that vanished,
// a worker that took the job just before its deadline, a queued mark that was lost. Against real Redis,
// the real BullMQ queue and the fake Slack Web API through the production decision ports; what is
// checked is what people see: the messages, the card, the audit trail, the queue, the operator's log.

const APPROVALS = 'C0APPROVE';
const H100 = 'h100-hgx-80gb.8x';
const POLICY = policyOf(
  'lifecycle-faults.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
  '  threshold_per_hour: 20',
  '  lease: { required_above_per_hour: 20, default: 8h, remind_before: 30m }',
);

interface LogLine {
  readonly msg?: string;
  readonly approvalId?: string;
  readonly err?: { readonly message?: string };
}

describe('the approved-request lifecycle when something around it fails', () => {
  let stack: ListenerStack;
  const { lifecycle, ask, approvedLeftBehind } = approvalKit(() => stack, 'lf');
  beforeAll(async () => {
    stack = await startListenerStack(registerApprovalActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const reqKey = (id: string) => `${stack.store.prefix}:{approvals}:req:${id}`;
  const jobsOf = async (id: string) => (await stack.jobs()).filter((j) => j.id === id);
  const cardText = (a: Asked) => JSON.stringify(stack.slack.message(a.card.channel, a.card.ts)?.blocks);
  const mineText = (a: Asked) => stack.slack.message(a.mine.channel, a.mine.ts)?.text ?? '';
  const cardEdits = (a: Asked) =>
    stack.slack
      .callsTo('chat.update')
      .filter((c) => c.body.channel === a.card.channel && c.body.ts === a.card.ts).length;
  const logged = (msg: string): LogLine[] =>
    stack.logLines.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg === msg);
  const outcomesOf = async (id: string) =>
    (await stack.guardrails.audit.latest(100)).filter((e) => e.approvalId === id && e.event === 'outcome');

  it('tells the operator which approval’s card and requester Slack would not take, and still lapses it', async () => {
    const asked = await ask();
    const request = await approvedLeftBehind(asked, Date.now() - 1_000);
    // The requester's message is gone, no ephemeral or DM reaches her, and the card cannot be edited.
    stack.slack.failWith('chat.update', 'message_not_found', 1, { channel: 'C0GPU' });
    stack.slack.failWith('chat.postEphemeral', 'channel_not_found', 1, { channel: 'C0GPU' });
    stack.slack.failWith('chat.postMessage', 'channel_not_found', 1);
    stack.slack.failWith('chat.update', 'channel_not_found', 1, { channel: APPROVALS });
    expect(await driveApproved(lifecycle(), request)).toBe('lapsed');

    expect(logged('could not tell the requester the decision')).toEqual([
      expect.objectContaining({
        approvalId: asked.id,
        err: expect.objectContaining({ message: expect.any(String) }),
      }),
    ]);
    expect(logged('could not edit an approval card')).toEqual([
      expect.objectContaining({
        approvalId: asked.id,
        err: expect.objectContaining({ message: expect.any(String) }),
      }),
    ]);
    // The rest of the lapse went on: the audit trail says it failed, and nothing was queued.
    expect(await outcomesOf(asked.id)).toEqual([expect.objectContaining({ outcome: 'failed' })]);
    expect(await jobsOf(asked.id)).toHaveLength(0);
  });

  it('edits no card for a request that never had one, and logs no failed edit', async () => {
    const asked = await ask();
    const { card: _never, ...cardless } = await approvedLeftBehind(asked, Date.now() - 1_000);
    const edits = cardEdits(asked);
    expect(await driveApproved(lifecycle(), cardless)).toBe('lapsed');
    expect(mineText(asked)).toMatch(/^Not run \(approved by <@U0BOB>, never stored\): /);
    expect(cardEdits(asked)).toBe(edits);
    expect(logged('could not edit an approval card').filter((l) => l.approvalId === asked.id)).toEqual([]);
  });

  it('lapses a request whose outcome the audit trail cannot take, and tells the operator which', async () => {
    const asked = await ask();
    const request = await approvedLeftBehind(asked, Date.now() - 1_000);
    // An audit trail whose key holds something else: every append is refused by Redis.
    const prefix = `${stack.store.prefix}-broken`;
    await stack.redis.set(`${prefix}:audit`, 'not a stream');
    const audit = createAudit(stack.redis, {
      prefix,
      retentionSeconds: 3600,
      log: createLogger({ level: 'silent' }),
    });
    const broken = lifecycle({ guardrails: { ...stack.guardrails, audit } });
    expect(await driveApproved(broken, request)).toBe('lapsed');
    expect(mineText(asked)).toMatch(/^Not run /);
    expect(cardText(asked)).toContain(':x: *Not run*');
    expect(logged('could not audit a lapsed request')).toEqual([
      expect.objectContaining({
        approvalId: asked.id,
        err: expect.objectContaining({ message: expect.stringContaining('WRONGTYPE') }),
      }),
    ]);
  });

  it('tells the operator which approved request could not be queued, and the sweeper queues it later', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    const failed = await sweepApproved(
      lifecycle({
        replicated: async () => {
          throw new Error('the queue did not answer');
        },
      }),
    );
    expect(failed).toBe('approved requests: 0 queued, 1 still waiting, 0 lapsed');
    expect(logged('could not queue an approved request; the sweeper retries')).toEqual([
      expect.objectContaining({
        approvalId: asked.id,
        err: expect.objectContaining({ message: expect.any(String) }),
      }),
    ]);
    // A deployment without the sweeper metric sweeps all the same.
    expect(await sweepApproved(lifecycle({ countSwept: undefined }))).toBe(
      'approved requests: 1 queued, 0 still waiting, 0 lapsed',
    );
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('holds a request whose job no replica took, even when taking the job back worked', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    // The first wait for a replica fails; the one that confirms the job's removal succeeds.
    let waits = 0;
    const swept = await sweepApproved(
      lifecycle({
        replicated: async () => {
          waits += 1;
          if (waits === 1) throw new NotReplicatedError(0, 1);
        },
      }),
    );
    expect(swept).toBe('approved requests: 0 queued, 1 still waiting, 0 lapsed');
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(cardText(asked)).toContain(':hourglass_flowing_sand: *Waiting to run*');
    expect((await stack.guardrails.approvals.get(asked.id))?.held).toBe(true);
  });

  it('never lapses a request whose job is on the queue though its queued mark was lost, however late', async () => {
    const asked = await ask();
    expect(await driveApproved(lifecycle(), await approvedLeftBehind(asked, Date.now() + 60_000))).toBe(
      'queued',
    );
    // The mark lost: the record says queuing again, while the job waits on the queue.
    await stack.redis.hdel(reqKey(asked.id), 'stage', 'enqueuedAt');
    const request = (await stack.guardrails.approvals.get(asked.id))!;
    expect(request.stage).toBe('queuing');
    expect(await driveApproved(lifecycle(), request, Date.now() + 3_600_000)).toBe('queued');
    expect(cardText(asked)).toContain(':arrow_forward: *Queued*');
    expect(mineText(asked)).not.toMatch(/^Not run/);
    expect(await outcomesOf(asked.id)).toEqual([]);
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('lets a request a worker took just before its deadline run, and tells nobody it did not', async () => {
    const asked = await ask();
    const request = await approvedLeftBehind(asked, Date.now() - 1_000);
    // The worker marked it running (workers/process-command-job.ts) and its job has left the queue.
    expect(await stack.guardrails.approvals.advance(asked.id, 'running')).toBe('running');
    const edits = cardEdits(asked);
    expect(await driveApproved(lifecycle(), request)).toBe('queued');
    expect(mineText(asked)).not.toMatch(/^Not run/);
    expect(cardText(asked)).not.toContain('Not run');
    expect(cardEdits(asked)).toBe(edits + 1);
    expect(await outcomesOf(asked.id)).toEqual([]);
  });

  it('counts a request whose record vanished as gone, and leaves its card alone', async () => {
    // Its job on the queue already, then its record gone (expired, or removed by an operator).
    const queued = await ask();
    const onQueue = await approvedLeftBehind(queued, Date.now() + 60_000);
    expect(await driveApproved(lifecycle(), onQueue)).toBe('queued');
    const edits = cardEdits(queued);
    await stack.redis.del(reqKey(queued.id));
    expect(await driveApproved(lifecycle(), onQueue)).toBe('gone');
    expect(cardEdits(queued)).toBe(edits);

    // Past its deadline with no job: nothing lapses, nobody is told.
    const late = await ask();
    const overdue = await approvedLeftBehind(late, Date.now() - 1_000);
    await stack.redis.del(reqKey(late.id));
    const lateEdits = cardEdits(late);
    expect(await driveApproved(lifecycle(), overdue)).toBe('gone');
    expect(cardEdits(late)).toBe(lateEdits);
    expect(mineText(late)).not.toMatch(/^Not run/);
    expect(await outcomesOf(late.id)).toEqual([]);
  });

  it('queues an approved request with the reference to its sealed secret, never the secret', async () => {
    const secret = await stack.sealer.seal('#!/bin/sh\necho approved-secret');
    const asked = await ask({}, { sealed: { userData: { sealedRef: secret.sealedRef } } });
    const request = await approvedLeftBehind(asked, Date.now() + 60_000);
    expect(await driveApproved(lifecycle(), request)).toBe('queued');
    const [job] = await jobsOf(asked.id);
    // The worker unseals it when the job runs; until then only the reference is on the queue.
    expect(job?.data.sealed).toEqual({ userData: { sealedRef: secret.sealedRef } });
    expect(JSON.stringify(job?.data)).not.toContain('approved-secret');
    expect(await stack.sealer.unseal(secret)).toBe('#!/bin/sh\necho approved-secret');
  });

  it('queues an approved costly machine with its lease and the cost its reminder shows', async () => {
    await stack.machines();
    const asked = await ask({
      command: {
        kind: 'create',
        modal: false,
        name: 'lf-leased',
        type: H100,
        preemptible: false,
        ephemeral: false,
        filesystems: [],
        tags: {},
      } as unknown as GpuCommand,
    });
    expect(await driveApproved(lifecycle(), await approvedLeftBehind(asked, Date.now() + 60_000))).toBe(
      'queued',
    );
    const [job] = await jobsOf(asked.id);
    expect(job?.data.lease).toEqual({
      seconds: 8 * 3600,
      remindBeforeSeconds: 30 * 60,
      cost: '$23.12/h · $554.88/day',
    });
  });
});
