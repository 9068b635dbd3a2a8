import type { KnownBlock } from '@slack/types';
import type { Instance } from '../../cloud/index.js';
import { type LoginKeys, loginUserFor, sshLoginText } from '../../render/ssh-login.js';
import type { Store } from '../../store/store.js';
import type { JobRun } from './job-run.js';

// The "how do I log in" line under a machine's answer (create, start, show): `ssh <user>@<ip>` and the
// key to use. Only for a running machine with an address: that is where one connects.

/** The account key the cloud says the machine was made with (create by GPU type names one). */
export function madeWithKeyName(instance: Instance): string | undefined {
  const key = (instance as Record<string, unknown>).ssh_key;
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/** The machine's own key when known, else the keys `userId` added through gpuops. */
export async function loginKeysOf(
  store: Pick<Store, 'keysOf' | 'keyOwner'>,
  userId: string,
  madeWith: string | undefined,
): Promise<LoginKeys> {
  if (madeWith !== undefined) {
    const owner = await store.keyOwner(madeWith);
    return { madeWith: { name: madeWith, publicKey: owner?.publicKey }, own: [] };
  }
  const own = await store.keysOf(userId);
  return { own: own.map((k) => ({ name: k.name, publicKey: k.publicKey })) };
}

/** The login line as a block for the requester of `run`, or nothing when the machine cannot be reached. */
export async function loginBlock(run: JobRun, instance: Instance): Promise<KnownBlock | undefined> {
  if (instance.state !== 'running' || !instance.ip) return undefined;
  const user = loginUserFor(run.deps.login, instance);
  let keys: LoginKeys | undefined;
  try {
    keys = await loginKeysOf(run.deps.store, run.data.ctx.userId, madeWithKeyName(instance));
  } catch (err) {
    // The machine is made or started: a Redis hiccup costs the key's name, not the answer.
    run.deps.log.warn({ err }, 'could not read the SSH keys for the login line');
  }
  return { type: 'section', text: { type: 'mrkdwn', text: sshLoginText(user, instance.ip, keys) } };
}
