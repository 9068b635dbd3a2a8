import { CloudNotFoundError } from '../../cloud/index.js';
import { UUID } from '../../cloud/rules.js';
import { PermanentJobError } from './job-errors.js';

// `<instance>` and cluster arguments accept a name or an id within the channel's project.

/** Where each kind of thing is looked for, and the command that lists it, for the answer to a miss. */
const PLACES: Readonly<
  Record<string, { readonly place: string; readonly whose: string; readonly list: string }>
> = {
  instance: { place: 'in this project', whose: 'This project', list: '/gpu ls' },
  filesystem: { place: 'in this project', whose: 'This project', list: '/gpu fs' },
  'Kubernetes cluster': { place: 'in this project', whose: 'This project', list: '/gpu k8s ls' },
  'Slurm cluster': { place: 'in this project', whose: 'This project', list: '/gpu slurm ls' },
  project: { place: 'in this organization', whose: 'It', list: '/gpu projects' },
};
const ELSEWHERE = { place: 'in this project', whose: 'This project', list: '/gpu help' };

interface Named {
  readonly id: string;
  readonly name: string;
}

/**
 * Finds one resource by id or name in a listing. Unknown → a message naming what exists; a name used
 * twice → a message listing the ids to choose from.
 */
export function pickByRef<T extends Named>(items: readonly T[], ref: string, what: string): T {
  const byId = items.find((i) => i.id === ref);
  if (byId) return byId;
  const byName = items.filter((i) => i.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new PermanentJobError(
      `${byName.length} ${what}s are named "${ref}"; give the id instead: ${byName.map((i) => i.id).join(', ')}.`,
    );
  }
  const { place, whose, list } = PLACES[what] ?? ELSEWHERE;
  const names = items.map((i) => i.name).slice(0, 10);
  const known =
    names.length > 0
      ? ` ${whose} has: ${names.join(', ')}${items.length > 10 ? ', …' : ''}.`
      : ` ${whose} has no ${what}s.`;
  throw new PermanentJobError(`No ${what} "${ref}" ${place}.${known} Check the name with ${list}.`);
}

/** Resolves by id directly when the ref is a UUID and the API can get it, else by listing. */
export async function resolveRef<T extends Named>(
  ref: string,
  what: string,
  list: () => Promise<T[]>,
  get?: (id: string) => Promise<T>,
): Promise<T> {
  if (get && UUID.test(ref)) {
    try {
      return await get(ref);
    } catch (err) {
      if (err instanceof CloudNotFoundError)
        throw new PermanentJobError(
          `No ${what} with id ${ref} ${(PLACES[what] ?? ELSEWHERE).place}: check the id with ${(PLACES[what] ?? ELSEWHERE).list}.`,
        );
      throw err;
    }
  }
  return pickByRef(await list(), ref, what);
}
