import { deletedProblem, missingProblem, unknownTypeProblem } from '../commands/kit/reference-problem.js';
import { type GpuCommand, referencesOf } from '../commands/registry.js';
import type { Reference } from '../commands/spec.js';
import type { PricingPolicy } from '../pricing/cost.js';
import type { Catalog } from '../store/catalog-cache.js';

// Before a request is queued or goes to an approver: does every name it gives exist (its instance,
// filesystems, a cluster, an SSH key, a schedule id), is its type one this cloud sells? Nobody else sees a typo, and an
// approver only ever sees requests that would run. Pure: the caller reads the cached catalogue
// (refreshed for the purpose when it does not know a name) and the channel's schedules, and says
// whether the instance was remembered from a create.

export interface TargetProblem {
  /** Slack mrkdwn: what is wrong and how to fix it. */
  readonly message: string;
  /** The same in plain text, for a form field. */
  readonly plain: string;
  /** The form field it belongs to (a workflow step's channel has none). */
  readonly field: Reference['what'] | 'channel';
}

/** What the names of a request are checked against; a listing left out is not checked. */
export interface TargetListings {
  readonly catalog?: Catalog | undefined;
  /** True when a create made the command's instance since the catalogue's last refresh. */
  readonly remembered?: boolean;
  /** The command's instance, when a job of gpuops deleted it after the catalogue listed it. */
  readonly gone?: string | undefined;
  /** The ids of the channel's schedules. */
  readonly schedules?: readonly string[] | undefined;
  readonly pricing?: PricingPolicy | undefined;
}

/** Kinds of names a listing made seconds ago may know when the cached one does not. */
export function mayBeNew(what: TargetProblem['field']): boolean {
  return what !== 'type' && what !== 'schedule' && what !== 'channel';
}

interface Named {
  readonly id: string;
  readonly name: string;
}

function missingFrom(
  what: Exclude<Reference['what'], 'type' | 'schedule'>,
  ref: string,
  items: readonly Named[] | undefined,
): TargetProblem | undefined {
  if (!items || items.some((i) => i.name === ref || i.id === ref)) return undefined;
  return {
    field: what,
    ...missingProblem(
      what,
      ref,
      items.map((i) => i.name),
    ),
  };
}

function problemOf(ref: Reference, listings: TargetListings): TargetProblem | undefined {
  const { catalog } = listings;
  switch (ref.what) {
    case 'instance':
      if (listings.gone === ref.ref) return { field: 'instance', ...deletedProblem(ref.ref) };
      return listings.remembered ? undefined : missingFrom('instance', ref.ref, catalog?.instances);
    case 'filesystem':
      return missingFrom('filesystem', ref.ref, catalog?.filesystems);
    case 'k8s cluster':
      return missingFrom('k8s cluster', ref.ref, catalog?.k8sClusters);
    case 'slurm cluster':
      return missingFrom('slurm cluster', ref.ref, catalog?.slurmClusters);
    case 'key':
      // Keys have a name and no id.
      return missingFrom(
        'key',
        ref.ref,
        catalog?.sshKeys?.map((name) => ({ id: name, name })),
      );
    case 'schedule': {
      const ids = listings.schedules;
      if (!ids || ids.includes(ref.ref)) return undefined;
      return { field: 'schedule', ...missingProblem('schedule', ref.ref, ids) };
    }
    case 'type': {
      const problem = catalog ? unknownTypeProblem(ref.ref, catalog, listings.pricing) : undefined;
      return problem ? { field: 'type', ...problem } : undefined;
    }
  }
}

/**
 * What stops the request from running, or undefined when it would run (or cannot be checked: a
 * listing that never succeeded, a cloud that lists no types).
 */
export function targetProblem(command: GpuCommand, listings: TargetListings): TargetProblem | undefined {
  for (const ref of referencesOf(command)) {
    const problem = problemOf(ref, listings);
    if (problem) return problem;
  }
  return undefined;
}
