import type { Redis } from 'ioredis';
import type { InfraClient } from '../cloud/index.js';
import type { ListedMachine, MachineListing, MachineReader } from '../home/home-deps.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import { addWatchJob, createWatchQueue, type WatchQueue } from '../watch/watch-queue.js';
import type { Lifecycle } from './lifecycle.js';

// The Home tab's reader of the cloud (docs/home.md): a project no channel watches has its machines
// listed when someone opens their Home, at most once per CACHE_SECONDS for everyone (the listing is
// cached in Redis, so replicas share it) and never for longer than READ_MS: a cloud that is slow to
// answer leaves those machines "state unknown" instead of holding the page back. A job that changed
// a machine of the project since the cached listing began makes the next Home list it afresh.

/** How long one project's listing serves every Home opened after it. */
export const HOME_LISTING_CACHE_SECONDS = 15;
/** How long a Home waits for the cloud's listing. */
export const HOME_LISTING_READ_MS = 2_000;

const cacheName = (projectId: string) => `home-machines:${projectId}`;

export function cloudMachineReader(cloud: InfraClient, store: Store, log: Logger): MachineReader {
  return async (projectId, options) => {
    const cached = await store.cached<MachineListing>(cacheName(projectId));
    // A listing begun before a job changed a machine of the project would show it as it was.
    const after = options?.after ?? 0;
    if (
      cached &&
      cached.value.listedAt >= after &&
      Date.now() - cached.value.listedAt < HOME_LISTING_CACHE_SECONDS * 1000
    ) {
      return cached.value;
    }
    try {
      const signal = AbortSignal.timeout(HOME_LISTING_READ_MS);
      const listedAt = Date.now();
      const instances = await cloud.listInstances({ projectId, signal });
      const machines: ListedMachine[] = instances.map((i) => ({
        id: i.id,
        name: i.name,
        state: i.state,
        type: i.type,
        ...(i.ip ? { ip: i.ip } : {}),
      }));
      const listing: MachineListing = { machines, listedAt };
      await store.putCache(cacheName(projectId), listing, HOME_LISTING_CACHE_SECONDS);
      return listing;
    } catch (err) {
      log.warn(
        { err, projectId },
        'could not list a project for a Home tab; its machines show state unknown',
      );
      return undefined;
    }
  };
}

/**
 * For a process without the cloud client (`gpuops web`): asks a worker to publish someone's Home again
 * (the watchers' `home` job, under the same id as their re-publish after changes), so that its machines
 * of unwatched projects are read from the cloud there. The queue is opened on first use.
 */
export function homeByWorker(connection: Redis, lifecycle: Lifecycle): (userId: string) => Promise<void> {
  let queue: WatchQueue | undefined;
  return async (userId) => {
    if (!queue) {
      queue = createWatchQueue(connection);
      queue.on('error', () => {}); // the connection's own listener reports it
      const opened = queue;
      lifecycle.opened('home watch queue', () => opened.close());
    }
    await addWatchJob(queue, { v: 1, job: 'home', userId }, `home-${userId}`);
  };
}
