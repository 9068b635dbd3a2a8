import { createOutbox } from '../store/watch-outbox.js';
import { createSnapshotStore } from '../store/watch-snapshots.js';
import { createWatchSubscriptions } from '../store/watch-subscriptions.js';
import { startDrains } from './drain-outbox.js';
import { nowOf, type WatchDeps } from './watch-deps.js';
import { addWatchJob } from './watch-queue.js';

// The schedulers' fan-out: one job per watched (or spend-counted) project (so projects are looked at in parallel and one
// slow cloud answer holds up no other project), with ids that make a second job for the same project
// a no-op while the first is waiting or running.

export async function fanOutPolls(deps: WatchDeps): Promise<string> {
  const projects = await createWatchSubscriptions(deps.store).projects();
  const snapshots = createSnapshotStore(deps.store);
  const now = nowOf(deps);
  let queued = 0;
  let backingOff = 0;
  for (const projectId of projects) {
    const backoff = await snapshots.backoff(projectId);
    if (backoff && backoff.until > now) {
      backingOff++;
      continue;
    }
    await addWatchJob(deps.queue, { v: 1, job: 'poll', projectId }, `poll-${projectId}`);
    queued++;
  }
  // A drain that died (crash, final failure) left its lease to lapse: start a new one.
  const outbox = createOutbox(deps.store);
  const kicked: Array<{ target: string; token: string }> = [];
  for (const target of await outbox.targets()) {
    const token = await outbox.kick(target);
    if (token) kicked.push({ target, token });
  }
  await startDrains(deps, kicked);
  return `${queued} project(s) to look at, ${backingOff} backing off, ${kicked.length} outbox(es) restarted`;
}

export async function fanOutIdleChecks(deps: WatchDeps): Promise<string> {
  if (!deps.snapshots) return 'metrics are not configured: no idle checks';
  const subscriptions = createWatchSubscriptions(deps.store);
  const projects: string[] = [];
  // Idle alerts go to watching channels: a project looked at only for its spend gets none.
  for (const projectId of await subscriptions.projects()) {
    if ((await subscriptions.channelsOf(projectId)).length > 0) projects.push(projectId);
  }
  for (const projectId of projects) {
    await addWatchJob(deps.queue, { v: 1, job: 'idle', projectId }, `idle-${projectId}`);
  }
  return `${projects.length} project(s) to check for idle GPUs`;
}
