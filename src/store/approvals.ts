import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import {
  type JobContext,
  type QueuedCommand,
  queuedCommandSchema,
  RESPONSE_URL_LIFETIME_MS,
  type SealedInputs,
} from '../jobs/job-data.js';
import { type MessageRef, messageRefSchema } from '../jobs/message-ref.js';
import type { CostEstimate } from '../pricing/cost.js';
import {
  APPROVED_STAGES,
  type ApprovalDisplay,
  type ApprovalRequest,
  type ApprovalState,
  type ApprovedStage,
  fromFields,
  fromHash,
  requestDataSchemaFor,
  type UnpostedPart,
} from './approval-record.js';
import { withScripts } from './approval-scripts.js';
import type { AuditInput } from './audit.js';

// Approval requests in Redis. A request moves pending → approved | denied | expired exactly once: the
// transition is one Lua script, so however many people click at once (and however many web replicas
// receive the clicks) one click wins and every other sees the decision already made.
//
// Keys share the hash tag {approvals}, so the script's keys live in one Redis Cluster slot:
//   <prefix>:{approvals}:req:<id>   hash: data (JSON), state, expiresAt, decision, card, requesterMessage,
//                                   enqueuedAt (ms: the approved job reached the queue), audit (the
//                                   decision's audit entry until it is on the trail), unposted (what
//                                   Slack has not taken yet: message,card), postClaimedAt and
//                                   postLease (ms: who posts them, see claimPosting)
//   <prefix>:{approvals}:pending    sorted set of pending ids, scored by expiresAt (ms)
//   <prefix>:{approvals}:queuing    sorted set of approved ids whose job is not known to be on the
//                                   queue yet (the enqueue intent), scored by their deadline (runBy, ms)
// An approved request also has stage (queuing | queued | running | lapsed), runBy and claimedAt.

// What a stored request is, and how it reads back, is in approval-record.ts.
export {
  APPROVAL_STATES,
  APPROVED_STAGES,
  type ApprovalDecision,
  type ApprovalDisplay,
  type ApprovalRequest,
  type ApprovalState,
  type ApprovedStage,
  UNPOSTED_PARTS,
  type UnpostedPart,
} from './approval-record.js';

/** Who closed a request that expired: not a person. */
export const SYSTEM_ACTOR = 'gpuops';

export interface NewApproval<C extends QueuedCommand = QueuedCommand> {
  readonly command: C;
  readonly ctx: JobContext;
  readonly cost?: CostEstimate;
  readonly reasons: readonly string[];
  readonly approvalChannel: string;
  /** From the policy's approvals.expires_after. */
  readonly expiresAfterSeconds: number;
  readonly lease?: { readonly seconds: number; readonly remindBeforeSeconds: number };
  readonly sealed?: SealedInputs;
  readonly display?: ApprovalDisplay;
  /** What is to be posted for it (the requester's message, the card), recorded with it. */
  readonly unposted?: readonly UnpostedPart[];
  /**
   * How long its maker holds the claim on posting `unposted` from its creation (see claimPosting); none
   * when absent: whoever claims first posts.
   */
  readonly makerClaimMs?: number;
  /** Default Date.now(). */
  readonly now?: number;
}

export type DecideResult<C extends QueuedCommand = QueuedCommand> =
  /** This call made the transition. */
  | { readonly outcome: 'decided'; readonly request: ApprovalRequest<C> }
  /** Someone decided first (or it was closed): `request` shows their decision. Nothing changed. */
  | { readonly outcome: 'already-decided'; readonly request: ApprovalRequest<C> }
  /** Approve/deny after the expiry time: refused; close it with state 'expired' (or let expireDue). */
  | { readonly outcome: 'expired'; readonly request: ApprovalRequest<C> }
  /** An 'expired' decision before the expiry time: refused. */
  | { readonly outcome: 'not-due'; readonly request: ApprovalRequest<C> }
  | { readonly outcome: 'not-found' };

export interface Approvals<C extends QueuedCommand = QueuedCommand> {
  /** Stores a new pending request; the same request made twice returns the first (created: false). */
  create(input: NewApproval<C>): Promise<{ readonly created: boolean; readonly request: ApprovalRequest<C> }>;
  get(id: string): Promise<ApprovalRequest<C> | undefined>;
  /** Pending requests not yet past their expiry, oldest first. */
  listPending(options?: { readonly now?: number; readonly limit?: number }): Promise<ApprovalRequest<C>[]>;
  /**
   * How many requests wait: for a decision (pending, not past their expiry) and, approved, for their
   * job to be queued (the sweeper's index). Two cheap reads, for gpuops_approvals_waiting.
   */
  countWaiting(now?: number): Promise<{ readonly decision: number; readonly queue: number }>;
  /** Pending requests a person may decide; `mayDecide` applies the policy (decide.ts mayApprove). */
  listPendingFor(options: {
    readonly mayDecide: (request: ApprovalRequest<C>) => boolean;
    readonly now?: number;
    readonly limit?: number;
  }): Promise<ApprovalRequest<C>[]>;
  setCard(id: string, ref: MessageRef): Promise<void>;
  /**
   * Records the requester's "Waiting for approval" message, only while the request is pending: false
   * when it was decided or expired first (its decision then had no message to edit, and its job posts
   * its own), so the caller takes back a message that would say it still waits.
   */
  setRequesterMessage(id: string, ref: MessageRef): Promise<boolean>;
  /**
   * Claims a pending request's unposted messages for `leaseMs`: true for the one caller that posts them
   * (the request's maker, or a sweep), so nothing is posted twice. The maker passes `madeAt` (the
   * request's createdAt) and gets the claim it was given at creation, unless it lapsed and a sweep took
   * it; a sweep passes none and gets it once nobody holds it.
   */
  claimPosting(id: string, leaseMs: number, now?: number, madeAt?: number): Promise<boolean>;
  /** What is still unposted after an attempt (nothing: none); ends the claim. */
  setUnposted(id: string, parts: readonly UnpostedPart[]): Promise<void>;
  /** Pending requests with something still unposted, oldest first. */
  listUnposted(now?: number): Promise<ApprovalRequest<C>[]>;
  /** Records that the approved request's job is in the queue (nothing if the request is gone). */
  setEnqueued(id: string, at?: number): Promise<void>;
  /**
   * Moves an approved request on (queuing → queued → running, or queuing → lapsed) in one atomic step;
   * returns its stage after the call (`not-approved` for anything else). A lapsed request never runs,
   * and one queued or running never lapses.
   */
  advance(
    id: string,
    to: Exclude<ApprovedStage, 'queuing'>,
    at?: number,
  ): Promise<ApprovedStage | 'not-approved'>;
  /** Its messages now say that its job waits for a replica (told once, not on every sweep). */
  markHeld(id: string): Promise<void>;
  /** Claims an approved request's open enqueue intent for `leaseMs`: true for the one caller that acts on it. */
  claimEnqueue(id: string, leaseMs: number, now?: number): Promise<boolean>;
  /** Gives up a claim once its attempt is over, so the next sweep may try at once. */
  releaseEnqueue(id: string): Promise<void>;
  /** Approved requests whose job is not known to be queued, soonest deadline first. */
  listQueuing(limit?: number): Promise<{ readonly id: string; readonly runBy: number }[]>;
  /** The one atomic transition out of pending. */
  decide(
    id: string,
    decision: {
      readonly state: Exclude<ApprovalState, 'pending'>;
      readonly by: string;
      readonly at?: number;
      readonly reason?: string;
      /** Its audit entry, stored in the same atomic step as the decision (see auditWritten). */
      readonly audit?: AuditInput;
      /** An approval's deadline to reach the queue: stored with it as its enqueue intent. */
      readonly runBy?: number;
    },
  ): Promise<DecideResult<C>>;
  /** The decision's audit entry is on the audit trail: forget the copy kept with the decision. */
  auditWritten(id: string): Promise<void>;
  /** Closes every pending request whose expiry time has come; returns those this call closed. */
  expireDue(now?: number): Promise<ApprovalRequest<C>[]>;
}

export interface ApprovalsOptions<C extends QueuedCommand = QueuedCommand> {
  /** The commands' schema (the registry's); by default any command with a kind. */
  readonly command?: z.ZodType<C>;
  /** Key prefix, as the Store's (default `gpuops`). */
  readonly prefix?: string;
  /** How long a request is kept after its expiry time, decided or not (default 30 days). */
  readonly keepForSeconds?: number;
}

/** Deterministic: the same request (same person, channel, time and command) gets the same id. No ':'. */
export function approvalIdFor(ctx: JobContext, command: QueuedCommand): string {
  const parts = [
    'approval',
    ctx.teamId,
    ctx.channelId,
    ctx.userId,
    String(ctx.requestedAt),
    JSON.stringify(command),
  ];
  return `apr-${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 24)}`;
}

export function createApprovals<C extends QueuedCommand = QueuedCommand>(
  redis: Redis,
  options: ApprovalsOptions<C> = {},
): Approvals<C> {
  const requestDataSchema = requestDataSchemaFor(
    options.command ?? (queuedCommandSchema as unknown as z.ZodType<C>),
  );
  const prefix = options.prefix ?? 'gpuops';
  const keepMs = (options.keepForSeconds ?? 30 * 86_400) * 1000;
  const r = withScripts(redis);
  const reqKey = (id: string) => `${prefix}:{approvals}:req:${id}`;
  const pendingKey = `${prefix}:{approvals}:pending`;
  const queuingKey = `${prefix}:{approvals}:queuing`;
  // A response_url is a bearer capability that Slack honours for 30 minutes: it is kept beside the
  // record in a key that expires with it, never in the record, which stays for 30 days.
  const urlKey = (id: string) => `${prefix}:{approvals}:url:${id}`;
  const withUrl = async (request: ApprovalRequest<C> | undefined) => {
    if (!request || request.ctx.responseUrl !== undefined) return request;
    const url = await redis.get(urlKey(request.id));
    return url ? { ...request, ctx: { ...request.ctx, responseUrl: url } } : request;
  };

  const get = async (id: string) => withUrl(fromFields(requestDataSchema, await redis.hgetall(reqKey(id))));

  const decide: Approvals<C>['decide'] = async (id, decision) => {
    const at = decision.at ?? Date.now();
    const stored = {
      by: decision.by,
      at,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    };
    const [status, ...flat] = await r.gpuopsApprovalDecide(
      reqKey(id),
      pendingKey,
      queuingKey,
      decision.state,
      JSON.stringify(stored),
      String(at),
      id,
      decision.audit ? JSON.stringify(decision.audit) : '',
      decision.runBy !== undefined ? String(decision.runBy) : '',
    );
    if (status === 'not-found') return { outcome: 'not-found' };
    const request = await withUrl(fromHash(requestDataSchema, flat));
    if (!request) return { outcome: 'not-found' };
    if (
      status === 'decided' ||
      status === 'already-decided' ||
      status === 'expired' ||
      status === 'not-due'
    ) {
      return { outcome: status, request };
    }
    throw new Error(`unexpected answer from the approval script: ${status}`);
  };

  const listPending: Approvals<C>['listPending'] = async (opts = {}) => {
    const now = opts.now ?? Date.now();
    // Score > now: expiry is due at expiresAt itself.
    const ids = await redis.zrangebyscore(pendingKey, `(${now}`, '+inf', 'LIMIT', 0, opts.limit ?? 200);
    if (ids.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hgetall(reqKey(id));
    const results = (await pipeline.exec()) ?? [];
    return results
      .flatMap(([err, fields]) => {
        const request = err ? undefined : fromFields(requestDataSchema, fields as Record<string, string>);
        return request && request.state === 'pending' ? [request] : [];
      })
      .sort((a, b) => a.createdAt - b.createdAt);
  };

  return {
    async create(input) {
      const now = input.now ?? Date.now();
      const id = approvalIdFor(input.ctx, input.command);
      const expiresAt = now + Math.round(input.expiresAfterSeconds * 1000);
      const { responseUrl, ...storedCtx } = input.ctx;
      const data = requestDataSchema.parse({
        v: 1,
        id,
        kind: input.command.kind,
        command: input.command,
        ctx: storedCtx,
        ...(input.cost ? { cost: input.cost } : {}),
        reasons: [...input.reasons],
        requester: input.ctx.userId,
        approvalChannel: input.approvalChannel,
        createdAt: now,
        expiresAt,
        ...(input.lease ? { lease: input.lease } : {}),
        ...(input.sealed ? { sealed: input.sealed } : {}),
        ...(input.display ? { display: input.display } : {}),
      });
      const existing = await r.gpuopsApprovalCreate(
        reqKey(id),
        pendingKey,
        JSON.stringify(data),
        String(expiresAt),
        String(expiresAt + keepMs),
        id,
        (input.unposted ?? []).join(','),
        ...(input.makerClaimMs !== undefined ? [String(now), String(input.makerClaimMs)] : []),
      );
      if (existing) {
        const request = await withUrl(fromHash(requestDataSchema, existing));
        if (request) return { created: false, request };
      }
      const request = fromFields(requestDataSchema, { data: JSON.stringify(data), state: 'pending' });
      if (!request) throw new Error('an approval request could not be read back');
      const usable = responseUrl ? RESPONSE_URL_LIFETIME_MS - (now - input.ctx.requestedAt) : 0;
      if (responseUrl && usable > 0) {
        await redis.set(urlKey(id), responseUrl, 'PX', Math.round(usable));
        return { created: true, request: { ...request, ctx: { ...request.ctx, responseUrl } } };
      }
      return { created: true, request };
    },

    get,

    listPending,

    async listPendingFor(opts) {
      const all = await listPending({
        ...(opts.now !== undefined ? { now: opts.now } : {}),
        ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      });
      return all.filter((request) => opts.mayDecide(request));
    },

    async setCard(id, ref) {
      await r.gpuopsApprovalSet(reqKey(id), 'card', JSON.stringify(messageRefSchema.parse(ref)));
    },

    async setRequesterMessage(id, ref) {
      const ok = await r.gpuopsApprovalSetPending(
        reqKey(id),
        'requesterMessage',
        JSON.stringify(messageRefSchema.parse(ref)),
      );
      return ok === 1;
    },

    async claimPosting(id, leaseMs, now = Date.now(), madeAt) {
      const maker = madeAt !== undefined ? [String(madeAt)] : [];
      return (await r.gpuopsApprovalPostClaim(reqKey(id), String(now), String(leaseMs), ...maker)) === 1;
    },

    async setUnposted(id, parts) {
      await r.gpuopsApprovalPosted(reqKey(id), parts.join(','));
    },

    async listUnposted(now = Date.now()) {
      return (await listPending({ now })).filter((request) => (request.unposted?.length ?? 0) > 0);
    },

    async setEnqueued(id, at = Date.now()) {
      await r.gpuopsApprovalSet(reqKey(id), 'enqueuedAt', String(at));
    },

    async advance(id, to, at = Date.now()) {
      const stage = await r.gpuopsApprovalStage(reqKey(id), queuingKey, to, String(at), id);
      return (APPROVED_STAGES as readonly string[]).includes(stage)
        ? (stage as ApprovedStage)
        : 'not-approved';
    },

    async markHeld(id) {
      await r.gpuopsApprovalSet(reqKey(id), 'held', '1');
    },

    async claimEnqueue(id, leaseMs, now = Date.now()) {
      return (await r.gpuopsApprovalClaim(reqKey(id), queuingKey, String(now), String(leaseMs))) === 1;
    },

    async releaseEnqueue(id) {
      await r.gpuopsApprovalSet(reqKey(id), 'claimedAt', '0');
    },

    async countWaiting(now = Date.now()) {
      const [decision, queue] = await Promise.all([
        redis.zcount(pendingKey, `(${now}`, '+inf'),
        redis.zcard(queuingKey),
      ]);
      return { decision, queue };
    },

    async listQueuing(limit = 100) {
      const flat = await redis.zrange(queuingKey, '0', String(limit - 1), 'WITHSCORES');
      const out: { id: string; runBy: number }[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push({ id: flat[i]!, runBy: Number(flat[i + 1]) });
      return out;
    },

    decide,

    async auditWritten(id) {
      await redis.hdel(reqKey(id), 'audit');
    },

    async expireDue(now = Date.now()) {
      const due = await redis.zrangebyscore(pendingKey, '-inf', now);
      const closed: ApprovalRequest<C>[] = [];
      for (const id of due) {
        const result = await decide(id, { state: 'expired', by: SYSTEM_ACTOR, at: now });
        if (result.outcome === 'decided') closed.push(result.request);
        // A request whose hash has gone (kept past its time) must not stay in the index forever.
        if (result.outcome === 'not-found') await redis.zrem(pendingKey, id);
      }
      return closed;
    },
  };
}
