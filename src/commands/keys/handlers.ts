import { CloudBadRequestError, CloudNotFoundError, type SshKey } from '../../cloud/index.js';
import { keyAddedBlocks, keyLine, shortKey } from '../../render/ssh-keys.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { requirePlatform } from '../kit/require-platform.js';
import type { CommandOf } from '../registry.js';

// Account SSH keys (platform API) and their Slack owners (store). The Slack user who adds a key
// through gpuops owns it: only they may remove it; a key added elsewhere has no owner yet.

type KeyArgs = Extract<CommandOf<'keys.add'>, { modal: false }>;

/** Type and key data decide whether two keys are the same; the comment may differ. */
export function sameKey(a: string, b: string): boolean {
  const [ta, ba] = a.trim().split(/\s+/);
  const [tb, bb] = b.trim().split(/\s+/);
  return ta === tb && ba === bb && ba !== undefined;
}

export async function listKeys(run: JobRun): Promise<Outcome> {
  const platform = requirePlatform(run);
  const keys = await platform.listSshKeys({ signal: run.signal });
  keys.sort((a, b) => a.name.localeCompare(b.name));
  const owners = await Promise.all(keys.map((k) => run.deps.store.keyOwner(k.name)));
  const lines = keys.map((k, i) =>
    keyLine({ name: k.name, publicKey: k.public_key, ownerId: owners[i]?.userId }),
  );
  const { text, blocks } = pagedList(run.data.command, `SSH keys on the account (${keys.length})`, lines);
  return { detail: text, result: blocks };
}

type AddProgress = { sent: boolean };

/**
 * Idempotent by name: a key of that name with the same public key is adopted (a retry after the add
 * got through, or the user adding it twice); with a different public key the name is taken.
 */
export async function addKey(run: JobRun, command: KeyArgs): Promise<Outcome> {
  const platform = requirePlatform(run);
  const { store } = run.deps;
  const userId = run.data.ctx.userId;
  const sent = run.progress<AddProgress>().sent === true;
  const existing = (await platform.listSshKeys({ signal: run.signal })).find((k) => k.name === command.name);
  let how: 'added' | 'already yours' | 'adopted' = 'added';
  if (existing) {
    checkSameKey(existing, command, sent);
    const owner = await store.keyOwner(command.name);
    if (owner && owner.userId !== userId) {
      throw new PermanentJobError(
        `The SSH key ${command.name} is already on the account, added by another Slack user; it stays theirs. Nothing to do unless you meant another key.`,
      );
    }
    if (!sent) how = owner ? 'already yours' : 'adopted';
  } else {
    await run.update('working', `Adding SSH key ${command.name} to the account…`);
    await run.saveProgress({ sent: true });
    try {
      await platform.addSshKey({ name: command.name, public_key: command.publicKey }, { signal: run.signal });
    } catch (err) {
      // Another request may have added the same name a moment ago: decide on what the account holds now.
      if (!(err instanceof CloudBadRequestError)) throw err;
      const now = (await platform.listSshKeys({ signal: run.signal })).find((k) => k.name === command.name);
      if (!now) throw err;
      checkSameKey(now, command, false);
    }
  }
  await store.addKeyOwner({
    name: command.name,
    userId,
    publicKey: command.publicKey,
    addedAt: run.now(),
  });
  const key = shortKey(command.publicKey, false);
  const detail = {
    added: `Added SSH key ${command.name} (${key}) to the account.`,
    'already yours': `SSH key ${command.name} (${key}) is already on the account and yours; nothing to do.`,
    adopted: `SSH key ${command.name} (${key}) was already on the account with this public key; it is now recorded as yours.`,
  }[how];
  return {
    detail,
    result: keyAddedBlocks({ name: command.name, publicKey: command.publicKey, ownerId: userId }),
  };
}

function checkSameKey(existing: SshKey, command: KeyArgs, sent: boolean): void {
  const same = existing.public_key ? sameKey(existing.public_key, command.publicKey) : sent;
  if (!same) {
    // The platform API may leave the key out: then all we know is that the name is taken.
    const why = existing.public_key ? ' with a different public key' : '';
    throw new PermanentJobError(
      `An SSH key named ${command.name} is already on the account${why}; pick another name, e.g. /gpu keys add ${command.name}-2 <public key>.`,
    );
  }
}

type RemoveProgress = { sent: boolean };

/** Only the owner may remove a key they own; a key with no recorded owner may be removed by anyone. */
export async function removeKey(run: JobRun, command: CommandOf<'keys.rm'>): Promise<Outcome> {
  const platform = requirePlatform(run);
  const { store } = run.deps;
  const owner = await store.keyOwner(command.name);
  if (owner && owner.userId !== run.data.ctx.userId) {
    throw new PermanentJobError(
      `The SSH key ${command.name} belongs to the Slack user who added it; only they can remove it.`,
    );
  }
  const sentBefore = run.progress<RemoveProgress>().sent === true;
  await run.update('working', `Removing SSH key ${command.name} from the account…`);
  await run.saveProgress({ sent: true });
  try {
    await platform.deleteSshKey(command.name, { signal: run.signal });
  } catch (err) {
    if (!(err instanceof CloudNotFoundError)) throw err;
    // Gone: removed by this job's earlier attempt, or never there.
    await store.removeKeyOwner(command.name);
    if (!sentBefore) {
      throw new PermanentJobError(
        `There is no SSH key named ${command.name} on the account; /gpu keys lists the keys there are.`,
      );
    }
  }
  await store.removeKeyOwner(command.name);
  return { detail: `Removed SSH key ${command.name} from the account.` };
}

export const handlers = {
  keys: listKeys,
  'keys.add': (run, command) => {
    if (command.modal)
      throw new PermanentJobError('Send the key with the request: /gpu keys add <name> <public key>.');
    return addKey(run, command);
  },
  'keys.rm': removeKey,
} satisfies Handlers;
