import { describe, expect, it } from 'vitest';
import { checkBlocks, LIMITS } from '../../src/devkit/block-kit-limits.js';
import type { WatchedResource } from '../../src/store/watch-snapshots.js';
import { diffSnapshots } from '../../src/watch/diff-snapshot.js';
import { GROUP_FROM, lookSummary } from '../../src/watch/look-summary.js';
import { entriesForLook } from '../../src/watch/poll-project.js';

// How a look's changes read in a watching channel: a few as each resource's own message, many as one
// summary with every change in its thread, each message within Slack's limits.

const machine = (i: number, state: string, type = 'h100-hgx-80gb.1x'): WatchedResource => ({
  key: `instance:i-${i}`,
  kind: 'instance',
  id: `i-${String(i).padStart(8, '0')}`,
  name: `train-${String(i).padStart(4, '0')}`,
  fields: { state, ip: '', type },
});

const byKey = (rs: WatchedResource[]) => Object.fromEntries(rs.map((r) => [r.key, r]));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** n machines stopped between two looks. */
function stops(n: number) {
  return diffSnapshots(
    byKey(range(n).map((i) => machine(i, 'running'))),
    byKey(range(n).map((i) => machine(i, 'stopped'))),
  );
}

const AT = Date.UTC(2026, 0, 2, 3, 4, 5);

describe('the messages of one look', () => {
  it(`keeps a look of fewer than ${GROUP_FROM} changes as each machine's own message and reply`, () => {
    const entries = entriesForLook(stops(GROUP_FROM - 1), AT, 'p-1');
    expect(entries).toHaveLength(2 * (GROUP_FROM - 1));
    expect(entries[0]).toMatchObject({
      mode: 'upsert',
      ref: 'instance:i-0',
      text: 'Instance train-0000: stopped',
    });
    expect(entries[1]).toMatchObject({
      mode: 'post',
      thread: 'instance:i-0',
      text: 'state: `running` → `stopped`',
    });
  });

  it(`groups a look of ${GROUP_FROM} changes or more: one summary, every change in its thread`, () => {
    const entries = entriesForLook(stops(GROUP_FROM), AT, 'p-1');
    expect(entries).toHaveLength(2);
    const [summary, details] = entries;
    expect(summary).toMatchObject({ op: 'message', mode: 'post', ref: `look:p-1:${AT}` });
    expect(summary!.op === 'message' && summary!.text).toBe(
      `${GROUP_FROM} changes in project p-1: ${GROUP_FROM} changed. Every change is in the thread.`,
    );
    expect(details).toMatchObject({ op: 'message', mode: 'post', thread: `look:p-1:${AT}`, forget: true });
    expect(JSON.stringify(details)).toContain(
      '• *train-0000* (`i-000000`, h100-hgx-80gb.1x): state: `running` → `stopped`',
    );
  });

  it('counts a mixed look by what happened, by state now and by type, and names the first few', () => {
    const before = byKey([machine(1, 'running'), machine(2, 'running'), machine(3, 'stopped', 'cpu.16x')]);
    const after = byKey([
      machine(2, 'stopped'),
      machine(3, 'running', 'cpu.16x'),
      ...range(5).map((i) => machine(10 + i, 'starting', 'cpu.16x')),
    ]);
    const { text, blocks } = lookSummary({ changes: diffSnapshots(before, after), projectId: 'p-1', at: AT });
    expect(text).toBe(
      '8 changes in project p-1: 5 appeared, 2 changed, 1 deleted. Every change is in the thread.',
    );
    const shown = JSON.stringify(blocks);
    expect(shown).toContain('*8 changes* at one look: 5 appeared, 2 changed, 1 deleted.');
    expect(shown).toContain('*State now:* 5 starting · 1 deleted · 1 running · 1 stopped');
    expect(shown).toContain('*Type:* 6 cpu.16x · 2 h100-hgx-80gb.1x');
    expect(shown).toContain(
      '*Among them:* *train-0001*, *train-0002*, *train-0003*, *train-0010*, *train-0011* and 3 more',
    );
    expect(checkBlocks(blocks, 'message')).toEqual([]);
  });

  it('packs 10,000 changes with long lines into as few messages as the limits allow, none lost', () => {
    // Long names and node pools with many nodes changing: lines of up to 1,000 characters.
    const pool = (i: number, state: string): WatchedResource => ({
      key: `k8s-pool:p-${i}`,
      kind: 'k8s-pool',
      id: `pool-${i}`,
      name: `pool-${i}-${'x'.repeat(60)}`,
      parent: 'prod',
      fields: { count: '64', type: 'h100-hgx-80gb.8x' },
      nodes: Object.fromEntries(range(64).map((n) => [`node-${n}`, state])),
    });
    const before = byKey([
      ...range(9_990).map((i) => machine(i, 'running')),
      ...range(10).map((i) => pool(i, 'ready')),
    ]);
    const after = byKey([
      ...range(9_990).map((i) => machine(i, 'stopped')),
      ...range(10).map((i) => pool(i, 'down')),
    ]);
    const entries = entriesForLook(diffSnapshots(before, after), AT, 'p-1');
    const [, ...pages] = entries;
    let lines = 0;
    let chars = 0;
    for (const page of pages) {
      if (page.op !== 'message') throw new Error('a page is a message');
      expect(checkBlocks(page.blocks, 'message')).toEqual([]);
      const texts = (page.blocks as Array<{ text: { text: string } }>).map((b) => b.text.text);
      const size = texts.reduce((n, t) => n + t.length, 0);
      expect(size).toBeLessThan(LIMITS.messageText);
      lines += texts.reduce((n, t) => n + t.split('\n').length, 0);
      chars += size;
    }
    expect(lines).toBe(10_000);
    expect(pages.at(-1)).toMatchObject({ forget: true });
    // As few pages as the characters need (a page is at most 38,000 of them), give or take one.
    expect(pages.length).toBeLessThanOrEqual(Math.ceil(chars / 38_000) + 1);
    const texts = pages.map((p) => (p.op === 'message' ? p.text : ''));
    expect(texts[0]).toMatch(/^Changes 1–\d{3} of 10,000$/);
    expect(texts.at(-1)).toMatch(/^Changes [\d,]+–10,000 of 10,000$/);
  });
});
