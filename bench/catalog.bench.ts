import { Redis } from 'ioredis';
import { catalogKey, catalogOf, entryOf, writeCatalog } from '../src/store/catalog-cache.js';
import { catalogAndTypeOf } from '../src/store/instance-types-seen.js';
import { cacheKey, createStore } from '../src/store/store.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import type { BenchResult } from './run.js';

// Scenario 9: the catalogue a priced request reads before it is acknowledged (its price and the names
// it gives: `catalogAndTypeOf`), at 1,000 and 10,000 machines in the project, the entry written as the
// refresh job writes it. The baseline is the least any reader does: fetching the entry's bytes
// (`GETBUFFER` of the same key, same connection). The second reference is the read as it was before
// issue 31's change: the entry fetched as a string, parsed and checked by the schema on every read.
// CPU time of this process per read (the Redis server's own work is the same for all three), in
// interleaved rounds.

const PROJECT = 'bench-catalog';
const TYPE = 'h100-hgx-80gb.1x';

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function perRead(reads: number, read: (i: number) => Promise<unknown>): Promise<number> {
  const started = cpuMs();
  for (let i = 0; i < reads; i++) await read(i);
  return (cpuMs() - started) / reads;
}

export async function run(): Promise<BenchResult> {
  const sizes = (process.env.BENCH_CATALOG_SIZES ?? '1000,10000').split(',').map(Number);
  const reads = Number(process.env.BENCH_CATALOG_READS ?? 200);
  const rounds = 3;
  const server = await startPrivateRedis();
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const rows: Record<string, string | number>[] = [];
  const summary: Record<string, number> = {};
  try {
    const store = createStore(redis, 'benchcat');
    for (const size of sizes) {
      const instances = Array.from({ length: size }, (_, i) => ({
        id: `0b6a${String(i).padStart(6, '0')}-1111-4222-8333-444455556666`,
        name: `w-${i}`,
        type: TYPE,
      }));
      await writeCatalog(store, PROJECT, {
        v: 1,
        refreshedAt: Date.now(),
        configurations: [],
        instanceTypes: [{ name: TYPE, inUse: size, lastSeenAt: Date.now() }],
        instances,
        instancesListedAt: Date.now(),
        problems: [],
      });
      const key = catalogKey(store, PROJECT);
      const bytes = (await redis.getBuffer(key))?.length ?? 0;
      const name = (i: number) => `w-${(i * 7919) % size}`;
      const cases = {
        gpuops: (i: number) => catalogAndTypeOf(store, PROJECT, name(i)),
        fetch: () => redis.getBuffer(key),
        before: async (i: number) => {
          const [text] = await redis.mget(key, cacheKey(store.prefix, `itype:${PROJECT}:${name(i)}`));
          return catalogOf(entryOf(text ?? null));
        },
      };
      for (const read of Object.values(cases)) await perRead(10, read);
      const ms = { gpuops: [] as number[], fetch: [] as number[], before: [] as number[] };
      for (let r = 0; r < rounds; r++) {
        for (const [which, read] of Object.entries(cases)) {
          ms[which as keyof typeof ms].push(await perRead(reads, read));
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const [gpuops, fetch, before] = [median(ms.gpuops), median(ms.fetch), median(ms.before)];
      rows.push(
        {
          case: `${size} machines (${Math.round(bytes / 1024)} KB): gpuops' read`,
          cpu_ms_per_read: round(gpuops),
        },
        { case: `${size} machines: fetching the entry's bytes (baseline)`, cpu_ms_per_read: round(fetch) },
        {
          case: `${size} machines: the read before issue 31 (parsed every time)`,
          cpu_ms_per_read: round(before),
        },
      );
      summary[`gpuops_ms_${size}`] = round(gpuops);
      summary[`fetch_ms_${size}`] = round(fetch);
      summary[`before_ms_${size}`] = round(before);
      summary[`ratio_vs_fetch_${size}`] = round(gpuops / fetch);
      summary[`ratio_before_vs_fetch_${size}`] = round(before / fetch);
    }
  } finally {
    redis.disconnect();
    await server.close();
  }
  return {
    name: 'catalog',
    description: `The catalogue a priced request reads before its acknowledgement, ${reads} reads a case per round, ${rounds} interleaved rounds, CPU of this process per read`,
    rows,
    summary,
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
