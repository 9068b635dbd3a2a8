import { approvalCard, slackDate, waitingMessage } from '../commands/approvals/render.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import {
  commandPath,
  deliveryOf,
  describeCommand,
  estimateCommand,
  type GpuCommand,
  type GpuCommandKind,
} from '../commands/registry.js';
import type { CommandCost } from '../commands/spec.js';
import type { JobContext, LeaseTerms, SealedInputs } from '../jobs/job-data.js';
import type { MessageRef } from '../jobs/message-ref.js';
import { jobIdFor } from '../jobs/queue.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import {
  type ApprovalNeed,
  approvalChannelFor,
  authorize,
  describeApprovers,
  groupsInPolicy,
  leaseFor,
  needsApproval,
} from '../policy/decide.js';
import type { Guardrails } from '../policy/guardrails.js';
import type { PolicyRole } from '../policy/policy-schema.js';
import { type CostEstimate, formatCost, type PriceBook } from '../pricing/cost.js';
import { escapeText } from '../render/job-message.js';
import { approvalIdFor } from '../store/approvals.js';
import { type AuditInput, auditFieldsOf } from '../store/audit.js';
import { type Catalog, readCatalog } from '../store/catalog-cache.js';
import { instanceTypeOf } from '../store/instance-types-seen.js';
import { type TargetProblem, targetInstance, targetProblem } from './check-target.js';
import {
  dedupeSeconds,
  type EnqueueDeps,
  type EnqueueResult,
  enqueueRequest,
  requestFingerprint,
} from './enqueue-request.js';

// The one door every request goes through, whatever it came from: the typed command, a form, or a
// button on a message (idle alerts, the waitlist). The guardrails live here, so no entry point can
// bypass them: who may run it (the policy's roles), whether it waits for an approver (its kind, its
// cost from the cached catalogue), and the audit trail of every request. docs/policy.md.

export interface AcceptDeps extends EnqueueDeps {
  /** The policy and its stores: the built-in defaults when there is no policy file, never absent. */
  readonly guardrails: Guardrails;
}

export interface Refused {
  readonly status: 'refused';
  /** One Slack mrkdwn sentence naming the role needed and how to get it. */
  readonly message: string;
  /** The same in plain text, for places that show no formatting (form field errors). */
  readonly plain: string;
  readonly role: PolicyRole;
  readonly needed: PolicyRole;
}

export interface PendingApproval {
  readonly status: 'pending-approval';
  readonly approvalId: string;
  /** Where the card went. */
  readonly approvalChannel: string;
  /** The card, unless Slack refused it (the notice then says so). */
  readonly card?: MessageRef;
  /** The requester's message in their channel (channel-delivered kinds). */
  readonly message?: MessageRef;
  /** What to tell the requester, ephemerally: why it waits, where it went, until when. */
  readonly notice: string;
  /**
   * With `deferPosts`: posts the card and the requester's message, after the acknowledgement. Resolves
   * with a corrected notice when the card could not be posted, else undefined. Never throws.
   */
  readonly followUp?: () => Promise<string | undefined>;
}

/** A request that would not run (no such instance, a type the cloud does not sell): nothing queued. */
export interface Rejected {
  readonly status: 'rejected';
  /** Slack mrkdwn: what is wrong and how to fix it. */
  readonly message: string;
  /** The same in plain text, for a form field. */
  readonly plain: string;
  readonly field: TargetProblem['field'];
}

export interface AcceptExtra {
  readonly sealed?: SealedInputs;
  /**
   * The caller answers Slack first (within its 3 s) and runs the result's `followUp` afterwards: no
   * Slack call is made before the request is durably queued or waiting for approval.
   */
  readonly deferPosts?: boolean;
}

/** What became of a request a person made, from any entry point (command, form, button). */
export type AcceptResult = EnqueueResult | Refused | PendingApproval | Rejected;

/** How long the listener waits for a fresh catalogue before sending a request on unchecked. */
const FRESH_CATALOG_WAIT_MS = 1_500;
const FRESH_CATALOG_POLL_MS = 100;

const REDIS_MS = 1_500;

/** Appends to the audit trail; a failure is logged, never the reason a request fails. */
async function record(deps: AcceptDeps, guardrails: Guardrails, input: AuditInput): Promise<void> {
  try {
    await withDeadline(guardrails.audit.append(input), REDIS_MS, 'Redis');
  } catch (err) {
    deps.log.warn({ err, operation: input.operation }, 'could not append to the audit trail');
  }
}

function requestAudit(command: GpuCommand, ctx: JobContext): Omit<AuditInput, 'outcome'> {
  return {
    event: 'request',
    actor: ctx.userId,
    ...auditFieldsOf(command),
    ...(ctx.projectId ? { project: ctx.projectId } : {}),
    channel: ctx.channelId,
  };
}

/**
 * Whether `userId` may run `kind` in `channelId`: undefined when allowed,
 * else the refusal. For the kinds the listener answers itself as well as for jobs.
 */
export async function checkAccess(
  deps: AcceptDeps,
  kind: GpuCommandKind,
  who: { readonly userId: string; readonly channelId: string },
): Promise<Refused | undefined> {
  const guardrails = deps.guardrails;
  const { policy } = guardrails;
  const userGroups = await deps.ports.groupsOf(who.userId, groupsInPolicy(policy));
  const auth = authorize({ policy, userId: who.userId, userGroups, channelId: who.channelId, kind });
  if (auth.allowed) return undefined;
  return {
    status: 'refused',
    message: auth.message,
    plain:
      `/gpu ${commandPath(kind)} needs the ${auth.needed} role, and you have ${auth.role}. ` +
      `Ask an admin to grant ${auth.needed} to you, to a user group you are in, or to this channel in the gpuops policy file.`,
    role: auth.role,
    needed: auth.needed,
  };
}

/** A request the listener answers itself (help, audit, approvals…): checked, and on the audit trail. */
export async function acceptDirect(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
): Promise<Refused | undefined> {
  const guardrails = deps.guardrails;
  const refused = await checkAccess(deps, command.kind, ctx);
  await record(deps, guardrails, {
    ...requestAudit(command, ctx),
    outcome: refused ? 'refused' : 'answered',
    ...(refused ? { parameters: { ...auditFieldsOf(command).parameters, needed: refused.needed } } : {}),
  });
  return refused;
}

interface Assessment {
  readonly cost?: CommandCost;
  readonly need: ApprovalNeed;
  readonly lease?: LeaseTerms;
  readonly capacity?: string;
  readonly project?: string;
}

const NOT_CACHED: CostEstimate = {
  known: false,
  reason: 'the price list is not cached yet (gpuops refreshes it every few minutes; try again shortly)',
};

/** What the request costs and whether it waits for an approver: from Redis only, never the cloud. */
async function assess(
  deps: AcceptDeps,
  guardrails: Guardrails,
  command: GpuCommand,
  ctx: JobContext,
): Promise<Assessment> {
  const { policy } = guardrails;
  const [cached, binding] = await Promise.all([
    withDeadline(readCatalog(deps.store, ctx.projectId), REDIS_MS, 'Redis'),
    withDeadline(deps.store.projectOf(ctx.channelId), REDIS_MS, 'Redis'),
  ]);
  const catalog: Catalog | undefined = cached?.catalog;
  const targetType =
    command.kind === 'start' || command.kind === 'stop'
      ? await withDeadline(
          instanceTypeOf(deps.store, ctx.projectId, command.instance, catalog),
          REDIS_MS,
          'Redis',
        )
      : undefined;
  const prices: PriceBook = { configurations: catalog?.configurations, pricing: policy.pricing };
  let cost = estimateCommand({ prices, command, ...(targetType ? { targetType } : {}) });
  if (cost && !catalog) {
    cost = { ...cost, estimate: NOT_CACHED };
    await askForCatalog(deps, ctx.projectId);
  }
  const need = needsApproval({
    policy,
    kind: command.kind,
    costPerHour: cost?.adds ? cost.estimate : undefined,
  });
  const estimate = cost?.estimate;
  const leasing =
    cost && (command.kind === 'create' || command.kind === 'start')
      ? leaseFor({ policy, costPerHour: cost.estimate })
      : undefined;
  const typeEntry =
    estimate?.known === true
      ? catalog?.instanceTypes.find((t) => t.name === estimate.instanceType)
      : undefined;
  const project = binding?.name
    ? `project ${binding.name} (${binding.projectId})`
    : ctx.projectId
      ? `project ${ctx.projectId}`
      : undefined;
  return {
    ...(cost ? { cost } : {}),
    need,
    ...(leasing
      ? {
          lease: {
            seconds: leasing.defaultSeconds,
            remindBeforeSeconds: leasing.remindBeforeSeconds,
            ...(estimate ? { cost: formatCost(estimate).slice(0, 200) } : {}),
          },
        }
      : {}),
    ...(typeEntry?.capacity !== undefined
      ? {
          capacity: `${typeEntry.capacity} machine(s) of ${typeEntry.name} available now (at ${new Date(catalog!.refreshedAt).toISOString().slice(11, 16)} UTC)`,
        }
      : {}),
    ...(project ? { project } : {}),
  };
}

/**
 * No prices cached: ask for them in the background, so the next request is priced (at most one such
 * refresh a minute). `now` asks for one of its own, for a check that waits on it.
 */
async function askForCatalog(
  deps: AcceptDeps,
  projectId: string | undefined,
  when: 'soon' | 'now' = 'soon',
): Promise<void> {
  const slot =
    when === 'now'
      ? `now-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`
      : `${Math.floor(Date.now() / 60_000)}`;
  await withDeadline(
    addSystemJob(
      deps.queue,
      { v: 1, system: 'catalog.refresh', ...(projectId ? { projectId } : {}) },
      `catalog-${jobIdFor(projectId ?? 'none')}-${slot}`,
    ),
    REDIS_MS,
    'the queue',
  ).catch((err: unknown) => deps.log.warn({ err }, 'could not ask for a catalogue refresh'));
}

/**
 * Before an approver sees it: the instance exists and the type is sold, judged from the cached
 * catalogue. A name the catalogue does not know may be new, so a refresh is asked for and awaited
 * briefly (Redis only: a worker reads the cloud), and only a listing made after the request can say it
 * does not exist; if none comes in time the request goes on unchecked rather than making anyone wait.
 */
async function checkTarget(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
): Promise<TargetProblem | undefined> {
  const pricing = deps.guardrails.policy.pricing;
  const ref = targetInstance(command);
  const remembered =
    ref !== undefined &&
    (await withDeadline(instanceTypeOf(deps.store, ctx.projectId, ref, undefined), REDIS_MS, 'Redis')) !==
      undefined;
  const read = () => withDeadline(readCatalog(deps.store, ctx.projectId), REDIS_MS, 'Redis');
  const cached = await read();
  const problem = cached ? targetProblem(command, cached.catalog, remembered, pricing) : undefined;
  // Types change seldom: the cached price list decides. An unknown instance may be seconds old.
  if (cached ? problem?.field !== 'instance' : ref === undefined) return problem;
  const asked = Date.now();
  await askForCatalog(deps, ctx.projectId, 'now');
  const until = asked + FRESH_CATALOG_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, FRESH_CATALOG_POLL_MS));
    const fresh = await read();
    if (fresh && fresh.catalog.refreshedAt >= asked) {
      return targetProblem(command, fresh.catalog, remembered, pricing);
    }
  }
  return undefined;
}

function slackError(err: unknown): string {
  return (err as { data?: { error?: string } }).data?.error ?? 'no answer';
}

/** Sends a request to its approvers: the request in Redis, the card, the requester's message. */
async function requestApproval(
  deps: AcceptDeps,
  guardrails: Guardrails,
  command: GpuCommand,
  ctx: JobContext,
  assessment: Assessment,
  extra: AcceptExtra,
): Promise<AcceptResult> {
  const { policy, approvals } = guardrails;
  const approvalId = approvalIdFor(ctx, command);
  // A double submission finds the first request instead of making a second card.
  const holder = await withDeadline(
    deps.store.claimRequest(requestFingerprint(command, ctx), approvalId, dedupeSeconds(command)),
    REDIS_MS,
    'Redis',
  );
  if (holder !== undefined) return { status: 'duplicate', jobId: holder };
  const approvalChannel = approvalChannelFor(policy, ctx.channelId);
  const { created, request } = await withDeadline(
    approvals.create({
      command,
      ctx,
      ...(assessment.cost ? { cost: assessment.cost.estimate } : {}),
      reasons: assessment.need.reasons,
      approvalChannel,
      expiresAfterSeconds: policy.approvals.expiresAfterSeconds,
      ...(assessment.lease
        ? {
            lease: {
              seconds: assessment.lease.seconds,
              remindBeforeSeconds: assessment.lease.remindBeforeSeconds,
            },
          }
        : {}),
      ...(extra.sealed ? { sealed: extra.sealed } : {}),
      display: {
        ...(assessment.project ? { project: assessment.project } : {}),
        ...(assessment.capacity ? { capacity: assessment.capacity } : {}),
        approvers: describeApprovers(policy, command.kind),
      },
    }),
    REDIS_MS,
    'Redis',
  );
  if (!created) return { status: 'duplicate', jobId: approvalId };

  const what = `\`${escapeText(describeCommand(command))}\``;
  const why = assessment.need.reasons.join(' ');
  const where = `<#${approvalChannel}>`;
  const sentNotice = `:raised_hand: ${what} needs an approval: ${why} I sent it to ${where}, where ${describeApprovers(policy, command.kind)} can approve or deny it until ${slackDate(request.expiresAt)}. You will see the decision on your request.`;
  const problemNotice = (problem: string) =>
    `:raised_hand: ${what} needs an approval: ${why} :warning: I could not post it to ${where} (Slack said "${problem}"): invite gpuops there. Approvers can still decide it with \`/gpu approvals\` until ${slackDate(request.expiresAt)}.`;

  // The card and the requester's message: after the acknowledgement when the caller defers its posts.
  const post = async () => {
    // The requester's message first: once the card is up, everything the approvers act on is there.
    let message: MessageRef | undefined;
    if (deliveryOf(command.kind) === 'channel') {
      try {
        message = await deps.ports.post(ctx.channelId, waitingMessage(request));
        if (message)
          await withDeadline(approvals.setRequesterMessage(approvalId, message), REDIS_MS, 'Redis');
      } catch (err) {
        deps.log.warn({ err, approvalId }, "could not post the requester's waiting message");
      }
    }
    let card: MessageRef | undefined;
    let cardProblem: string | undefined;
    try {
      card = await deps.ports.post(approvalChannel, approvalCard(request));
      if (card) await withDeadline(approvals.setCard(approvalId, card), REDIS_MS, 'Redis');
    } catch (err) {
      cardProblem = slackError(err);
      deps.log.warn({ err, approvalId, approvalChannel }, 'could not post an approval card');
    }
    return { card, message, cardProblem };
  };
  guardrails.onApproval?.('requested');
  await record(deps, guardrails, {
    ...requestAudit(command, ctx),
    parameters: {
      ...auditFieldsOf(command).parameters,
      ...(assessment.cost ? { cost: formatCost(assessment.cost.estimate) } : {}),
    },
    outcome: 'needs-approval',
    approvalId,
  });

  if (extra.deferPosts) {
    return {
      status: 'pending-approval',
      approvalId,
      approvalChannel,
      notice: sentNotice,
      followUp: async () => {
        const { cardProblem } = await post();
        return cardProblem ? problemNotice(cardProblem) : undefined;
      },
    };
  }
  const { card, message, cardProblem } = await post();
  return {
    status: 'pending-approval',
    approvalId,
    approvalChannel,
    ...(card ? { card } : {}),
    ...(message ? { message } : {}),
    notice: cardProblem ? problemNotice(cardProblem) : sentNotice,
  };
}

/**
 * Accepts a request: refused (with the role it needs), sent to approvers (with where it went), or
 * queued as exactly one job. Every outcome is on the audit trail.
 */
export async function acceptRequest(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: AcceptExtra = {},
): Promise<AcceptResult> {
  const guardrails = deps.guardrails;

  const refused = await checkAccess(deps, command.kind, ctx);
  if (refused) {
    await record(deps, guardrails, {
      ...requestAudit(command, ctx),
      parameters: { ...auditFieldsOf(command).parameters, role: refused.role, needed: refused.needed },
      outcome: 'refused',
    });
    return refused;
  }

  const assessment = await assess(deps, guardrails, command, ctx);
  if (assessment.need.required) {
    const problem = await checkTarget(deps, command, ctx);
    if (problem) {
      await record(deps, guardrails, { ...requestAudit(command, ctx), outcome: 'rejected' });
      return { status: 'rejected', ...problem };
    }
    return requestApproval(deps, guardrails, command, ctx, assessment, extra);
  }
  const result = await enqueueRequest(deps, command, ctx, {
    ...extra,
    ...(assessment.lease ? { lease: assessment.lease } : {}),
  });
  if (result.status === 'queued') {
    await record(deps, guardrails, {
      ...requestAudit(command, ctx),
      parameters: {
        ...auditFieldsOf(command).parameters,
        ...(assessment.cost ? { cost: formatCost(assessment.cost.estimate) } : {}),
      },
      outcome: 'queued',
      jobId: result.jobId,
    });
  }
  return result;
}
