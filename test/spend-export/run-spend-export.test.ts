import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { lastDayOf, runSpendExport } from '../../src/spend-export/run-spend-export.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { createStore, type Store } from '../../src/store/store.js';
import {
  createSnapshotStore,
  type ProjectSnapshot,
  type WatchedResource,
} from '../../src/store/watch-snapshots.js';
import { createWatchSubscriptions } from '../../src/store/watch-subscriptions.js';
import { changedKeys, diffSnapshots } from '../../src/watch/diff-snapshot.js';
import { ledgerChange } from '../../src/watch/spend.js';
import { redisDb, spawnGpuops } from '../support/gpuops-process.js';

// `gpuops spend export --month YYYY-MM`: the ledger's rows as CSV, one per machine and day, whose
// dollars add up to the ledger's month. A database of its own: the command reads the production
// prefix `gpuops`.

const DB = 10;
const ML = '3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const WEB = '4d2e1f30-6b7c-4d8e-9f00-1b2c3d4e5f60';
const PRICES = {
  configurations: [
    { gpu_type: 'H100_SXM5_80GB', price_per_gpu_hr: '2.89', stopped_price_per_hour: '0' },
    { gpu_type: 'A100_SXM4_80GB', price_per_gpu_hr: '1.79', stopped_price_per_hour: '0' },
  ],
  pricing: DEFAULT_POLICY.pricing,
};

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

const machine = (id: string, type: string, state: string): WatchedResource => ({
  key: `instance:${id}`,
  kind: 'instance',
  id,
  name: id,
  fields: { state, ip: '', type },
});

describe('gpuops spend export', () => {
  let redis: Redis;
  let redisUrl: string;
  let store: Store;
  let dir: string;

  async function look(project: string, at: number, found: WatchedResource[]) {
    const snaps = createSnapshotStore(store);
    const stored = await snaps.read(project);
    const next: ProjectSnapshot = {
      v: 1,
      polledAt: at,
      resources: Object.fromEntries(found.map((r) => [r.key, r])),
    };
    const changes = stored.snapshot ? diffSnapshots(stored.snapshot.resources, next.resources) : [];
    const ledger = ledgerChange(stored.snapshot, changes, next, PRICES, 'UTC');
    await snaps.commit(project, stored.version, next, ['C1'], [], { ledger, changed: changedKeys(changes) });
  }

  beforeAll(async () => {
    redisUrl = redisDb(inject('redisUrl'), DB);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    store = createStore(redis);
    dir = await mkdtemp(join(tmpdir(), 'gpuops-spend-'));
    const subs = createWatchSubscriptions(store);
    await subs.watch({ channelId: 'C1', projectId: ML, by: 'U1', since: 1 });
    await subs.watch({ channelId: 'C2', projectId: WEB, by: 'U1', since: 1 });
    await recordInstanceOwner(store, 'train-1', 'U0ADA');
    // Three days across the end of October, a look every 20 minutes; machines start and stop.
    const t0 = Date.parse('2026-10-30T20:00:00Z');
    for (let k = 0; k <= 3 * 72; k++) {
      const at = t0 + k * 20 * 60_000;
      const hour = new Date(at).getUTCHours();
      await look(ML, at, [
        machine('train-1', 'h100-hgx-80gb.8x', 'running'),
        machine('eval-1', 'h100-hgx-80gb.1x', hour >= 8 && hour < 18 ? 'running' : 'stopped'),
      ]);
      await look(WEB, at, [machine('web-1', 'a100-sxm4-80gb.4x', k % 7 < 4 ? 'running' : 'stopped')]);
    }
  });
  afterAll(async () => {
    await redis.flushdb();
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  it('knows the last day of each month', () => {
    expect(['2026-02', '2028-02', '2026-11', '2026-12'].map(lastDayOf)).toEqual([
      '2026-02-28',
      '2028-02-29',
      '2026-11-30',
      '2026-12-31',
    ]);
  });

  it("writes one row per machine and day whose dollars add up to the ledger's month", async () => {
    const snaps = createSnapshotStore(store);
    for (const month of ['2026-10', '2026-11']) {
      const out = join(dir, `spend-${month}.csv`);
      const errors: string[] = [];
      const io = { stdout: new Collect(), stderr: { write: (t: string) => errors.push(t) } };
      expect(await runSpendExport(['export', '--month', month, '-o', out], { REDIS_URL: redisUrl }, io)).toBe(
        0,
      );
      const [header, ...lines] = (await readFile(out, 'utf8')).trimEnd().split('\n');
      expect(header).toBe('date,project,instance,owner,type,hours,usd');
      expect(errors.join('')).toBe(`Wrote ${lines.length} rows of ${month} to ${out}.\n`);
      const rows = lines.map((l) => l.split(','));
      expect(rows.every((r) => r[0]!.startsWith(month))).toBe(true);
      // One row per machine and day.
      expect(new Set(rows.map((r) => `${r[0]} ${r[2]}`)).size).toBe(rows.length);
      expect(
        rows.filter((r) => r[2] === 'train-1').every((r) => r[3] === 'U0ADA' && r[4] === 'h100-hgx-80gb.8x'),
      ).toBe(true);
      const csvUsd = rows.reduce((sum, r) => sum + Number(r[6]), 0);
      const ledgerUsd = (await snaps.ledgerMonthUsd(ML, month)) + (await snaps.ledgerMonthUsd(WEB, month));
      expect(ledgerUsd).toBeGreaterThan(100);
      expect(Math.abs(csvUsd - ledgerUsd)).toBeLessThan(0.01);
    }
  });

  it('refuses a month it cannot read in one sentence, with a non-zero exit code, and writes nothing', async () => {
    for (const [args, said] of [
      [
        ['export', '--month', '2026-13'],
        '--month is a month written YYYY-MM, such as 2026-11; got "2026-13".',
      ],
      [
        ['export', '--month', 'November'],
        '--month is a month written YYYY-MM, such as 2026-11; got "November".',
      ],
      [['export'], 'say which month: --month YYYY-MM, such as --month 2026-11.'],
    ] as const) {
      const errors: string[] = [];
      const io = { stdout: new Collect(), stderr: { write: (t: string) => errors.push(t) } };
      expect(await runSpendExport(args, { REDIS_URL: redisUrl }, io)).toBe(2);
      expect(errors.join('').split('\n')[0]).toBe(`gpuops spend: ${said}`);
      expect(io.stdout.text).toBe('');
    }
  });

  it('runs as `npx gpuops spend export` to standard output', async () => {
    const child = spawnGpuops(['spend', 'export', '--month', '2026-11'], { REDIS_URL: redisUrl });
    const status = await child.exited;
    expect(status.code, child.stderr()).toBe(0);
    expect(child.lines[0]).toBe('date,project,instance,owner,type,hours,usd');
    expect(child.lines.slice(1).every((l) => l.startsWith('2026-11-0'))).toBe(true);
    expect(child.lines.length).toBeGreaterThan(3);
  }, 30_000);
});
