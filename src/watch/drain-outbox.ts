import { setTimeout as sleep } from 'node:timers/promises';
import type { KnownBlock } from '@slack/types';
import { classifySlackFailure, waitBeforeSend } from '../commands/kit/slack-failure.js';
import {
  CHANNEL_REF,
  createOutbox,
  DRAIN_LEASE_MS,
  newDrainToken,
  type Outbox,
  type OutboxEntry,
  type OutboxFile,
  type OutboxMessage,
} from '../store/watch-outbox.js';
import { DEFAULT_MIN_INTERVAL_MS, nowOf, type WatchDeps } from './watch-deps.js';
import { addWatchJob } from './watch-queue.js';

// The drain of one target's outbox (a channel, or a user for their DM): sends the entries in order at
// about one call a second, takes each off the list only once Slack accepted it, and on a 429 hands the
// lease to a new drain job delayed by Retry-After instead of holding a worker while it waits.

/** A drain job sends at most this many entries (about a minute), then hands over to a fresh job. */
export const MAX_ENTRIES_PER_JOB = 60;
/** A pace wait longer than this becomes a delayed job rather than a sleep. */
const MAX_INLINE_WAIT_MS = 5_000;

export type DrainOutcome =
  | { readonly status: 'empty'; readonly sent: number }
  | { readonly status: 'handed-over'; readonly sent: number; readonly delayMs: number; readonly why: string }
  | { readonly status: 'lease-lost'; readonly sent: number };

/** Starts the drains a push or commit asked for; a failure here is healed by the next tick's kick. */
export async function startDrains(
  deps: Pick<WatchDeps, 'queue' | 'log'>,
  kicked: ReadonlyArray<{ readonly target: string; readonly token: string }>,
): Promise<void> {
  for (const { target, token } of kicked) {
    await addWatchJob(deps.queue, { v: 1, job: 'drain', target, token }, token).catch((err: unknown) =>
      deps.log.warn({ err, target }, 'could not start an outbox drain; the next tick retries'),
    );
  }
}

/** The conversation to call for a target: a DM's D… id once known, else the target itself. */
async function conversationOf(deps: WatchDeps, outbox: Outbox, target: string): Promise<string> {
  if (!/^[UW]/.test(target)) return target;
  const known = await outbox.ref(target, CHANNEL_REF);
  if (known) return known;
  const opened = await deps.slack.conversations.open({ users: target });
  const id = opened.channel?.id;
  if (!id) throw new Error('conversations.open gave no channel id');
  await outbox.setRef(target, CHANNEL_REF, id);
  return id;
}

async function sendMessage(deps: WatchDeps, outbox: Outbox, target: string, entry: OutboxMessage) {
  const blocks = entry.blocks as KnownBlock[] | undefined;
  const content = { text: entry.text, ...(blocks ? { blocks } : {}) };
  if (entry.mode === 'upsert' && entry.ref) {
    const ts = await outbox.ref(target, entry.ref);
    if (ts) {
      try {
        await deps.slack.chat.update({ channel: await conversationOf(deps, outbox, target), ts, ...content });
        return;
      } catch (err) {
        // Someone deleted the message: post a new one and edit that from now on.
        if (classifySlackFailure(err).kind !== 'message-gone') throw err;
      }
    }
  }
  const threadTs = entry.thread ? await outbox.ref(target, entry.thread) : undefined;
  const post = (thread: string | undefined) =>
    deps.slack.chat.postMessage({ channel: target, ...content, ...(thread ? { thread_ts: thread } : {}) });
  let posted: Awaited<ReturnType<typeof post>>;
  try {
    posted = await post(threadTs);
  } catch (err) {
    if (!threadTs || classifySlackFailure(err).kind !== 'message-gone') throw err;
    posted = await post(undefined);
  }
  if (entry.ref && posted.ts) await outbox.setRef(target, entry.ref, posted.ts);
  if (/^[UW]/.test(target) && posted.channel) await outbox.setRef(target, CHANNEL_REF, posted.channel);
}

async function sendFile(deps: WatchDeps, outbox: Outbox, target: string, entry: OutboxFile) {
  const bytes = await outbox.blob(entry.blob);
  if (!bytes) {
    deps.log.warn({ target, file: entry.filename }, 'an outbox file expired before it could be sent');
    return;
  }
  const channel = await conversationOf(deps, outbox, target);
  const threadTs = entry.thread ? await outbox.ref(target, entry.thread) : undefined;
  const where = threadTs ? { channel_id: channel, thread_ts: threadTs } : { channel_id: channel };
  await deps.slack.files.uploadV2({
    ...where,
    file: bytes,
    filename: entry.filename,
    title: entry.title,
    alt_text: entry.alt,
    ...(entry.comment ? { initial_comment: entry.comment } : {}),
  });
}

async function send(deps: WatchDeps, outbox: Outbox, target: string, entry: OutboxEntry): Promise<void> {
  if (entry.op === 'message') {
    await sendMessage(deps, outbox, target, entry);
    if (entry.forget) await outbox.forget(target, entry.thread ?? entry.ref ?? '');
  } else {
    await sendFile(deps, outbox, target, entry);
  }
}

async function handOver(
  deps: WatchDeps,
  outbox: Outbox,
  target: string,
  token: string,
  delayMs: number,
): Promise<boolean> {
  const next = newDrainToken();
  if (!(await outbox.hand(target, token, next, DRAIN_LEASE_MS + delayMs))) return false;
  await addWatchJob(deps.queue, { v: 1, job: 'drain', target, token: next }, next, { delayMs });
  return true;
}

export async function drainOutbox(
  deps: WatchDeps,
  data: { readonly target: string; readonly token: string },
  signal: AbortSignal,
): Promise<DrainOutcome> {
  const { target, token } = data;
  const outbox = createOutbox(deps.store);
  const interval = deps.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
  let sent = 0;
  if ((await outbox.hold(target, token)) === 'lost') return { status: 'lease-lost', sent };
  for (;;) {
    signal.throwIfAborted();
    const head = await outbox.head(target);
    if (!head) {
      const released = await outbox.release(target, token);
      if (released === 'more') continue;
      return released === 'released' ? { status: 'empty', sent } : { status: 'lease-lost', sent };
    }
    if (!head.entry) {
      deps.log.warn({ target }, 'dropped an outbox entry this version cannot read');
      if (!(await outbox.pop(target, token, head.raw))) return { status: 'lease-lost', sent };
      continue;
    }
    const wait = waitBeforeSend(nowOf(deps), await outbox.notBefore(target));
    if (wait > MAX_INLINE_WAIT_MS) {
      const handed = await handOver(deps, outbox, target, token, wait);
      return handed
        ? { status: 'handed-over', sent, delayMs: wait, why: 'pace' }
        : { status: 'lease-lost', sent };
    }
    if (wait > 0) await sleep(wait, undefined, { signal });
    try {
      await send(deps, outbox, target, head.entry);
    } catch (err) {
      const failure = classifySlackFailure(err);
      if (failure.kind === 'rate-limited') {
        // Slack's Retry-After: nothing more to this target until then, in order, from a delayed job.
        await outbox.setNotBefore(target, nowOf(deps) + failure.retryAfterMs);
        deps.log.info({ target, retryAfterMs: failure.retryAfterMs }, 'Slack rate limit: outbox waits');
        const handed = await handOver(deps, outbox, target, token, failure.retryAfterMs);
        return handed
          ? { status: 'handed-over', sent, delayMs: failure.retryAfterMs, why: 'rate limit' }
          : { status: 'lease-lost', sent };
      }
      if (failure.kind === 'permanent' || failure.kind === 'message-gone') {
        deps.log.warn({ err, target, code: failure.code }, 'dropped an outbox entry Slack refused');
        if (head.entry.tag === 'budget-alert') deps.countBudgetAlertFailed?.(failure.code ?? 'refused');
      } else {
        throw err;
      }
    }
    await outbox.setNotBefore(target, nowOf(deps) + interval);
    if (!(await outbox.pop(target, token, head.raw))) return { status: 'lease-lost', sent };
    sent++;
    if (sent >= MAX_ENTRIES_PER_JOB) {
      const handed = await handOver(deps, outbox, target, token, 0);
      return handed
        ? { status: 'handed-over', sent, delayMs: 0, why: 'batch done' }
        : { status: 'lease-lost', sent };
    }
  }
}
