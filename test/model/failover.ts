import type fc from 'fast-check';
import { Redis } from 'ioredis';
import { POST_CLAIM_MS } from '../../src/requests/post-approval.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import { MASTER, type SentinelSet, startSentinelSet } from '../reliability/support/sentinel.js';
import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { finalAnswer, messageAbout } from './answers.js';
import { checkWorld, type Model, type PendingApproval, type Real, stateAfter, violated } from './model.js';
import { FINAL_WITHIN_MS, REQUEST_CHANNEL, startWorld } from './world.js';

// The model's second configuration (GPUOPS_MODEL_REDIS=sentinel): Redis behind Sentinel, a primary,
// a replica and three sentinels on loopback, and the faults that matter there: the primary killed and
// its replica promoted, with a replacement replica attached at once or none (the bot then runs
// degraded: lookups answered, changes refused in one sentence, approvals decided meanwhile held until
// a replica is back). What must hold: an approval a person clicked is never lost, and nothing accepted is.

/** The servers behind the sentinels now: which is primary, which (if any) is its replica. */
export interface Replication {
  readonly set: SentinelSet;
  primary: PrivateRedis;
  replica: PrivateRedis | undefined;
  /** Every server started for the run, closed with it. */
  readonly servers: PrivateRedis[];
}

/** A stack whose bot finds Redis through the sentinels (each job kept on a replica before it is acknowledged). */
export async function startSentinelWorld(): Promise<{ stack: BotStack; replication: Replication }> {
  const set = await startSentinelSet();
  let client: Redis | undefined;
  try {
    const stack = await startWorld({
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_MASTER: MASTER,
      // The replica's confirmation of each job: a second, so a loaded machine does not refuse at random.
      REDIS_WAIT_MS: '1000',
    });
    const replication: Replication = { set, primary: set.primary, replica: set.replica, servers: [] };
    // The model's own reads and writes (the expiry it moves) go to whichever server is primary now.
    client = set.connect();
    const redis = client;
    const wrapped: BotStack = {
      ...stack,
      redis,
      async close() {
        await stack.close();
        redis.disconnect();
        for (const s of replication.servers) await s.close();
        await set.close();
      },
    };
    return { stack: wrapped, replication };
  } catch (err) {
    client?.disconnect();
    await set.close();
    throw err;
  }
}

function replicationOf(real: Real): Replication {
  if (!real.replication) throw new Error('a Sentinel step in a run without Sentinel');
  return real.replication;
}

/** What the bot's /readyz says: its status and, on a replicated Redis, its mode. */
async function readiness(stack: BotStack): Promise<{ status: number; mode?: string } | undefined> {
  const res = await fetch(`http://127.0.0.1:${stack.bot.opsPort}/readyz`).catch(() => undefined);
  if (!res) return undefined;
  const body = (await res.json().catch(() => ({}))) as { mode?: string };
  return { status: res.status, ...(body.mode ? { mode: body.mode } : {}) };
}

/** Waits until the bot reaches the primary and says it is in `mode` (a bot without modes: ready). */
async function botIn(stack: BotStack, mode: 'normal' | 'degraded') {
  await until(
    `the bot to be ready in ${mode} mode`,
    async () => {
      const r = await readiness(stack);
      return r?.status === 200 && (r.mode === undefined || r.mode === mode) ? true : undefined;
    },
    30_000,
  );
}

/**
 * Every sentinel knows the replica, in sync with the primary: only then is it promoted whichever
 * sentinel leads the failover. A sentinel hears of a replica attached a moment ago at its next look at
 * the primary (every 10 s, not at the same moment for the three). Waiting for the first sentinel only,
 * a second failover could kill the primary before the others had heard of the replica; one of them
 * elected leader aborts (-failover-abort-no-good-slave) and no sentinel tries again for 10 s, so three
 * such elections in a row outlast the 30 s the step waits (seed 6281150's 33rd sequence, docs/testing.md).
 */
async function sentinelsKnowAReplica(replication: Replication) {
  const replica = replication.replica;
  if (!replica) throw new Error('a failover with no replica to promote');
  let seen = '';
  await until(
    `every sentinel to know the replica ${replica.port} in sync`,
    async () => {
      const view = await replication.set.replicaSeen(replica.port);
      seen = view.seen;
      return view.byAll ? true : undefined;
    },
    30_000,
    200,
  ).catch((err: Error) => {
    throw new Error(`${err.message} (the sentinels say ${seen})`);
  });
}

/**
 * Starts a new replica of the primary and waits until the two are in sync. The sentinels may fail
 * over once more meanwhile, to the newcomer (they call a primary down after 3 s without an answer, which
 * a loaded machine can cause: hunt seed 1912634342): the two are then in sync the other way round, and
 * `replication` follows whichever the sentinels name as primary.
 */
async function attachReplica(replication: Replication, primaryPort: number) {
  const replica = await startPrivateRedis({
    appendOnly: true,
    extraArgs: ['--replicaof', '127.0.0.1', String(primaryPort)],
  });
  replication.servers.push(replica);
  const previous = replication.primary;
  const follower = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  follower.on('error', () => {});
  const inSync = (info: string) =>
    info.includes('master_link_status:up') ||
    (info.includes('role:master') &&
      new RegExp(`slave\\d+:ip=[^,]+,port=${primaryPort},state=online`).test(info));
  try {
    await until(
      'the new replica to be in sync',
      async () => (inSync(await follower.info('replication').catch(() => '')) ? true : undefined),
      60_000,
      100,
    ).catch(async (err) => {
      const info = (await follower.info('replication').catch((e) => String(e))).replace(/\r?\n/g, ' ');
      throw new Error(`${(err as Error).message} (replica of ${primaryPort}: ${info})`);
    });
  } finally {
    follower.disconnect();
  }
  const nowPrimary = await replication.set.primaryPort();
  const newcomerLeads = nowPrimary === Number(new URL(replica.url).port);
  replication.primary = newcomerLeads ? replica : previous;
  replication.replica = newcomerLeads ? previous : replica;
}

export class PrimaryFailsOver implements fc.AsyncCommand<Model, Real> {
  constructor(readonly replacement: boolean) {}
  check(model: Model): boolean {
    // With no replica there is nothing to promote.
    return !model.degraded;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const replication = replicationOf(real);
    await sentinelsKnowAReplica(replication);
    const before = await replication.set.primaryPort();
    const dying = replication.primary;
    // The server killed must be the one the sentinels call primary: killing the replica instead (the
    // sentinels having failed over on their own since the rig last looked) would wait in vain as well.
    if (dying.port !== before) {
      throw new Error(
        `the sentinels name ${before} as primary, the rig ${dying.port}: they failed over on their own`,
      );
    }
    await dying.kill();
    const promoted = await until(
      'the sentinels to promote the replica',
      async () => {
        const port = await replication.set.primaryPort().catch(() => before);
        return port !== before ? port : undefined;
      },
      30_000,
      100,
    );
    replication.primary = replication.replica!;
    replication.replica = undefined;
    if (this.replacement) {
      await attachReplica(replication, promoted);
      await botIn(stack, 'normal');
    } else {
      model.degraded = true;
      await botIn(stack, 'degraded');
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return this.replacement
      ? 'the primary fails over to its replica and a new replica is attached at once'
      : 'the primary fails over to its replica and no replica replaces it (degraded)';
  }
}

export class ReplicaJoins implements fc.AsyncCommand<Model, Real> {
  check(model: Model): boolean {
    return model.degraded;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const replication = replicationOf(real);
    await attachReplica(replication, await replication.set.primaryPort());
    model.degraded = false;
    await botIn(stack, 'normal');
    // Every approval clicked while there was no replica runs now, or its requester is told it did not.
    for (const p of [...model.held]) {
      await settleApproved(model, stack, p, true);
      model.held.splice(model.held.indexOf(p), 1);
    }
    await checkWorld(model, real);
  }
  toString(): string {
    return 'a replacement replica joins the promoted primary';
  }
}

/** A held approval's time to its answer once a replica is back (the sweeper queues it within seconds). */
const HELD_WITHIN_MS = 60_000;

/**
 * Once nobody is posting the request's messages any more (its claim ended or ran out), none of
 * the requester's messages of it may still say it waits for approval: a "Waiting for approval" posted
 * after the decision is taken back (src/requests/post-approval.ts).
 */
async function noWaitingLeft(stack: BotStack, p: PendingApproval, what: string) {
  const key = `${stack.storePrefix}:{approvals}:req:${p.id}`;
  await until(
    `the posts of ${what} to end`,
    async () => {
      const [at, lease] = await stack.redis.hmget(key, 'postClaimedAt', 'postLease');
      const claimedAt = Number(at ?? 0);
      return claimedAt === 0 || claimedAt + Number(lease ?? POST_CLAIM_MS) <= Date.now() ? true : undefined;
    },
    FINAL_WITHIN_MS,
  );
  const waiting = stack.slack
    .messages(REQUEST_CHANNEL)
    .filter(
      (m) =>
        JSON.stringify(m.blocks ?? []).includes(`request ${p.id}`) &&
        String(m.text).startsWith('Waiting for approval'),
    );
  if (waiting.length > 0)
    violated(`${what} ended, yet ${p.requester.name}'s channel still says "${String(waiting[0]!.text)}"`);
}

/**
 * Follows an approved request to its requester's final answer, wherever they can see it (answers.ts),
 * and the model with it. The invariant: the requester always sees the final outcome of an approved
 * request, and once no sweep posts for it, nothing in their channel still says it waits (noWaitingLeft).
 * A held one (`afterReplica`) gets a minute from the replica's return: the sweeper queues it within
 * a second or two, and one that never ends is the approval lost.
 */
export async function settleApproved(
  model: Model,
  stack: BotStack,
  p: PendingApproval,
  afterReplica = false,
) {
  const what = `the approved "/gpu ${p.text}"${afterReplica ? ' once a replica is back' : ''}`;
  // The requester's "Waiting for approval" message, or, when Slack took none when the card went out
  // (a 429: the sweeper posts it later; not_in_channel: never), the first one posted since the ask.
  const since = p.asked?.since ?? 0;
  const latest = messageAbout(stack, p.text, since);
  const channelTs = () =>
    p.requesterTs && stack.slack.message(REQUEST_CHANNEL, p.requesterTs) ? p.requesterTs : latest();
  const ts = channelTs();
  if (afterReplica && ts) {
    await until(
      `${what} to end`,
      () =>
        /^(Done|Failed|Denied|Expired)/i.test(String(stack.slack.message(REQUEST_CHANNEL, ts)?.text))
          ? true
          : undefined,
      HELD_WITHIN_MS,
    ).catch(() => {
      const seen = (stack.slack.message(REQUEST_CHANNEL, ts)?.history ?? []).map(
        (v) => `"${String(v.text)}"`,
      );
      const card = stack.slack.message(p.card.channel ?? '', p.card.ts);
      violated(
        `${what} never ended: its requester's message went ${seen.join(', then ') || 'missing'}; the card says "${String(card?.text ?? '')}"`,
      );
    });
  }
  const final = await finalAnswer(stack, p.requester, p.text, {
    since,
    ...(p.asked ? { responseUrl: p.asked.responseUrl } : {}),
    channelTs,
    what,
  });
  await noWaitingLeft(stack, p, what);
  model.seq += 1;
  model.ran.push({ verb: p.verb, machine: p.machine, actor: p.requester.id });
  if (final.phase === 'Done') model.machines[p.machine] = stateAfter(p.verb);
}

/** An Approve clicked while Redis has no replica: held until one is back, then it must run. */
export async function holdApproved(model: Model, stack: BotStack, p: PendingApproval) {
  await until(`the approval of "/gpu ${p.text}" to be recorded`, async () =>
    (await stack.guardrails.approvals.get(p.id))?.state !== 'pending' ? true : undefined,
  );
  model.held.push(p);
}
