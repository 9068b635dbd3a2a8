import { describe, expect, it } from 'vitest';
import type { WatchedResource } from '../../src/store/watch-snapshots.js';
import { diffSnapshots } from '../../src/watch/diff-snapshot.js';
import { entriesFor } from '../../src/watch/poll-project.js';
import { changeReply, resourceMessage } from '../../src/watch/watch-changes.js';

const instance = (id: string, name: string, state: string, ip = ''): WatchedResource => ({
  key: `instance:${id}`,
  kind: 'instance',
  id,
  name,
  fields: { state, ip, type: 'h100-hgx-80gb.1x' },
});

const pool = (id: string, count: number, nodes: Record<string, string>): WatchedResource => ({
  key: `k8s-pool:${id}`,
  kind: 'k8s-pool',
  id,
  name: 'gpu',
  parent: 'prod',
  fields: { count: String(count), version: 'v1.31', type: 'h100-hgx-80gb.8x' },
  nodes,
});

const byKey = (...rs: WatchedResource[]) => Object.fromEntries(rs.map((r) => [r.key, r]));

describe('diffSnapshots', () => {
  it('finds nothing between equal snapshots', () => {
    const snap = byKey(instance('a', 'train-1', 'running', '10.0.0.1'));
    expect(diffSnapshots(snap, structuredClone(snap))).toEqual([]);
  });

  it('reports a stop as one state change, and the IP only when it changes', () => {
    const before = byKey(instance('a', 'train-1', 'running', '10.0.0.1'));
    const after = byKey(instance('a', 'train-1', 'stopping', '10.0.0.1'));
    const [change, ...rest] = diffSnapshots(before, after);
    expect(rest).toEqual([]);
    expect(change?.type).toBe('changed');
    if (change?.type !== 'changed') return;
    expect(change.fields).toEqual([{ field: 'state', from: 'running', to: 'stopping' }]);
    expect(changeReply(change)).toBe('state: `running` → `stopping`');
  });

  it('reports appeared and gone resources, in a stable order', () => {
    const before = byKey(instance('b', 'old', 'stopped'));
    const after = byKey(instance('c', 'new-2', 'creating'), instance('a', 'new-1', 'running', '10.0.0.9'));
    const changes = diffSnapshots(before, after);
    expect(changes.map((c) => `${c.type}:${c.resource.name}`)).toEqual([
      'appeared:new-1',
      'appeared:new-2',
      'gone:old',
    ]);
    expect(changeReply(changes[0]!)).toBe(':sparkles: Appeared: running · 10.0.0.9.');
    expect(changeReply(changes[2]!)).toBe(':wastebasket: Deleted (last seen stopped).');
  });

  it('reports node pool resizes and each node that joins, leaves or changes readiness', () => {
    const before = byKey(pool('p', 2, { 'gpu-0': 'ready', 'gpu-1': 'ready' }));
    const after = byKey(
      pool('p', 3, { 'gpu-0': 'ready, not Ready (False)', 'gpu-2': 'ready', 'gpu-3': 'ready' }),
    );
    const [change] = diffSnapshots(before, after);
    if (change?.type !== 'changed') throw new Error('expected a change');
    expect(change.fields).toEqual([{ field: 'count', from: '2', to: '3' }]);
    expect(change.nodes.map((n) => n.node)).toEqual(['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
    const reply = changeReply(change);
    expect(reply).toContain('nodes: `2` → `3`');
    expect(reply).toContain('node `gpu-0`: ready → ready, not Ready (False)');
    expect(reply).toContain('node `gpu-1` left (was ready)');
    expect(reply).toContain('node `gpu-2` joined (ready)');
  });

  it('turns a change into an edit of the resource message and a reply in its thread', () => {
    const before = byKey(instance('a', 'train-1', 'running', '10.0.0.1'));
    const [change] = diffSnapshots(before, {});
    const entries = entriesFor(change!, Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ op: 'message', mode: 'upsert', ref: 'instance:a' });
    expect(entries[1]).toMatchObject({ op: 'message', mode: 'post', thread: 'instance:a', forget: true });
    const message = resourceMessage({ resource: before['instance:a']!, gone: true, at: 0 });
    expect(message.text).toBe('Instance train-1: deleted');
    expect(JSON.stringify(message.blocks)).toContain('*train-1* · deleted (was running · 10.0.0.1)');
  });

  it('escapes names so a resource cannot post Slack markup', () => {
    const r = instance('x', '<!channel>', 'running');
    expect(JSON.stringify(resourceMessage({ resource: r, at: 0 }).blocks)).toContain('&lt;!channel&gt;');
  });
});
