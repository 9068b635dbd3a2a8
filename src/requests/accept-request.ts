import { leasedMachine } from '../commands/effects.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import {
  commandPath,
  effectsOf,
  estimateCommand,
  type GpuCommand,
  type GpuCommandKind,
  isCommandKind,
  isPriced,
  operationClassOf,
  specFor,
} from '../commands/registry.js';
import type { JobContext, StepRef } from '../jobs/job-data.js';
import { degradedRefusal, MaybeQueuedError } from '../jobs/replicated.js';
import { inSpan, tracingOn } from '../obs/trace-spans.js';
import { authorize, groupsInPolicy, leaseFor, needsApproval } from '../policy/decide.js';
import type { Guardrails } from '../policy/guardrails.js';
import type { PolicyRole } from '../policy/policy-schema.js';
import { type CostEstimate, formatCost, type PriceBook } from '../pricing/cost.js';
import { countNoun } from '../render/count-noun.js';
import { type Catalog, readCatalog } from '../store/catalog-cache.js';
import { type CatalogAndType, catalogAndTypeOf } from '../store/instance-types-seen.js';
import { stopSchedulesOn } from '../store/schedules.js';
import type { ProjectBinding } from '../store/store.js';
import {
  type AcceptDeps,
  type AcceptExtra,
  pricedRequestAudit,
  REDIS_MS,
  record,
  requestAudit,
  requestParameters,
} from './accept-kit.js';
import { checkBudgets } from './check-budget.js';
import { askForCatalog, type CatalogRead, checkTarget } from './check-names.js';
import type { TargetProblem } from './check-target.js';
import { type EnqueueResult, enqueueRequest, NOT_STARTED, requestJobId } from './enqueue-request.js';
import type { AccessDeadline } from './ports.js';
import { type Assessment, type PendingApproval, requestApproval } from './request-approval.js';
import { type RateLimited, takeRateLimit } from './take-rate-limit.js';

export type { AcceptDeps, AcceptExtra, PendingApproval, RateLimited };

// The one door every request goes through, whatever it came from: the typed command, a form, or a
// button on a message (idle alerts, the waitlist). The guardrails live here, so no entry point can
// bypass them: the rate limits, who may run it (the policy's roles; a channel's grant only for a
// request made in that channel's message), whether it waits for an approver (its kind, its cost from
// the cached catalogue), and the audit trail of every request. docs/policy.md.

export interface Refused {
  readonly status: 'refused';
  /** One Slack mrkdwn sentence naming the role needed and how to get it. */
  readonly message: string;
  /** The same in plain text, for places that show no formatting (form field errors). */
  readonly plain: string;
  readonly role: PolicyRole;
  readonly needed: PolicyRole;
}

type RoleGap = Pick<Refused, 'role' | 'needed'>;

/** A request that would not run (no such instance, a type the cloud does not sell): nothing queued. */
export interface Rejected {
  readonly status: 'rejected';
  /** Slack mrkdwn: what is wrong and how to fix it. */
  readonly message: string;
  /** The same in plain text, for a form field. */
  readonly plain: string;
  readonly field: TargetProblem['field'];
}

/** What became of a request a person made, from any entry point (command, form, button). */
export type AcceptResult = EnqueueResult | Refused | RateLimited | PendingApproval | Rejected;

/**
 * Whether `userId` may run `kind`: undefined when allowed, else the refusal. For the kinds the
 * listener answers itself as well as for jobs. A role granted to a channel counts only when `madeIn`
 * names it: the channel whose message the person typed or clicked in (docs/policy.md).
 */
export async function checkAccess(
  deps: AcceptDeps,
  kind: GpuCommandKind,
  who: {
    readonly userId: string;
    readonly madeIn?: string | undefined;
    readonly step?: StepRef | undefined;
  },
  deadline?: AccessDeadline,
): Promise<Refused | undefined> {
  const guardrails = deps.guardrails;
  const { policy } = guardrails;
  const userGroups = await deps.ports.groupsOf(who.userId, groupsInPolicy(policy), deadline);
  // A kind that makes another happen later (a schedule's stop) needs that kind's role as well.
  const acts = specFor(kind).actsAs;
  const kinds = acts !== undefined && isCommandKind(acts) ? [kind, acts] : [kind];
  const channel = who.madeIn !== undefined ? { channelId: who.madeIn } : {};
  for (const k of kinds) {
    // What happens later (a schedule's firing) is typed nowhere, so no channel's grant counts for it.
    const later = k !== kind;
    const auth = authorize({ policy, userId: who.userId, userGroups, ...(later ? {} : channel), kind: k });
    if (auth.allowed) continue;
    // Only the channel's grant would allow it: say that this grant does not reach the firings.
    if (later && authorize({ policy, userId: who.userId, userGroups, ...channel, kind: k }).allowed)
      return laterRefused(kind, k, auth);
    const ask =
      who.step !== undefined
        ? `Ask an admin to grant ${auth.needed}, in the gpuops policy file, to you or to a user group you are in; a channel's role does not count for a workflow step.`
        : who.madeIn === undefined
          ? `Ask an admin to grant ${auth.needed}, in the gpuops policy file, to you or to a user group you are in; a channel's role counts only for what is typed or clicked in that channel.`
          : `Ask an admin to grant ${auth.needed} to you, to a user group you are in, or to this channel in the gpuops policy file.`;
    return {
      status: 'refused',
      message: auth.message,
      plain: `/gpu ${commandPath(k)} needs the ${auth.needed} role, and you have ${auth.role}. ${ask}`,
      role: auth.role,
      needed: auth.needed,
    };
  }
  return undefined;
}

/** `kind` makes `later` happen on the person's own roles, which do not allow it. */
function laterRefused(kind: GpuCommandKind, later: GpuCommandKind, auth: RoleGap): Refused {
  const text = (b: string, c: string) =>
    `${c}/gpu ${commandPath(kind)}${c} makes ${c}/gpu ${commandPath(later)}${c} happen later, on your own roles (a channel's role does not count then): ` +
    `it needs the ${b}${auth.needed}${b} role, and yours is ${b}${auth.role}${b}. Ask an admin to grant ${auth.needed} to you or to a user group you are in, in the gpuops policy file.`;
  const { role, needed } = auth;
  return { status: 'refused', message: text('*', '`'), plain: text('', ''), role, needed };
}

/**
 * A request the listener answers itself (help, audit, approvals…): counted against the rate limits,
 * checked, and on the audit trail.
 */
export async function acceptDirect(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
  deadline?: AccessDeadline,
): Promise<Refused | RateLimited | undefined> {
  const guardrails = deps.guardrails;
  const limited = await takeRateLimit(deps, ctx);
  if (limited) return limited;
  const refused = await checkAccess(deps, command.kind, ctx, deadline);
  await record(deps, guardrails, {
    ...requestAudit(command, ctx),
    outcome: refused ? 'refused' : 'answered',
    ...(refused ? { parameters: { ...requestParameters(command, ctx), needed: refused.needed } } : {}),
  });
  return refused;
}

const NOT_CACHED: CostEstimate = {
  known: false,
  reason: 'the price list is not cached yet (gpuops refreshes it every few minutes; try again shortly)',
};

/**
 * What the request costs and whether it waits for an approver: from Redis only, never the cloud. With
 * it, the catalogue read it priced from (and the target it read it for), which the name check re-uses.
 */
async function assess(
  deps: AcceptDeps,
  guardrails: Guardrails,
  command: GpuCommand,
  ctx: JobContext,
  known: ProjectBinding | null | undefined,
): Promise<[Assessment, CatalogRead | undefined]> {
  const { policy } = guardrails;
  // A command that changes no spending (a listing, a key, a watch) needs no prices: none are read.
  // Commands priced by the machine they act on (start, stop, a scheduled start, a copy) name it in
  // their effects: its type is read with the price list.
  const effects = effectsOf(command);
  const priced = isPriced(command);
  const target = priced ? effects.target?.instance : undefined;
  const [read, binding] = await Promise.all([
    !priced
      ? ({} as CatalogAndType)
      : withDeadline<CatalogAndType>(
          target !== undefined
            ? catalogAndTypeOf(deps.store, ctx.projectId, target)
            : readCatalog(deps.store, ctx.projectId).then((cached) => (cached ? { cached } : {})),
          REDIS_MS,
          'Redis',
        ),
    known !== undefined ? known : withDeadline(deps.store.projectOf(ctx.channelId), REDIS_MS, 'Redis'),
  ]);
  const catalog: Catalog | undefined = read.cached?.catalog;
  const targetType = read.type;
  // A scheduled start costs the hours until its target's scheduled stops: they are read here.
  const stopSchedules =
    specFor(command.kind).actsAs === 'start'
      ? await withDeadline(
          stopSchedulesOn(deps.store, ctx.channelId, {
            instance: effects.target?.instance,
            tag: effects.tag,
          }),
          REDIS_MS,
          'Redis',
        )
      : undefined;
  const prices: PriceBook = { configurations: catalog?.configurations, pricing: policy.pricing };
  let cost = estimateCommand({
    prices,
    command,
    ...(targetType ? { targetType } : {}),
    ...(stopSchedules ? { stopSchedules } : {}),
  });
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
  // A machine it launches by name or starts is leased (a node pool's nodes have no name to stop).
  const leasing =
    cost && leasedMachine(effects) !== undefined
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
  const catalogRead = priced ? { ref: target, known: read } : undefined;
  const assessment: Assessment = {
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
          capacity: `${countNoun(typeEntry.capacity, 'machine')} of ${typeEntry.name} available now`,
          capacityAt: catalog!.refreshedAt,
        }
      : {}),
    ...(project ? { project } : {}),
  };
  return [assessment, catalogRead];
}

/**
 * A workflow step given no channel has nowhere to show an approval card unless the policy names an
 * approvals channel (without one the card goes to the request's channel).
 */
function noPlaceForCard(guardrails: Guardrails, ctx: JobContext): TargetProblem | undefined {
  if (ctx.step === undefined || ctx.channelId !== ctx.userId) return undefined;
  if (guardrails.policy.approvals.channel !== undefined) return undefined;
  const text =
    'This request needs an approval, and the step has no channel to show it in: give the step a channel for progress (approvers see the card there), or set approvals.channel in the gpuops policy.';
  return { message: text, plain: text, field: 'channel' };
}

/** A schedule's firing: within its approval it needs no other; above it, it needs one whatever it costs. */
function scheduledAssessment(assessment: Assessment, scheduled: AcceptExtra['scheduled']): Assessment {
  if (!scheduled) return assessment;
  if ('approved' in scheduled) return { ...assessment, need: { required: false, reasons: [] } };
  return { ...assessment, need: { required: true, reasons: [scheduled.ask, ...assessment.need.reasons] } };
}

/** A change while Redis has no replica: the refusal, in one sentence that names the cause. */
async function degradedNow(deps: AcceptDeps, command: GpuCommand): Promise<Rejected | undefined> {
  if (!deps.degraded || operationClassOf(command.kind) === 'read') return undefined;
  const why = await withDeadline(deps.degraded(), REDIS_MS, 'Redis').catch(() => undefined);
  if (!why) return undefined;
  const message = degradedRefusal(why);
  return { status: 'rejected', message, plain: message.replace(/^:warning: /, ''), field: 'channel' };
}

/**
 * Accepts a request: refused (over the rate limits, or with the role it needs), sent to approvers
 * (with where it went), or queued as exactly one job. Every outcome but a rate refusal is on the
 * audit trail. With tracing on, in the span `gpuops.accept` (docs/operations.md, "Traces").
 */
export function acceptRequest(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: AcceptExtra = {},
): Promise<AcceptResult> {
  // Tracing off: not even an attribute object on the acknowledgement path.
  if (!tracingOn()) return accept(deps, command, ctx, extra);
  return inSpan('gpuops.accept', { 'gpuops.command.kind': command.kind }, async (span) => {
    const result = await accept(deps, command, ctx, extra);
    span.set({
      'gpuops.outcome': result.status,
      'gpuops.request.id': 'jobId' in result ? result.jobId : undefined,
    });
    return result;
  });
}

async function accept(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: AcceptExtra,
): Promise<AcceptResult> {
  const guardrails = deps.guardrails;

  // Counted first, whatever the door, so that switching from typing to buttons or forms gains nothing.
  const limited = await takeRateLimit(deps, ctx);
  if (limited) return limited;

  const refused = await checkAccess(deps, command.kind, ctx, extra.deadline);
  if (refused) {
    await record(deps, guardrails, {
      ...requestAudit(command, ctx),
      parameters: { ...requestParameters(command, ctx), role: refused.role, needed: refused.needed },
      outcome: 'refused',
    });
    return refused;
  }
  // Degraded mode: a change whose job could die with the primary is refused before anything is stored.
  const degraded = await degradedNow(deps, command);
  if (degraded) {
    await record(deps, guardrails, { ...requestAudit(command, ctx), outcome: 'rejected' });
    return degraded;
  }

  const [assessed, catalogRead] = await assess(deps, guardrails, command, ctx, extra.binding);
  let assessment = scheduledAssessment(assessed, extra.scheduled);
  // Over a budget: its owners decide, or under its hard cap it is refused (docs/budgets.md).
  const budget = await withDeadline(
    checkBudgets(deps, guardrails, ctx.projectId ?? deps.defaultProjectId, assessment, Date.now()),
    REDIS_MS,
    'Redis',
  );
  if (budget.outcome === 'refuse') {
    await record(deps, guardrails, { ...requestAudit(command, ctx), outcome: 'refused' });
    const plain = budget.message.replace(/^:no_entry: /, '');
    return { status: 'rejected', message: budget.message, plain, field: 'type' };
  }
  if (budget.outcome === 'ask') {
    const reasons = [...budget.reasons, ...assessment.need.reasons];
    assessment = {
      ...assessment,
      need: { ...assessment.need, required: true, reasons },
      owners: budget.owners,
    };
  }
  // A name that is not there is told to the requester alone, before anything is queued or posted.
  const problem =
    (assessment.need.required ? noPlaceForCard(guardrails, ctx) : undefined) ??
    (await checkTarget(deps, command, ctx, catalogRead));
  if (problem) {
    await record(deps, guardrails, { ...requestAudit(command, ctx), outcome: 'rejected' });
    return { status: 'rejected', ...problem };
  }
  if (assessment.need.required) return requestApproval(deps, guardrails, command, ctx, assessment, extra);
  // The request's entry goes on the audit trail in the step that records the job (no round trip of
  // its own); a repeat or a replay, which records nothing, adds none.
  const jobId = requestJobId(command, ctx);
  const audit = guardrails.audit.prepare({
    ...pricedRequestAudit(command, ctx, assessment.cost?.estimate),
    outcome: 'queued',
    jobId,
  });
  let result: EnqueueResult;
  try {
    result = await enqueueRequest(deps, command, ctx, {
      ...extra,
      ...(assessment.lease ? { lease: assessment.lease } : {}),
      audit,
    });
  } catch (err) {
    // The entry may be stored already: the trail says the job never started, as its record does
    // (unless it may still run: then its own start and outcome follow).
    if (!(err instanceof MaybeQueuedError)) {
      await record(deps, guardrails, {
        ...requestAudit(command, ctx),
        event: 'outcome',
        outcome: 'failed',
        jobId,
        parameters: { detail: NOT_STARTED },
      });
    }
    throw err;
  }
  if (result.status === 'queued') audit.written(result.auditId ?? '');
  return result;
}
