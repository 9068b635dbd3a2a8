import { withDeadline } from '../commands/kit/with-deadline.js';
import {
  commandPath,
  estimateCommand,
  type GpuCommand,
  type GpuCommandKind,
  isCommandKind,
  referencesOf,
  specFor,
} from '../commands/registry.js';
import type { JobContext, StepRef } from '../jobs/job-data.js';
import { jobIdFor } from '../jobs/queue.js';
import { MaybeQueuedError } from '../jobs/replicated.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import { authorize, groupsInPolicy, leaseFor, needsApproval } from '../policy/decide.js';
import type { Guardrails } from '../policy/guardrails.js';
import type { PolicyRole } from '../policy/policy-schema.js';
import { type CostEstimate, formatCost, type PriceBook } from '../pricing/cost.js';
import { type Catalog, readCatalog } from '../store/catalog-cache.js';
import { type CatalogAndType, catalogAndTypeOf, instanceTypeOf } from '../store/instance-types-seen.js';
import { listSchedules, stopSchedulesOn } from '../store/schedules.js';
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
import { mayBeNew, type TargetProblem, targetInstance, targetProblem } from './check-target.js';
import { type EnqueueResult, enqueueRequest, NOT_STARTED, requestJobId } from './enqueue-request.js';
import { type Assessment, type PendingApproval, requestApproval } from './request-approval.js';

export type { AcceptDeps, AcceptExtra, PendingApproval };

// The one door every request goes through, whatever it came from: the typed command, a form, or a
// button on a message (idle alerts, the waitlist). The guardrails live here, so no entry point can
// bypass them: who may run it (the policy's roles), whether it waits for an approver (its kind, its
// cost from the cached catalogue), and the audit trail of every request. docs/policy.md.

export interface Refused {
  readonly status: 'refused';
  /** One Slack mrkdwn sentence naming the role needed and how to get it. */
  readonly message: string;
  /** The same in plain text, for places that show no formatting (form field errors). */
  readonly plain: string;
  readonly role: PolicyRole;
  readonly needed: PolicyRole;
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

/** What became of a request a person made, from any entry point (command, form, button). */
export type AcceptResult = EnqueueResult | Refused | PendingApproval | Rejected;

/** How long the listener waits for a fresh catalogue before sending a request on unchecked. */
const FRESH_CATALOG_WAIT_MS = 1_500;
const FRESH_CATALOG_POLL_MS = 100;

/**
 * Whether `userId` may run `kind` in `channelId`: undefined when allowed,
 * else the refusal. For the kinds the listener answers itself as well as for jobs.
 */
export async function checkAccess(
  deps: AcceptDeps,
  kind: GpuCommandKind,
  who: { readonly userId: string; readonly channelId: string; readonly step?: StepRef | undefined },
): Promise<Refused | undefined> {
  const guardrails = deps.guardrails;
  const { policy } = guardrails;
  const userGroups = await deps.ports.groupsOf(who.userId, groupsInPolicy(policy));
  // A workflow step's channel is an input its builder chose, not a place the person acts in: a role
  // granted to that channel never applies to a step (docs/workflows.md).
  const channelId = who.step === undefined ? who.channelId : undefined;
  // A kind that makes another happen later (a schedule's stop) needs that kind's role as well.
  const acts = specFor(kind).actsAs;
  const kinds = acts !== undefined && isCommandKind(acts) ? [kind, acts] : [kind];
  for (const k of kinds) {
    const auth = authorize({
      policy,
      userId: who.userId,
      userGroups,
      ...(channelId !== undefined ? { channelId } : {}),
      kind: k,
    });
    if (auth.allowed) continue;
    const ask =
      channelId === undefined
        ? `Ask an admin to grant ${auth.needed}, in the gpuops policy file, to you or to a user group you are in; a channel's role does not count for a workflow step.`
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
    ...(refused ? { parameters: { ...requestParameters(command, ctx), needed: refused.needed } } : {}),
  });
  return refused;
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
  known: ProjectBinding | null | undefined,
): Promise<Assessment> {
  const { policy } = guardrails;
  // A command that changes no spending (a listing, a key, a watch) needs no prices: none are read.
  // Commands priced by the machine they act on (start, stop, a scheduled start) name it: its type is
  // read with the price list.
  const priced = specFor(command.kind).cost !== undefined;
  const target = priced ? targetInstance(command) : undefined;
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
            instance: targetInstance(command),
            tag: 'tag' in command ? command.tag : undefined,
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
          capacity: `${typeEntry.capacity} machine(s) of ${typeEntry.name} available now`,
          capacityAt: catalog!.refreshedAt,
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
 * Before it is queued or an approver sees it: the names it gives exist and the type is sold, judged
 * from the cached catalogue and the channel's schedules. A name the catalogue does not know may be
 * new, so a refresh is asked for and awaited briefly (Redis only: a worker reads the cloud), and only
 * a listing made after the request can say it does not exist; if none comes in time the request goes
 * on unchecked rather than making anyone wait. A request that names nothing reads nothing.
 */
async function checkTarget(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
): Promise<TargetProblem | undefined> {
  const refs = referencesOf(command);
  if (refs.length === 0) return undefined;
  const pricing = deps.guardrails.policy.pricing;
  const ref = targetInstance(command);
  const redis = <T>(p: Promise<T>) => withDeadline(p, REDIS_MS, 'Redis');
  const read = () => redis(readCatalog(deps.store, ctx.projectId));
  const [remembered, schedules, cached] = await Promise.all([
    ref !== undefined
      ? redis(instanceTypeOf(deps.store, ctx.projectId, ref, undefined)).then((t) => t !== undefined)
      : false,
    refs.some((r) => r.what === 'schedule')
      ? redis(listSchedules(deps.store, { channelId: ctx.channelId })).then((all) => all.map((s) => s.id))
      : undefined,
    read(),
  ]);
  const listings = { remembered, schedules, pricing };
  const problem = targetProblem(command, { ...listings, catalog: cached?.catalog });
  // Types change seldom and schedules are in Redis: those decide now. A listed name may be seconds old.
  const listed = refs.some((r) => mayBeNew(r.what) && !(r.what === 'instance' && remembered));
  if (cached ? !problem || !mayBeNew(problem.field) : !listed) return problem;
  const asked = Date.now();
  await askForCatalog(deps, ctx.projectId, 'now');
  const until = asked + FRESH_CATALOG_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, FRESH_CATALOG_POLL_MS));
    const fresh = await read();
    if (fresh && fresh.catalog.refreshedAt >= asked) {
      return targetProblem(command, { ...listings, catalog: fresh.catalog });
    }
  }
  return undefined;
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
      parameters: { ...requestParameters(command, ctx), role: refused.role, needed: refused.needed },
      outcome: 'refused',
    });
    return refused;
  }

  const assessment = await assess(deps, guardrails, command, ctx, extra.binding);
  // A name that is not there is told to the requester alone, before anything is queued or posted.
  const problem =
    (assessment.need.required ? noPlaceForCard(guardrails, ctx) : undefined) ??
    (await checkTarget(deps, command, ctx));
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
