import { CloudApiError, CloudNotFoundError, type Filesystem } from '../../cloud/index.js';
import { filesystemDetailBlocks, filesystemLine } from '../../render/filesystems.js';
import { markNotSent, markSent, waitOutEarlierSend } from '../kit/earlier-send.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { resolveRef } from '../kit/resolve.js';
import type { CommandOf } from '../registry.js';

export async function listFilesystems(run: JobRun): Promise<Outcome> {
  const all = await run.deps.cloud.listFilesystems(run.call);
  all.sort((a, b) => a.name.localeCompare(b.name));
  const { text, blocks } = pagedList(
    run.data.command,
    `Filesystems (${all.length})`,
    all.map(filesystemLine),
  );
  return { detail: text, result: blocks };
}

/** One filesystem by name or id, privately: its size, state and id (to attach or delete it). */
export async function showFilesystem(run: JobRun, command: CommandOf<'fs.show'>): Promise<Outcome> {
  const { cloud } = run.deps;
  const fs = await resolveRef(
    command.name,
    'filesystem',
    () => cloud.listFilesystems(run.call),
    (id) => cloud.getFilesystem({ id }, run.call),
  );
  return { detail: `${fs.name}: ${fs.size}`, result: filesystemDetailBlocks(fs) };
}

type CreateProgress = { filesystemId: string; sent: boolean };

/**
 * Idempotent by name where the cloud lists filesystems (C): a filesystem of that name is this job's
 * own only if this job recorded that it sent the create; any other is a name already taken. Where it
 * cannot list (B), a create whose answer was lost is not sent again: it asks the user to check.
 */
export async function createFilesystem(run: JobRun, command: CommandOf<'fs.create'>): Promise<Outcome> {
  const { cloud } = run.deps;
  let filesystemId = run.progress<CreateProgress>().filesystemId;
  let made: Filesystem | undefined;
  if (!filesystemId) {
    const sent = run.progress<CreateProgress>().sent === true;
    if (cloud.supports('listFilesystems')) {
      const named = async () =>
        (await cloud.listFilesystems(run.call)).filter((f) => f.name === command.name);
      let existing = await named();
      // An earlier attempt's create may still be held by the cloud: wait it out before sending another.
      if (existing.length === 0 && (await waitOutEarlierSend(run, cloud.timeoutMs))) existing = await named();
      if (sent && existing.length === 1) {
        made = existing[0]!;
      } else if (existing.length > 0) {
        throw new PermanentJobError(
          `A filesystem named ${command.name} already exists in this project (${existing[0]!.size}); pick another name, or attach that one with --fs ${command.name}.`,
        );
      }
    } else if (sent) {
      throw new PermanentJobError(
        `The create of filesystem ${command.name} was sent but its answer was lost, and this cloud cannot list filesystems to check whether it was made; look in the cloud console before asking again.`,
      );
    }
    if (!made) {
      await run.update('working', `Creating filesystem ${command.name} (${command.size})…`);
      await markSent(run);
      try {
        made = await cloud.createFilesystem({ name: command.name, size: command.size }, run.call);
      } catch (err) {
        // The cloud answered with an error, so nothing was made: a retry may send the create again.
        if (err instanceof CloudApiError) await markNotSent(run);
        throw err;
      }
    }
    filesystemId = made.id;
    await run.saveProgress({ filesystemId });
  }
  const fs = made ?? (await readFilesystem(run, filesystemId));
  if (!fs) {
    throw new PermanentJobError(
      `Filesystem ${command.name} was created but is gone now; it may have been deleted.`,
    );
  }
  return {
    detail: `Filesystem ${fs.name} (${fs.size}) is ready; attach it with /gpu create … --fs ${fs.name}.`,
    result: filesystemDetailBlocks(fs),
  };
}

async function readFilesystem(run: JobRun, id: string): Promise<Filesystem | undefined> {
  try {
    return await run.deps.cloud.getFilesystem({ id }, run.call);
  } catch (err) {
    if (err instanceof CloudNotFoundError) return undefined;
    throw err;
  }
}

type RemoveProgress = { filesystemId: string; name: string; size: string };

export async function deleteFilesystem(run: JobRun, command: CommandOf<'fs.rm'>): Promise<Outcome> {
  const { cloud } = run.deps;
  // A retry works on what the first attempt resolved: the name may no longer list once deleted.
  let target = run.progress<RemoveProgress>();
  if (!target.filesystemId) {
    const fs = await resolveRef(
      command.name,
      'filesystem',
      () => cloud.listFilesystems(run.call),
      cloud.supports('getFilesystem') ? (id) => cloud.getFilesystem({ id }, run.call) : undefined,
    );
    target = { filesystemId: fs.id, name: fs.name, size: fs.size };
    await run.saveProgress(target);
  }
  const name = target.name ?? command.name;
  await run.update('working', `Deleting filesystem ${name}…`);
  try {
    await cloud.deleteFilesystem({ id: target.filesystemId! }, run.call);
  } catch (err) {
    // A retry whose first attempt got through finds it gone: that is the goal.
    if (!(err instanceof CloudNotFoundError)) throw err;
  }
  return { detail: `Filesystem ${name}${target.size ? ` (${target.size})` : ''} is deleted.` };
}

export const handlers = {
  fs: listFilesystems,
  'fs.show': showFilesystem,
  'fs.create': createFilesystem,
  'fs.rm': deleteFilesystem,
} satisfies Handlers;
