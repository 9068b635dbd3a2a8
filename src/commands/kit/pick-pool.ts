import { PermanentJobError } from './job-errors.js';

interface NamedPool {
  readonly id: string;
  readonly name: string;
}

/**
 * A node pool of one cluster by id or name. Unknown → a message naming the cluster's pools; a name
 * used twice → the ids to choose from.
 */
export function pickPool<T extends NamedPool>(
  pools: readonly T[],
  ref: string,
  cluster: string,
  family: 'k8s' | 'slurm',
): T {
  const byId = pools.find((p) => p.id === ref);
  if (byId) return byId;
  const byName = pools.filter((p) => p.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new PermanentJobError(
      `${byName.length} node pools of ${cluster} are named "${ref}"; give the id instead: ${byName.map((p) => p.id).join(', ')}.`,
    );
  }
  const names = pools.map((p) => p.name).slice(0, 10);
  const known =
    names.length > 0
      ? ` Its pools: ${names.join(', ')}${pools.length > 10 ? ', …' : ''}.`
      : ' It has no node pools.';
  throw new PermanentJobError(
    `Cluster ${cluster} has no node pool "${ref}".${known} Check the name with /gpu ${family} pools ${cluster}.`,
  );
}
