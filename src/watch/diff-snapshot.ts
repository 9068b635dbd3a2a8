import { resourceList, type WatchedKind, type WatchedResource } from '../store/watch-snapshots.js';

// What changed between two polls of a project, resource by resource: appeared, changed (which fields,
// which nodes), or gone. The poller feeds it the stored snapshot and the fresh listing; the one thing it
// writes is the listing's unchanged resources, replaced by the stored (equal) objects, so that the
// snapshot store writes only resources that are not the ones it holds (store/watch-snapshots.ts).

export interface FieldChange {
  readonly field: string;
  readonly from: string;
  readonly to: string;
}

export interface NodeChange {
  readonly node: string;
  /** Undefined: the node is new. */
  readonly from?: string;
  /** Undefined: the node is gone. */
  readonly to?: string;
}

export type ResourceChange =
  | { readonly type: 'appeared'; readonly resource: WatchedResource }
  | {
      readonly type: 'changed';
      readonly resource: WatchedResource;
      readonly previous: WatchedResource;
      readonly fields: readonly FieldChange[];
      readonly nodes: readonly NodeChange[];
    }
  /** `resource` is how it was last seen. */
  | { readonly type: 'gone'; readonly resource: WatchedResource };

const KIND_ORDER: Readonly<Record<WatchedKind, number>> = {
  instance: 0,
  'k8s-cluster': 1,
  'k8s-pool': 2,
  'slurm-cluster': 3,
  'slurm-pool': 4,
};

/** Fields in the order people read them; any other field follows, alphabetically. */
const FIELD_ORDER = ['state', 'status', 'ip', 'count', 'version', 'type', 'name'];

function fieldRank(field: string): number {
  const i = FIELD_ORDER.indexOf(field);
  return i === -1 ? FIELD_ORDER.length : i;
}

function compareResources(a: WatchedResource, b: WatchedResource): number {
  return (
    KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
    (a.parent ?? '').localeCompare(b.parent ?? '') ||
    a.name.localeCompare(b.name) ||
    a.id.localeCompare(b.id)
  );
}

function fieldChanges(previous: WatchedResource, next: WatchedResource): FieldChange[] {
  const names = new Set([...Object.keys(previous.fields), ...Object.keys(next.fields), 'name']);
  const out: FieldChange[] = [];
  for (const field of names) {
    const from = field === 'name' ? previous.name : (previous.fields[field] ?? '');
    const to = field === 'name' ? next.name : (next.fields[field] ?? '');
    if (from !== to) out.push({ field, from, to });
  }
  return out.sort((a, b) => fieldRank(a.field) - fieldRank(b.field) || a.field.localeCompare(b.field));
}

function nodeChanges(previous: WatchedResource, next: WatchedResource): NodeChange[] {
  const before = previous.nodes ?? {};
  const after = next.nodes ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: NodeChange[] = [];
  for (const node of names) {
    const from = before[node];
    const to = after[node];
    if (from === to) continue;
    out.push({ node, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) });
  }
  return out;
}

/** Same keys, same values; no allocation (a look compares every resource of the fleet). */
function sameRecord(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  let count = 0;
  if (a) {
    for (const key in a) {
      if (a[key] !== b?.[key]) return false;
      count++;
    }
  }
  if (b) for (const _ in b) count--;
  return count === 0;
}

/** Same name, same fields, same nodes: nothing to report (the exact comparison below agrees). */
export function sameResource(previous: WatchedResource, next: WatchedResource): boolean {
  return (
    previous.name === next.name &&
    sameRecord(previous.fields, next.fields) &&
    sameRecord(previous.nodes, next.nodes)
  );
}

/**
 * Every difference between two snapshots' resources, in a stable reading order. Unchanged resources of
 * `next` become `previous`'s objects.
 */
export function diffSnapshots(
  previous: Readonly<Record<string, WatchedResource>>,
  next: Record<string, WatchedResource>,
): ResourceChange[] {
  // A look that found every resource as it was hands on the last look's record itself.
  if (next === previous) return [];
  const changes: ResourceChange[] = [];
  let kept = 0;
  const list = resourceList(next);
  for (let i = 0; i < list.length; i++) {
    const resource = list[i]!;
    const before = previous[resource.key];
    if (!before) {
      changes.push({ type: 'appeared', resource });
      continue;
    }
    // Most resources did not change: say so without building the field and node lists.
    kept++;
    if (before === resource) continue;
    if (sameResource(before, resource)) {
      next[resource.key] = before;
      list[i] = before;
      continue;
    }
    const fields = fieldChanges(before, resource);
    const nodes = nodeChanges(before, resource);
    if (fields.length > 0 || nodes.length > 0) {
      changes.push({ type: 'changed', resource, previous: before, fields, nodes });
    }
  }
  // Every resource of `previous` still listed was met above: look for the gone ones only if some are.
  const previousList = resourceList(previous);
  if (previousList.length > kept) {
    for (const r of previousList) if (!(r.key in next)) changes.push({ type: 'gone', resource: r });
  }
  return changes.sort((a, b) => compareResources(a.resource, b.resource));
}

/** The keys a snapshot store writes for these changes: new or changed resources, and gone ones. */
export function changedKeys(changes: readonly ResourceChange[]): { set: string[]; gone: string[] } {
  return {
    set: changes.filter((c) => c.type !== 'gone').map((c) => c.resource.key),
    gone: changes.filter((c) => c.type === 'gone').map((c) => c.resource.key),
  };
}
