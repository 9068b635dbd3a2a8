import { expect } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { primeCatalog } from '../e2e/guardrails-kit.js';
import { type BotStack, type BotStackOptions, SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import {
  interactionBody,
  type PostSignedOptions,
  postSigned,
  type SignedResponse,
  slashCommandBody,
} from '../support/slack-driver.js';
import { until } from '../support/until.js';
import type { Cell } from './matrix.js';

// What every door of the security matrix shares: the people and channels of one policy, a fingerprint
// of the cloud to prove nothing changed, the checks of a refusal (one plain sentence, the audit
// trail), and signed sends with an edited person, an old timestamp, or the same body again.

export const ROOT = 'U0ROOT';
export const ADA = 'U0ADA';
export const BOB = 'U0BOB';
export const VIEWER = 'U0VIEW';
export const GUEST = 'U0GUEST';
export const EXT = 'U0EXT';
export const GONE = 'U0GONE';
export const OTHER_TEAM = 'T0OTHER';
/** Operators through the @ops group: each legitimate setup step takes a fresh one, so none meets the rate limit. */
const OPS_GROUP = 'S0OPS';
const OPERATORS = Array.from({ length: 40 }, (_, n) => `U0OP${n}`);
let operatorsUsed = 0;
export function nextOperator(): string {
  const next = OPERATORS[operatorsUsed++];
  if (!next) throw new Error('more operators needed in security-kit.ts');
  return next;
}
let peopleUsed = 0;
/** A member nobody named in the policy (a viewer) who has made no request yet. */
export function freshViewer(): string {
  return `U0VIEW${++peopleUsed}`;
}

export const CHANNEL = 'C0GPU';
/** Grants operator to anyone typing or clicking in it. */
export const OPS = 'C0OPS';
/**
 * The approvals channel; grants admin to anyone clicking in it. With no approvers listed, admins (ROOT
 * and this channel's members) decide: the natural set-up whose grant must count only for clicks there.
 */
export const APPROVE = 'C0APPROVE';

/** Per person, per hour: typed commands use it up in a few requests. */
export const RATE_LIMIT = 3;
export const RATE_LIMITED = /^You have sent \d+ requests in an hour, the most gpuops takes from one person/;

export const POLICY = parsePolicy(`
default_role: viewer
roles:
  admin: { users: [${ROOT}], channels: [${APPROVE}] }
  operator: { users: [${ADA}, ${BOB}], groups: [${OPS_GROUP}], channels: [${OPS}] }
approvals:
  threshold_per_hour: 10
  channel: ${APPROVE}
  expires_after: 1h
  lease:
    required_above_per_hour: 1000
    default: 2h
    max_total: 4h
    remind_before: 15m
rate_limits:
  per_user: { requests: ${RATE_LIMIT}, per: 1h }
  per_channel: { requests: 0 }
`);

export const SLACK_USERS = [
  { id: ADA, name: 'ada' },
  { id: BOB, name: 'bob' },
  { id: GUEST, name: 'gus', is_restricted: true },
  { id: EXT, name: 'ext', team_id: OTHER_TEAM },
  { id: GONE, name: 'gone', deleted: true },
  ...OPERATORS.map((id) => ({ id, name: id.toLowerCase() })),
];

/** The person each person-based trick is played by. */
export const TRICK_PERSON = { guest: GUEST, 'other-workspace': EXT, deactivated: GONE } as const;

export const TRICK_SENTENCE = {
  guest: /^Guest accounts cannot use gpuops in this workspace/,
  'other-workspace': /only from members of its own workspace/,
  deactivated: /^This Slack account is deactivated/,
} as const;

/** A stack with this policy and people, its price list cached (costs decide approvals). */
export async function startSecurityStack(options: BotStackOptions = {}): Promise<BotStack> {
  const stack = await startBotStack({
    shape: 'A',
    transitionMs: 50,
    policy: POLICY,
    ...options,
    slack: { users: SLACK_USERS, usergroups: { [OPS_GROUP]: OPERATORS }, ...options.slack },
  });
  await primeCatalog(stack);
  return stack;
}

/** Everything the cloud holds that a request could change: machines and states, Slurm users, creates. */
export async function cloudState(stack: BotStack): Promise<unknown> {
  const state = stack.sim.control.state();
  const projects = (state.projects as Array<Record<string, unknown>>).map((p) => ({
    instances: (p.instances as Array<{ name: string; state: string }>)
      .map((i) => `${i.name}:${i.state}`)
      .sort(),
    slurm: (p.slurmClusters as Array<{ name: string; users: Array<{ username: string; sshKeys?: unknown }> }>)
      .map((c) => `${c.name}:${JSON.stringify(c.users)}`)
      .sort(),
  }));
  return { projects, keys: state.sshKeys, creates: stack.sim.control.creates() };
}

/** Waits until every machine is in a settled state, so a fingerprint taken now stays put. */
export async function settledCloud(stack: BotStack): Promise<void> {
  await until(
    'the cloud to settle',
    async () => {
      const all = await stack.cloud.listInstances();
      return all.every((i) => ['running', 'stopped'].includes(i.state)) ? true : undefined;
    },
    20_000,
  );
}

/** One plain sentence or a few: no stack trace, no JSON dump, no markup noise. */
export function expectPlainRefusal(text: string | undefined, pattern: RegExp): void {
  expect(text, 'a refusal the person can read').toBeTruthy();
  const t = String(text);
  expect(t).toMatch(pattern);
  expect(t).not.toMatch(/\n\s+at |Error:|\{"|undefined|\[object/);
  expect(t.length).toBeLessThan(600);
}

/** The `refused` entry for `actor` written since `since` (epoch ms), waited for. */
export async function refusedOnTrail(stack: BotStack, actor: string, since: number) {
  return until(
    `a refused entry for ${actor} on the audit trail`,
    async () =>
      (await stack.guardrails.audit.latest(200)).find(
        (e) => e.at >= since && e.outcome === 'refused' && (e.actor === actor || e.approver === actor),
      ),
    10_000,
  );
}

/** Request jobs of `user` that exist now, whatever their state. */
export async function jobsOf(stack: BotStack, user: string): Promise<number> {
  const jobs = await stack.queue.getJobs([
    'waiting',
    'active',
    'delayed',
    'prioritized',
    'completed',
    'failed',
  ]);
  return jobs.filter((j) => j && (j.data as { ctx?: { userId?: string } }).ctx?.userId === user).length;
}

/** `user` types `/gpu ls` until the rate limit refuses them. */
export async function useUpRateLimit(stack: BotStack, user: string, channelId = CHANNEL): Promise<void> {
  for (let i = 0; i < RATE_LIMIT; i++) {
    await stack.command('ls', { userId: user, channelId });
  }
  const over = await (await stack.command('ls', { userId: user, channelId })).answer();
  expect(String(over.text), 'the typed commands used up the limit').toMatch(RATE_LIMITED);
}

/** Forgets the 30 s same-request dedupe, as half a minute would (replays.test.ts does the same). */
export async function forgetDedupe(stack: BotStack): Promise<void> {
  for (const key of await stack.redis.keys(`${stack.storePrefix}:dedupe:*`)) await stack.redis.del(key);
}

/** A captured interaction: the same signed body, sent as often as wanted with its first timestamp. */
export function captured(stack: BotStack, payload: Readonly<Record<string, unknown>>, ageSeconds = 40) {
  const body = interactionBody(payload);
  const timestamp = Math.floor(Date.now() / 1000) - ageSeconds;
  return () => postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp });
}

/** Sends a signed interaction with options (an old timestamp, a signature that no longer matches). */
export function sendInteraction(
  stack: BotStack,
  payload: Readonly<Record<string, unknown>>,
  options: Omit<PostSignedOptions, 'secret'>,
): Promise<SignedResponse> {
  return postSigned(stack.url, interactionBody(payload), { secret: SIGNING_SECRET, ...options });
}

/** A `/gpu` body signed with options. */
export function sendCommand(
  stack: BotStack,
  text: string,
  who: { userId: string; channelId?: string; teamId?: string; responseUrl?: string },
  options: Omit<PostSignedOptions, 'secret'> = {},
): Promise<SignedResponse> {
  return postSigned(stack.url, slashCommandBody({ text, ...who }), { secret: SIGNING_SECRET, ...options });
}

/** The payload's person edited after signing: as if an admin had sent it, under the viewer's signature. */
export const EDITED_SIGNATURE = { badSignature: true } as const;
/** Signed six minutes ago: outside Slack's five-minute window. */
export const STALE = { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 } as const;

/**
 * Runs one cell: `attempt` plays the trick (calling `baseline` once any legitimate setup is done, else
 * the cloud is read before it) and says what the person saw; then the cloud must be as it was, and the
 * refusal as the cell expects.
 */
export async function runCell(
  stack: BotStack,
  cell: Cell,
  attempt: (baseline: () => Promise<void>) => Promise<Seen>,
): Promise<void> {
  const since = Date.now();
  let before: unknown;
  let baselineAt = since;
  const baseline = async () => {
    await stack.drained();
    await settledCloud(stack);
    before = await cloudState(stack);
    baselineAt = Date.now();
  };
  await baseline();
  const seen = await attempt(baseline);
  await stack.drained();
  await settledCloud(stack);
  expect(await cloudState(stack), 'nothing changes in the cloud').toEqual(before);
  const e = cell.expected;
  if (e.outcome === 'unsigned') expect(seen.status, 'Bolt rejects it').toBe(401);
  if (e.outcome !== 'refused') {
    // Nothing was accepted: no request went on the audit trail (a replay ran no job of its own).
    const accepted = (await stack.guardrails.audit.latest(200)).filter(
      (entry) => entry.at >= baselineAt && entry.event === 'request' && entry.outcome !== 'refused',
    );
    expect(
      accepted.map((a) => `${a.operation} ${a.target ?? ''}: ${a.outcome}`),
      'requests accepted',
    ).toEqual([]);
  }
  if (e.outcome === 'refused') {
    expectPlainRefusal(seen.sentence, seen.pattern ?? /\S/);
    if (e.audited) await refusedOnTrail(stack, seen.actor ?? '', since);
  }
  for (const check of seen.checks ?? []) await check();
}

export interface Seen {
  /** The HTTP status Bolt answered the trick's request with. */
  readonly status?: number;
  /** What the person was told. */
  readonly sentence?: string;
  readonly pattern?: RegExp;
  /** Whose refusal the audit trail must show. */
  readonly actor?: string;
  /** Further checks of the door (a request still pending, a lease's stop time). */
  readonly checks?: ReadonlyArray<() => Promise<void>>;
}
