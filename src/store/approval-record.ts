import { z } from 'zod';
import {
  type JobContext,
  jobContextSchema,
  type QueuedCommand,
  type SealedInputs,
  sealedInputsSchema,
} from '../jobs/job-data.js';
import { type MessageRef, messageRefSchema } from '../jobs/message-ref.js';
import type { CostEstimate } from '../pricing/cost.js';
import type { AuditInput } from './audit.js';

// One approval request as it is stored (approvals.ts): its states, the data fixed when it is made,
// validated on write and on read, and how the fields of its Redis hash read back as an ApprovalRequest.
// A request whose data no longer reads is gone; any other field that does not read is left out.

export const APPROVAL_STATES = ['pending', 'approved', 'denied', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/**
 * Where an approved request is after its decision (docs/reliability.md, "One lifecycle per request"):
 * its job on the way to the queue (the enqueue intent is open), on it, taken by a worker, or lapsed
 * (its deadline passed before its job could be stored: it never runs).
 */
/** What a pending request still has to show (store/approvals.ts, docs/reliability.md). */
export const UNPOSTED_PARTS = ['message', 'card'] as const;
export type UnpostedPart = (typeof UNPOSTED_PARTS)[number];

export const APPROVED_STAGES = ['queuing', 'queued', 'running', 'lapsed'] as const;
export type ApprovedStage = (typeof APPROVED_STAGES)[number];

const costSchema = z.union([
  z.looseObject({ known: z.literal(true), perHour: z.number(), perDay: z.number() }),
  z.looseObject({ known: z.literal(false), reason: z.string() }),
]);

const leaseSchema = z.object({
  seconds: z.number().int().positive(),
  remindBeforeSeconds: z.number().int().min(0),
});

/** What the card shows besides the command, fixed when the request is made so every edit shows the same. */
const displaySchema = z.object({
  /** The project in words: `ml-research (3f1c…)`. */
  project: z.string().optional(),
  /** Capacity of the type, in words: `3 machines available now`. */
  capacity: z.string().optional(),
  /** When that capacity was listed (epoch ms), shown in each reader's zone. */
  capacityAt: z.number().optional(),
  /** Who may decide, in words (decide.ts describeApprovers). */
  approvers: z.string().optional(),
  /** Only these Slack users may decide (a budget's owners, docs/budgets.md); absent: the policy's approvers. */
  owners: z.array(z.string()).optional(),
});
export type ApprovalDisplay = z.infer<typeof displaySchema>;

/**
 * What is fixed when the request is made. Validated on write and on read: it outlives deploys. The
 * command's schema is given by whoever creates the store (the registry's, in gpuops), so a request
 * whose command this version no longer accepts reads as gone rather than running.
 */
export const requestDataSchemaFor = <C extends QueuedCommand>(command: z.ZodType<C>) =>
  z.object({
    v: z.literal(1),
    id: z.string().min(1),
    kind: z.string().min(1),
    /** The typed command: commands never carry secrets (a kubeconfig or user data never enters one). */
    command,
    ctx: jobContextSchema,
    cost: costSchema.optional(),
    reasons: z.array(z.string()),
    /** Slack user id of the person who asked (= ctx.userId). */
    requester: z.string().min(1),
    /** Where the card is posted. */
    approvalChannel: z.string().min(1),
    createdAt: z.number().int().positive(),
    expiresAt: z.number().int().positive(),
    /** The stop time the approved machine gets (policy approvals.lease). */
    lease: leaseSchema.optional(),
    /** References to secrets a form sealed (user data, kubeconfig); never the secrets themselves. */
    sealed: sealedInputsSchema.optional(),
    display: displaySchema.optional(),
  });

type RequestDataSchema<C extends QueuedCommand> = ReturnType<typeof requestDataSchemaFor<C>>;

const pendingAuditSchema = z.looseObject({
  event: z.literal('decision'),
  actor: z.string().min(1),
  operation: z.string().min(1),
});

const decisionSchema = z.object({
  by: z.string().min(1),
  at: z.number().int().positive(),
  reason: z.string().optional(),
});

export interface ApprovalDecision {
  /** Slack user id of the approver, or SYSTEM_ACTOR for an expiry. */
  readonly by: string;
  readonly at: number;
  readonly reason?: string;
}

export interface ApprovalRequest<C extends QueuedCommand = QueuedCommand> {
  readonly id: string;
  readonly kind: C['kind'];
  readonly command: C;
  readonly ctx: JobContext;
  readonly cost?: CostEstimate;
  readonly reasons: readonly string[];
  readonly requester: string;
  readonly approvalChannel: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly lease?: { readonly seconds: number; readonly remindBeforeSeconds: number };
  readonly sealed?: SealedInputs;
  readonly display?: ApprovalDisplay;
  readonly state: ApprovalState;
  readonly decision?: ApprovalDecision;
  /** The approval card with the buttons. */
  readonly card?: MessageRef;
  /** The requester's message that says where the request went. */
  readonly requesterMessage?: MessageRef;
  /**
   * When the approved job reached the queue. Kept as long as the request (30 days past its expiry):
   * a stale click re-queues an approved request only while this is absent.
   */
  readonly enqueuedAt?: number;
  /** An approved request's stage; one approved before the lifecycle reads `queued` or `queuing`. */
  readonly stage?: ApprovedStage;
  /** Until when an approved request's job may still be queued; after it, the request lapses. */
  readonly runBy?: number;
  /** Its messages say the job waits for gpuops to store it on two servers (Redis had no replica). */
  readonly held?: true;
  /** The decision's audit entry, stored with the decision, while it is not yet on the audit trail. */
  readonly pendingAudit?: AuditInput;
  /** What Slack has not taken yet (the requester's message, the card): posted by the sweeper. */
  readonly unposted?: readonly UnpostedPart[];
}

export function fromHash<C extends QueuedCommand>(
  schema: RequestDataSchema<C>,
  flat: readonly string[],
): ApprovalRequest<C> | undefined {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return fromFields(schema, h);
}

export function fromFields<C extends QueuedCommand>(
  schema: RequestDataSchema<C>,
  h: Record<string, string>,
): ApprovalRequest<C> | undefined {
  if (!h.data) return undefined;
  const data = schema.safeParse(JSON.parse(h.data));
  if (!data.success) return undefined;
  const state = z.enum(APPROVAL_STATES).catch('pending').parse(h.state);
  const decision = h.decision ? decisionSchema.safeParse(JSON.parse(h.decision)) : undefined;
  const card = h.card ? messageRefSchema.safeParse(JSON.parse(h.card)) : undefined;
  const requesterMessage = h.requesterMessage
    ? messageRefSchema.safeParse(JSON.parse(h.requesterMessage))
    : undefined;
  const enqueuedAt = Number(h.enqueuedAt);
  const pendingAudit = h.audit ? pendingAuditSchema.safeParse(JSON.parse(h.audit)) : undefined;
  const runBy = Number(h.runBy);
  const unposted = (h.unposted ?? '')
    .split(',')
    .filter((part): part is UnpostedPart => (UNPOSTED_PARTS as readonly string[]).includes(part));
  const stage =
    state !== 'approved'
      ? undefined
      : z
          .enum(APPROVED_STAGES)
          .catch(Number.isFinite(enqueuedAt) && enqueuedAt > 0 ? 'queued' : 'queuing')
          .parse(h.stage);
  const { v: _v, cost, lease, sealed, display, ...rest } = data.data;
  return {
    ...rest,
    ...(cost ? { cost: cost as CostEstimate } : {}),
    ...(lease ? { lease } : {}),
    ...(sealed ? { sealed: withoutUndefinedFields(sealed) } : {}),
    ...(display ? { display: withoutUndefinedFields(display) } : {}),
    state,
    ...(decision?.success ? { decision: withoutUndefined(decision.data) } : {}),
    ...(card?.success ? { card: card.data } : {}),
    ...(requesterMessage?.success ? { requesterMessage: requesterMessage.data } : {}),
    ...(Number.isFinite(enqueuedAt) && enqueuedAt > 0 ? { enqueuedAt } : {}),
    ...(stage ? { stage } : {}),
    ...(Number.isFinite(runBy) && runBy > 0 ? { runBy } : {}),
    ...(h.held === '1' ? { held: true as const } : {}),
    ...(pendingAudit?.success ? { pendingAudit: pendingAudit.data as AuditInput } : {}),
    ...(unposted.length > 0 ? { unposted } : {}),
  };
}

function withoutUndefinedFields<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function withoutUndefined(d: z.infer<typeof decisionSchema>): ApprovalDecision {
  return { by: d.by, at: d.at, ...(d.reason !== undefined ? { reason: d.reason } : {}) };
}
