import { parsePolicy } from '../../src/policy/load-policy.js';
import type { AuditEntry } from '../../src/store/audit.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// The world the model test drives: one bot stack as `gpuops start` assembles it (startBot, a private
// real Redis kept in an append-only file so a restart keeps it, the fake Slack over HTTP, the simulator
// over HTTP), the people of a small policy and a fleet of three machine names. Every helper here waits
// for events or polls with a deadline; none sleeps a fixed time.

export const REQUEST_CHANNEL = 'C0GPU';
export const APPROVAL_CHANNEL = 'C0APPR';
export const MACHINES = ['demo-1', 'demo-2', 'new-1'] as const;
export type Machine = (typeof MACHINES)[number];
export const MACHINE_TYPE = 'h100-hgx-80gb.1x';

export type Standing = 'operator' | 'approver' | 'admin' | 'viewer' | 'guest' | 'outsider';

export interface Actor {
  readonly name: string;
  readonly id: string;
  readonly standing: Standing;
}

export const ACTORS: readonly Actor[] = [
  { name: 'ada', id: 'U0ADA', standing: 'operator' },
  { name: 'bob', id: 'U0BOB', standing: 'approver' },
  { name: 'amy', id: 'U0AMY', standing: 'admin' },
  { name: 'vic', id: 'U0VIC', standing: 'viewer' },
  { name: 'gus', id: 'U0GUS', standing: 'guest' },
  { name: 'eve', id: 'U0EVE', standing: 'outsider' },
];

export const actor = (name: string): Actor => {
  const found = ACTORS.find((a) => a.name === name);
  if (!found) throw new Error(`no actor ${name}`);
  return found;
};

// Bob is an operator and the one approver; Amy is an admin (admins do not approve when approvers are
// listed); Vic gets the default role, viewer. `rm` always waits for Bob.
/** The policy as a file would hold it: a worker in a process of its own reads it (GPUOPS_POLICY). */
export const MODEL_POLICY_YAML = [
  'default_role: viewer',
  'roles:',
  '  admin: { users: [U0AMY] }',
  '  operator: { users: [U0ADA, U0BOB] }',
  'approvals:',
  '  always: [rm]',
  '  threshold_per_hour: 1000000',
  '  unknown_price: allow',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVAL_CHANNEL}`,
  '  expires_after: 1h',
  // Every start and create gets a lease (long enough never to end within a run): a scheduled start
  // must get one too (schedules.ts).
  '  lease: { required_above_per_hour: 0.01, default: 8h, remind_before: 30m }',
  'access:',
  '  allow_guests: false',
  '  allow_other_workspaces: false',
  // The watchers look every 2 s (watch.ts waits a few looks for a change to be told).
  'watch:',
  '  poll_every: 2s',
  'rate_limits:',
  '  per_user: { requests: 0 }',
  '  per_channel: { requests: 0 }',
].join('\n');
export const MODEL_POLICY = parsePolicy(MODEL_POLICY_YAML, 'model-policy.yaml');

/** May this standing use gpuops at all (the access gate)? */
export const mayUse = (s: Standing) => s !== 'guest' && s !== 'outsider';
/** May this standing run a change (start, stop, create, rm) itself, approval aside? */
export const mayChange = (s: Standing) => s === 'operator' || s === 'approver' || s === 'admin';
/** May this standing read (ls, show)? */
export const mayRead = (s: Standing) => mayUse(s);

/** How often the watchers look at the project (the policy's watch.poll_every above), in ms. */
export const WATCH_POLL_MS = 2_000;

/** The client's timeout for one cloud call: short, so a call the cloud holds (faults.ts) costs seconds. */
export const CLOUD_TIMEOUT_MS = 2_000;

// How long a request may take to its final answer when every call meets a fault: the job's six attempts
// wait 1+2+4+8+16 = 31 s between them (src/jobs/queue.ts); within an attempt, a start, stop or delete
// is tried 4 times by the client (src/cloud/retry.ts), each try up to the client's timeout when the
// cloud holds it (faults.ts), with at most 0.25+0.5+1 = 1.75 s between tries; a create is tried once,
// then its next attempt waits up to the timeout plus 1 s for that send if it got no answer
// (earlier-send.ts; a send answered 503 is not waited for). Worst: 31 s + 6 × (4 × 2 s + 1.75 s) =
// 89.5 s; 10 s more for the machine's transitions, Slack's 429s and a loaded machine.
const JOB_BACKOFF_MS = 1_000 + 2_000 + 4_000 + 8_000 + 16_000;
const ATTEMPT_WORST_MS = Math.max(4 * CLOUD_TIMEOUT_MS + 1_750, 2 * CLOUD_TIMEOUT_MS + 1_000);
export const FINAL_WITHIN_MS = JOB_BACKOFF_MS + 6 * ATTEMPT_WORST_MS + 10_000;

/** The stack; `env` adds to what the bot reads (the Sentinel configuration's REDIS_SENTINELS). */
export async function startWorld(env?: Readonly<Record<string, string>>): Promise<BotStack> {
  const stack = await startBotStack({
    shape: 'B',
    policy: MODEL_POLICY,
    transitionMs: 100,
    redisAppendOnly: true,
    env: { CLOUD_TIMEOUT_MS: String(CLOUD_TIMEOUT_MS), ...env },
    // A killed worker's job (kill.ts) is taken over within a second of its lock running out.
    stalledIntervalMs: 500,
  });
  try {
    stack.slack.setUser({ id: 'U0GUS', name: 'gus', is_restricted: true });
    stack.slack.setUser({ id: 'U0EVE', name: 'eve', team_id: 'T0OTHER' });
    for (const a of ACTORS.slice(0, 4)) stack.slack.setUser({ id: a.id, name: a.name });
  } catch (err) {
    await stack.close();
    throw err;
  }
  return stack;
}

export type CloudState = 'running' | 'stopped' | 'absent';

/** Each machine name's settled state, waiting while any is between states. */
export async function settledFleet(stack: BotStack): Promise<Record<string, CloudState[]>> {
  return until(
    'the fleet to settle',
    async () => {
      const all = await stack.cloud.listInstances();
      const fleet: Record<string, CloudState[]> = {};
      for (const name of MACHINES) fleet[name] = [];
      for (const i of all) {
        if (i.state !== 'running' && i.state !== 'stopped') return undefined;
        fleet[i.name] = [...(fleet[i.name] ?? []), i.state];
      }
      return fleet;
    },
    20_000,
  );
}

/** Waits until no request job is queued or running. */
export async function quiescent(stack: BotStack): Promise<void> {
  await stack.drained(FINAL_WITHIN_MS);
}

/** The audit trail, oldest first. */
export async function auditTrail(stack: BotStack): Promise<AuditEntry[]> {
  return (await stack.guardrails.audit.latest(10_000)).reverse();
}

/** Moves every pending approval's expiry to now: the bot's own clock cannot be moved from outside. */
export async function expireAllPending(stack: BotStack): Promise<string[]> {
  const prefix = stack.storePrefix;
  const pendingKey = `${prefix}:{approvals}:pending`;
  const ids = await stack.redis.zrange(pendingKey, '0', '-1');
  const past = Date.now() - 1;
  for (const id of ids) {
    const key = `${prefix}:{approvals}:req:${id}`;
    const data = await stack.redis.hget(key, 'data');
    if (data) {
      const parsed = JSON.parse(data) as { expiresAt: number };
      parsed.expiresAt = past;
      await stack.redis.hset(key, 'data', JSON.stringify(parsed), 'expiresAt', String(past));
    }
    await stack.redis.zadd(pendingKey, past, id);
  }
  return ids;
}

/** A refusal as the house style wants it: one line, a full stop, no stack trace or `undefined`. */
export function isOneSentence(text: string): boolean {
  return (
    text.trim() !== '' &&
    !text.includes('\n') &&
    /[.!?)`*_]$/.test(text.trim()) &&
    !/\bat .*\(.*:\d+:\d+\)|undefined|\[object Object\]/.test(text)
  );
}

/** With GPUOPS_MODEL_VERBOSE=1, what a step saw, written to stderr under the step's own line. */
export function trace(what: string): void {
  if (process.env.GPUOPS_MODEL_VERBOSE === '1') process.stderr.write(`     ${what}\n`);
}
