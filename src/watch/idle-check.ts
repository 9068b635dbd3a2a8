import type { Instance } from '../cloud/index.js';
import type { IdlePolicy } from '../policy/policy.js';
import { answeredAlertBlocks, autoStopReply, idleAlertMessage } from '../render/idle-alert.js';
import { chartFileName, summaryMrkdwn } from '../render/metrics-message.js';
import { type SnapshotDeps, takeSnapshot } from '../snapshot/take-snapshot.js';
import { createIdleState, type IdleRecord } from '../store/idle-state.js';
import { instanceOwner } from '../store/instance-owners.js';
import { createOutbox, type NewOutboxEntry } from '../store/watch-outbox.js';
import { createWatchSubscriptions } from '../store/watch-subscriptions.js';
import { startDrains } from './drain-outbox.js';
import { priceBookFor, runningCost } from './spend.js';
import { nowOf, type WatchDeps } from './watch-deps.js';

// Idle GPUs of one watched project: a running instance whose GPU utilisation stayed below the policy's
// threshold for its whole window is reported once per idle period — to the watching channels and, by
// direct message, to whoever created it through gpuops — with its chart, its cost, and buttons. An
// instance with no metrics is never called idle. The policy may stop one nobody answered.
//
// One PromQL query per project per check, whatever the number of instances: the highest utilisation
// of each instance over the window, kept only for instances that already reported a window ago.

export type IdleOutcome = {
  readonly running: number;
  readonly idle: number;
  readonly alerted: number;
  readonly stopped: number;
};

/** The ref of an instance's alert message in each target's outbox. */
export const idleRef = (instanceId: string) => `idle:${instanceId}`;

/** Highest GPU utilisation over the window per instance id, for instances with a full window of data. */
export async function idleReadings(
  snapshots: SnapshotDeps,
  idle: IdlePolicy,
  signal?: AbortSignal,
): Promise<Map<string, number>> {
  const { catalog, client } = snapshots;
  const label = catalog.instanceLabel;
  const series = catalog.get('util').series;
  const window = `${idle.windowSeconds}s`;
  // Look far enough before the window for a sample that proves the instance reported all along.
  const before = `${Math.max(idle.checkEverySeconds, 60)}s`;
  const expr =
    `max by (${label}) (max_over_time(${series}[${window}])) ` +
    `and on (${label}) max by (${label}) (present_over_time(${series}[${before}] offset ${window}))`;
  const answer = await client.query(expr, signal ? { signal } : {});
  const out = new Map<string, number>();
  if (answer.data.resultType !== 'vector') return out;
  for (const sample of answer.data.result) {
    const id = sample.metric[label];
    if (id !== undefined && Number.isFinite(sample.value)) out.set(id, sample.value);
  }
  return out;
}

/** Where an instance's alerts go: the project's watching channels, and its owner's DM. */
async function targetsFor(deps: WatchDeps, projectId: string, instanceId: string): Promise<string[]> {
  const channels = await createWatchSubscriptions(deps.store).channelsOf(projectId);
  const owner = await instanceOwner(deps.store, instanceId);
  return owner ? [...channels, owner] : channels;
}

async function chartEntry(
  deps: WatchDeps,
  snapshots: SnapshotDeps,
  instance: Instance,
  now: number,
  signal: AbortSignal,
): Promise<NewOutboxEntry | undefined> {
  const rangeMs = Math.min(Math.max(2 * deps.policy.idle.windowSeconds * 1000, 15 * 60_000), 86_400_000);
  try {
    const snapshot = await takeSnapshot(snapshots, {
      instance: instance.id,
      metric: 'util',
      rangeMs,
      end: now,
      signal,
    });
    const blob = await createOutbox(deps.store).putBlob(snapshot.png);
    const range =
      rangeMs >= 3_600_000 ? `${Math.round(rangeMs / 3_600_000)}h` : `${Math.round(rangeMs / 60_000)}m`;
    return {
      op: 'file',
      blob,
      filename: chartFileName(instance.name, range),
      title: snapshot.spec.title.slice(0, 250),
      alt: `${snapshot.spec.title}. ${snapshot.text}`.slice(0, 990),
      comment: summaryMrkdwn(snapshot.text),
      thread: idleRef(instance.id),
    };
  } catch (err) {
    deps.log.warn({ err, instanceId: instance.id }, 'idle alert goes without its chart');
    return undefined;
  }
}

async function alert(
  deps: WatchDeps,
  snapshots: SnapshotDeps,
  projectId: string,
  instance: Instance,
  record: IdleRecord,
  signal: AbortSignal,
): Promise<void> {
  const now = nowOf(deps);
  const owner = await instanceOwner(deps.store, instance.id);
  const prices = await priceBookFor(deps.store, projectId, deps.policy);
  const chart = await chartEntry(deps, snapshots, instance, now, signal);
  const { text, blocks } = idleAlertMessage({
    instanceId: instance.id,
    projectId,
    name: instance.name,
    type: instance.type,
    since: record.since,
    now,
    thresholdPercent: deps.policy.idle.thresholdPercent,
    maxUtil: record.maxUtil,
    cost: runningCost(instance.type, prices),
    ownerId: owner,
    autoStopAfterSeconds: deps.policy.idle.autoStopAfterSeconds,
    chart: chart !== undefined,
  });
  const entries: NewOutboxEntry[] = [
    { op: 'message', mode: 'post', ref: idleRef(instance.id), text, blocks },
    ...(chart ? [chart] : []),
  ];
  const targets = await targetsFor(deps, projectId, instance.id);
  await startDrains(deps, await createOutbox(deps.store).pushMany(targets, entries));
}

async function autoStop(
  deps: WatchDeps,
  projectId: string,
  instance: Instance,
  record: IdleRecord,
  _signal: AbortSignal,
): Promise<void> {
  const now = nowOf(deps);
  // Not a call to the cloud from here: a stop job, audited, that the workers run like any request.
  const [channelId] = await createWatchSubscriptions(deps.store).channelsOf(projectId);
  if (channelId === undefined) return;
  const job = await deps.submit({
    command: { kind: 'stop', instance: instance.id },
    channelId,
    projectId,
    actorId: deps.botUserId,
    reason: `idle policy: below ${deps.policy.idle.thresholdPercent}% GPU since ${new Date(record.since).toISOString()}, alert unanswered`,
  });
  deps.log.info(
    { projectId, instanceId: instance.id, jobId: job.jobId },
    'idle instance: stop queued by the policy',
  );
  const prices = await priceBookFor(deps.store, projectId, deps.policy);
  const { text, blocks } = idleAlertMessage({
    instanceId: instance.id,
    projectId,
    name: instance.name,
    type: instance.type,
    since: record.since,
    now,
    thresholdPercent: deps.policy.idle.thresholdPercent,
    maxUtil: record.maxUtil,
    cost: runningCost(instance.type, prices),
    ownerId: await instanceOwner(deps.store, instance.id),
    chart: true,
  });
  const reply = autoStopReply({
    name: instance.name,
    idleMs: now - record.since,
    unansweredMs: now - record.alertedAt,
  });
  const entries: NewOutboxEntry[] = [
    {
      op: 'message',
      mode: 'upsert',
      ref: idleRef(instance.id),
      text,
      blocks: answeredAlertBlocks(blocks, ':octagonal_sign: Stopped by the gpuops policy (no answer).'),
    },
    { op: 'message', mode: 'post', thread: idleRef(instance.id), text: reply },
  ];
  const targets = await targetsFor(deps, projectId, instance.id);
  await startDrains(deps, await createOutbox(deps.store).pushMany(targets, entries));
}

export async function checkIdle(
  deps: WatchDeps,
  projectId: string,
  signal: AbortSignal,
): Promise<IdleOutcome> {
  const snapshots = deps.snapshots;
  if (!snapshots) return { running: 0, idle: 0, alerted: 0, stopped: 0 };
  const policy = deps.policy.idle;
  const state = createIdleState(deps.store);
  const instances = await deps.cloud.listInstances({ projectId, signal });
  const running = instances.filter((i) => i.state === 'running');
  const readings =
    running.length > 0 ? await idleReadings(snapshots, policy, signal) : new Map<string, number>();
  const idle = running.filter((i) => {
    const max = readings.get(i.id);
    return max !== undefined && max < policy.thresholdPercent;
  });
  const idleIds = new Set(idle.map((i) => i.id));
  const records = await state.records(projectId);
  // Busy again, stopped or gone: the idle period is over, and a later one is reported afresh.
  await state.end(
    projectId,
    records.filter((r) => !idleIds.has(r.instanceId)).map((r) => r.instanceId),
  );
  const now = nowOf(deps);
  let alerted = 0;
  let stopped = 0;
  for (const instance of idle) {
    if (await state.suppression(instance.id, now)) continue;
    const existing = records.find((r) => r.instanceId === instance.id);
    if (!existing) {
      const record: IdleRecord = {
        instanceId: instance.id,
        name: instance.name,
        type: instance.type,
        since: now - policy.windowSeconds * 1000,
        alertedAt: now,
        maxUtil: readings.get(instance.id) ?? 0,
      };
      // One replica wins the claim and sends the one alert of this idle period.
      if (await state.claim(projectId, record)) {
        await alert(deps, snapshots, projectId, instance, record, signal);
        alerted++;
      }
      continue;
    }
    const after = policy.autoStopAfterSeconds;
    if (after === undefined || now - existing.alertedAt < after * 1000) continue;
    if (await state.answered(instance.id)) continue;
    if (await state.claimAutoStop(instance.id, Math.max(after, 3600))) {
      try {
        await autoStop(deps, projectId, instance, existing, signal);
      } catch (err) {
        await state.releaseAutoStop(instance.id);
        throw err;
      }
      await state.end(projectId, [instance.id]);
      stopped++;
    }
  }
  return { running: running.length, idle: idle.length, alerted, stopped };
}
