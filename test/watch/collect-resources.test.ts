import { describe, expect, it } from 'vitest';
import type { Instance, KubernetesCluster } from '../../src/cloud/index.js';
import { type Listings, resourcesOf } from '../../src/watch/collect-resources.js';
import { diffSnapshots } from '../../src/watch/diff-snapshot.js';

// A look hands on the last look's objects for what did not change, and the last look's whole record
// when nothing did: whatever the listing's order or length, the diff must still see every appearance,
// change and deletion.

const machine = (n: number, state = 'running'): Instance => ({
  id: `i-${n}`,
  name: `train-${n}`,
  type: 'h100-hgx-80gb.1x',
  state,
  image: 'ubuntu-22.04',
  ip: state === 'running' ? `10.0.0.${n}` : null,
  preemptible: false,
  userData: null,
});

const cluster = (version: string): KubernetesCluster =>
  ({ id: 'k-1', name: 'prod', version, status: { type: 'running' } }) as KubernetesCluster;

const listing = (instances: Instance[], k8s: KubernetesCluster[] = []): Omit<Listings, 'calls'> => ({
  instances,
  k8s,
  k8sPools: [],
  slurm: [],
  slurmPools: [],
});

const fleet = (count: number) => Array.from({ length: count }, (_, i) => machine(i + 1));

/** What a person would read: each change as type and name. */
const described = (previous: ReturnType<typeof resourcesOf>, next: ReturnType<typeof resourcesOf>) =>
  diffSnapshots(previous, next).map((c) => `${c.type}:${c.resource.name}`);

describe('resourcesOf', () => {
  it('reports nothing for an unchanged fleet, listed again in the same or another order', () => {
    const first = resourcesOf(listing(fleet(50), [cluster('1.31')]));
    const again = resourcesOf(listing(fleet(50), [cluster('1.31')]), first);
    expect(described(first, again)).toEqual([]);
    expect(again).toBe(first);
    const reordered = resourcesOf(listing(fleet(50).reverse(), [cluster('1.31')]), first);
    expect(described(first, reordered)).toEqual([]);
    expect(Object.keys(reordered)).toHaveLength(51);
  });

  it('reports the last machines of the listing gone, and new ones at its end appeared', () => {
    const first = resourcesOf(listing(fleet(5)));
    const shorter = resourcesOf(listing(fleet(3)), first);
    expect(described(first, shorter)).toEqual(['gone:train-4', 'gone:train-5']);
    expect(Object.keys(shorter)).toEqual(['instance:i-1', 'instance:i-2', 'instance:i-3']);
    const longer = resourcesOf(listing(fleet(6)), first);
    expect(described(first, longer)).toEqual(['appeared:train-6']);
  });

  it('reports a stopped machine and an upgraded cluster, keeping the others as they were', () => {
    const first = resourcesOf(listing(fleet(4), [cluster('1.31')]));
    const machines = fleet(4);
    machines[2] = machine(3, 'stopped');
    const next = resourcesOf(listing(machines, [cluster('1.32')]), first);
    const changes = diffSnapshots(first, next);
    expect(
      changes.map((c) => (c.type === 'changed' ? c.fields.map((f) => `${f.field}:${f.to}`) : [])),
    ).toEqual([['state:stopped', 'ip:'], ['version:1.32']]);
    expect(next['instance:i-1']).toBe(first['instance:i-1']);
    expect(first['instance:i-3']?.fields.state).toBe('running');
  });

  it('keeps the first of a machine listed twice, and sees the one it displaced gone', () => {
    const first = resourcesOf(listing(fleet(3)));
    const next = resourcesOf(listing([machine(1), machine(1), machine(2)]), first);
    expect(described(first, next)).toEqual(['gone:train-3']);
  });
});
