import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import type { BotStack } from '../support/bot-stack.js';
import type { Replication } from './failover.js';
import { type Actor, auditTrail, type CloudState, MACHINES, quiescent, settledFleet } from './world.js';

// The reference model: what the policy allows, what each machine should be, which requests wait for an
// approver, and what must have reached the audit trail. Every command updates it from what the model
// says must happen and checks the real stack against it (checkWorld) after every step.

export type Verb = 'start' | 'stop' | 'rm' | 'create';

export interface PendingApproval {
  readonly id: string;
  readonly text: string;
  readonly requester: Actor;
  readonly verb: Verb;
  readonly machine: string;
  readonly card: StoredMessage;
  readonly requesterTs: string | undefined;
  /** Where the ask left: the approved job's answer may go privately (a mark of the fake, its response_url). */
  readonly asked?: { readonly since: number; readonly responseUrl: string };
  /** The ask's place in the machine's history: a repeat is "Already on it" only while it is the latest. */
  readonly seq: number;
}

export interface Model {
  readonly machines: Record<string, CloudState>;
  readonly pending: PendingApproval[];
  /** Approvals decided or expired: their cards' buttons are stale. */
  readonly closed: PendingApproval[];
  /** Creates the policy let through, per name (the cloud may count fewer, never more). */
  readonly createsAccepted: Record<string, number>;
  /** The latest accepted or pending ask of each machine. */
  readonly lastAsk: Record<string, number>;
  seq: number;
  /** Requests that ran: the audit trail must hold their start and outcome. */
  readonly ran: Array<{
    /** A verb, or a schedule's kind (`schedule.stop`, `schedule.rm`): the audit trail's operation. */
    readonly verb: string;
    readonly machine: string;
    readonly actor: string;
    /** The job ran and said it could not (a name taken between the listener's check and the job). */
    readonly failed?: true;
  }>;
  /** Requests the policy refused: the audit trail must hold a `refused` request entry for each. */
  readonly refused: Array<{ readonly verb: string; readonly machine: string; readonly actor: string }>;
  /** Power schedules made through the bot and not removed (schedules.ts). */
  readonly schedules: ModelSchedule[];
  /**
   * While the requests' channel watches the project (watch.ts): each machine's state when it began
   * and the fake's mark then; undefined while it does not.
   */
  watching?: { readonly since: number; readonly states: Readonly<Record<string, CloudState>> } | undefined;
  /** Sentinel only: the promoted primary has no replica, so changes are refused (degraded mode). */
  degraded: boolean;
  /** Approvals clicked while degraded: each must run (or its requester be told) once a replica is back. */
  readonly held: PendingApproval[];
}

export interface ModelSchedule {
  readonly id: string;
  readonly action: 'start' | 'stop';
  readonly machine: string;
  /** The machine it was made for: a later machine of the same name is not its target. */
  readonly instanceId: string;
  readonly owner: Actor;
  /** `HH:MM`, daily, in UTC. */
  readonly at: string;
}

export interface Real {
  readonly stack: BotStack;
  /** The servers behind the sentinels, in the Sentinel configuration. */
  readonly replication?: Replication;
}

export function initialModel(): Model {
  const machines: Record<string, CloudState> = {};
  for (const m of MACHINES) machines[m] = 'absent';
  machines['demo-1'] = 'running';
  machines['demo-2'] = 'running';
  return {
    machines,
    pending: [],
    closed: [],
    createsAccepted: { 'demo-1': 1, 'demo-2': 1 },
    lastAsk: {},
    seq: 0,
    ran: [
      { verb: 'create', machine: 'demo-1', actor: 'U0ADA' },
      { verb: 'create', machine: 'demo-2', actor: 'U0ADA' },
    ],
    refused: [],
    schedules: [],
    degraded: false,
    held: [],
  };
}

/** The state a successful request leaves its machine in. */
export function stateAfter(verb: Verb): CloudState {
  return verb === 'stop' ? 'stopped' : verb === 'rm' ? 'absent' : 'running';
}

/** Thrown when the stack departs from the model: the message says what a person would have seen. */
export class ModelViolation extends Error {}

export function violated(what: string): never {
  throw new ModelViolation(what);
}

/** Invariants checked after every step, once the queue is quiet and the fleet settled. */
export async function checkWorld(model: Model, real: Real): Promise<void> {
  const { stack } = real;
  await quiescent(stack);
  const fleet = await settledFleet(stack);
  for (const name of MACHINES) {
    const states = fleet[name] ?? [];
    // Invariant 3: never two machines for one create.
    if (states.length > 1) violated(`the cloud holds ${states.length} machines named ${name}`);
    const actual: CloudState = states[0] ?? 'absent';
    // Invariants 1 and 7: no change without an allowed request; the state the last success asked.
    if (actual !== model.machines[name]) {
      violated(
        `${name} is ${actual} in the cloud, but the requests that succeeded leave it ${model.machines[name]}`,
      );
    }
    const creates = stack.sim.control.createCount('createInstance', name);
    if (creates > (model.createsAccepted[name] ?? 0)) {
      violated(
        `the cloud got ${creates} creates of ${name} for ${model.createsAccepted[name] ?? 0} accepted`,
      );
    }
  }
  // Invariant 5: the audit trail.
  const trail = await auditTrail(stack);
  for (const [kind, list] of [
    ['start', model.ran],
    ['outcome', model.ran],
  ] as const) {
    const want = countBy(list);
    const got = countBy(
      trail
        .filter((e) => e.event === kind && e.target && e.operation)
        .map((e) => ({ verb: e.operation as Verb, machine: String(e.target), actor: e.actor })),
    );
    for (const [key, n] of want) {
      if ((got.get(key) ?? 0) < n) {
        violated(
          `the audit trail holds ${got.get(key) ?? 0} "${kind}" entries for ${key}, ${n} requests ran`,
        );
      }
    }
  }
  const refusedWant = countBy(model.refused);
  const refusedGot = countBy(
    trail
      .filter((e) => e.event === 'request' && e.outcome === 'refused' && e.target)
      .map((e) => ({ verb: e.operation as Verb, machine: String(e.target), actor: e.actor })),
  );
  for (const [key, n] of refusedWant) {
    if ((refusedGot.get(key) ?? 0) < n) {
      violated(
        `the audit trail holds ${refusedGot.get(key) ?? 0} refused entries for ${key}, ${n} were refused`,
      );
    }
  }
}

function countBy(list: ReadonlyArray<{ verb: string; machine: string; actor: string }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of list) {
    const key = `${r.verb} ${r.machine} by ${r.actor}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
