import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import { type JobContext, type SealedInputs, stepAuditParameters } from '../jobs/job-data.js';
import type { Guardrails } from '../policy/guardrails.js';
import { type CostEstimate, formatCost } from '../pricing/cost.js';
import { type AuditInput, auditFieldsOf } from '../store/audit.js';
import type { ProjectBinding } from '../store/store.js';
import type { AddGate } from './add-gate.js';
import type { EnqueueDeps } from './enqueue-request.js';
import type { AccessDeadline } from './ports.js';

// What the steps of the request pipeline share (accept-request.ts, request-approval.ts): their
// dependencies, the caller's extras, and the one way a request goes on the audit trail.

export interface AcceptDeps extends EnqueueDeps {
  /** The policy and its stores: the built-in defaults when there is no policy file, never absent. */
  readonly guardrails: Guardrails;
  /** The project of a request that names none (CLOUD_PROJECT_ID): which budgets it counts against. */
  readonly defaultProjectId?: string | undefined;
}

export interface AcceptExtra {
  readonly sealed?: SealedInputs;
  /** The channel's project binding as the caller read it for ctx (null: none), so it is not read twice. */
  readonly binding?: ProjectBinding | null;
  /**
   * The caller answers Slack first (within its 3 s) and runs the result's `followUp` afterwards: no
   * Slack call is made before the request is durably queued or waiting for approval.
   */
  readonly deferPosts?: boolean;
  /** Slack's trigger id of a typed command and its signature window: a replay of it starts nothing. */
  readonly trigger?: { readonly id: string; readonly seconds: number };
  /** The request's deadline: the access check gives up in time for the answer (DeadlinePassed). */
  readonly deadline?: AccessDeadline;
  /**
   * A power schedule's firing (src/requests/scheduled-action.ts): `approved`, within what an approver
   * agreed when the schedule was made (no card, the lease still given); `ask`, above it: an approver
   * is asked again, for the reason given, whatever the policy's threshold.
   */
  readonly scheduled?: { readonly approved: true } | { readonly ask: string };
  /** The caller's point of no return (the listener's deadline): nothing is handed to Redis once shut. */
  readonly gate?: AddGate;
}

/** Redis steps of a request give up after this: the listener must answer within Slack's 3 s. */
export const REDIS_MS = 1_500;

/** Appends to the audit trail; a failure is logged, never the reason a request fails. */
export async function record(deps: AcceptDeps, guardrails: Guardrails, input: AuditInput): Promise<void> {
  try {
    await withDeadline(guardrails.audit.append(input), REDIS_MS, 'Redis');
  } catch (err) {
    deps.log.warn({ err, operation: input.operation }, 'could not append to the audit trail');
  }
}

/** The command's audit parameters, and the workflow step (and its runs' ids) that asked, if one did. */
export function requestParameters(command: GpuCommand, ctx: JobContext): Record<string, unknown> {
  return {
    ...auditFieldsOf(command).parameters,
    ...stepAuditParameters(ctx.step),
    ...(ctx.schedule ? { schedule: ctx.schedule, by: 'schedule' } : {}),
  };
}

export function requestAudit(command: GpuCommand, ctx: JobContext): Omit<AuditInput, 'outcome'> {
  return {
    event: 'request',
    actor: ctx.userId,
    ...auditFieldsOf(command),
    parameters: requestParameters(command, ctx),
    ...(ctx.projectId ? { project: ctx.projectId } : {}),
    channel: ctx.channelId,
  };
}

/** The request's audit fields with its cost, when it has one (queued or sent for approval). */
export function pricedRequestAudit(
  command: GpuCommand,
  ctx: JobContext,
  cost: CostEstimate | undefined,
): Omit<AuditInput, 'outcome'> {
  return {
    ...requestAudit(command, ctx),
    parameters: { ...requestParameters(command, ctx), ...(cost ? { cost: formatCost(cost) } : {}) },
  };
}
