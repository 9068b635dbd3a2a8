import type { Redis } from 'ioredis';
import { watchKey } from './watch-keys.js';

// The spend ledger the watchers keep and the digest, the Home tab and budgets read: per project and day
// (and month), estimated dollars, GPU-hours, and per instance its GPU-hours, running hours, dollars and
// type (docs/budgets.md). A look must not cost one write per
// running machine (10,000 machines were 10,000 increments a look), so per-instance hours are kept as
// intervals on a clock: the day's `clock` is the watched hours of that day (each look adds the time
// since the previous look, at most an hour); an instance that starts running opens an interval at the
// clock (`open:<id>` = "<clock> <gpus> <usd per hour>", `meta:<id>` = its type and name as JSON), and
// one that stops closes it, adding (clock − start) × gpus to `inst:<id>`, × 1 to `hrs:<id>` and
// × the price to `usd:<id>`. A look then writes only what changed. The first look of a day closes the previous
// day's intervals and opens the new day's for what was running (once a day, the fleet's size);
// a baseline look opens one for everything running.

export const DAY_TTL_SECONDS = 40 * 86_400;
export const MONTH_TTL_SECONDS = 400 * 86_400;

export const ledgerKey = (prefix: string, projectId: string, period: string) =>
  watchKey(prefix, 'ledger', projectId, period);

/** An instance whose interval opens: its id, GPUs, price while running (0: unknown), type and name. */
export interface Opening {
  readonly id: string;
  readonly gpus: number;
  readonly usdPerHour?: number;
  readonly type?: string;
  readonly name?: string;
}

/** What one look adds to the ledger. */
export interface LedgerChange {
  readonly day: string;
  readonly month: string;
  /** The day of the previous look, when it was another: its intervals are closed first. */
  readonly previousDay?: string;
  readonly usd: number;
  readonly gpuHours: number;
  /** Watched hours this look adds to the day's clock. */
  readonly hours: number;
  /** Opened at the day's clock before this look's hours (running before it: a new day, a baseline). */
  readonly openBefore: readonly Opening[];
  /** Instances that stopped running (or went): their intervals close after this look's hours. */
  readonly close: readonly string[];
  /** Instances that started running: their intervals open after this look's hours. */
  readonly open: readonly Opening[];
}

/** One instance's day: running hours, dollars, and what it was. */
export interface LedgerMachine {
  readonly hours: number;
  readonly usd: number;
  readonly type: string;
  readonly name?: string;
}

export interface LedgerDay {
  readonly usd: number;
  readonly gpuHours: number;
  /** GPU-hours per instance id (closed intervals, and open ones up to the day's clock). */
  readonly instances: Readonly<Record<string, number>>;
  /** Running hours and dollars per instance id, counted the same way. */
  readonly machines: Readonly<Record<string, LedgerMachine>>;
}

/**
 * apply_ledger(dayKey, monthKey, previousDayKey, cursor): reads a LedgerChange from ARGV with the
 * cursor function `nxt` (see ledgerArgs for the order) and applies it.
 */
export const LEDGER_LUA = `
local function ledger_close(day, id, clock)
  local v = redis.call('HGET', day, 'open:' .. id)
  if not v then return end
  local start, gpus, usd = string.match(v, '^(%S+) (%S+) ?(%S*)$')
  local hours = clock - tonumber(start)
  if hours > 0 then
    local h = hours * tonumber(gpus)
    if h > 0 then redis.call('HINCRBYFLOAT', day, 'inst:' .. id, h) end
    redis.call('HINCRBYFLOAT', day, 'hrs:' .. id, hours)
    local d = hours * (tonumber(usd) or 0)
    if d > 0 then redis.call('HINCRBYFLOAT', day, 'usd:' .. id, d) end
  end
  redis.call('HDEL', day, 'open:' .. id)
end
local function ledger_open(day, clock, nxt)
  local id, gpus, usd, meta = nxt(), nxt(), nxt(), nxt()
  if redis.call('HSETNX', day, 'open:' .. id, clock .. ' ' .. gpus .. ' ' .. usd) == 1 then
    redis.call('HSET', day, 'meta:' .. id, meta)
  end
end
local function ledger_clock(day) return tonumber(redis.call('HGET', day, 'clock') or '0') end
local function apply_ledger(day, month, previous, nxt)
  local usd, gpuh, hours = tonumber(nxt()), tonumber(nxt()), tonumber(nxt())
  local dayTtl, monthTtl = nxt(), nxt()
  if nxt() == '1' then
    local clock = ledger_clock(previous)
    local flat = redis.call('HGETALL', previous)
    for i = 1, #flat, 2 do
      if string.sub(flat[i], 1, 5) == 'open:' then ledger_close(previous, string.sub(flat[i], 6), clock) end
    end
  end
  local clock = ledger_clock(day)
  for _ = 1, tonumber(nxt()) do ledger_open(day, clock, nxt) end
  if hours > 0 then clock = tonumber(redis.call('HINCRBYFLOAT', day, 'clock', hours)) end
  if usd > 0 then
    redis.call('HINCRBYFLOAT', day, 'usd', usd)
    redis.call('HINCRBYFLOAT', month, 'usd', usd)
  end
  if gpuh > 0 then redis.call('HINCRBYFLOAT', day, 'gpuh', gpuh) end
  for _ = 1, tonumber(nxt()) do ledger_close(day, nxt(), clock) end
  for _ = 1, tonumber(nxt()) do ledger_open(day, clock, nxt) end
  redis.call('EXPIRE', day, dayTtl)
  redis.call('EXPIRE', month, monthTtl)
end
`;

/** The keys apply_ledger takes: day, month, previous day (the day itself when there is none). */
export function ledgerKeys(prefix: string, projectId: string, change: LedgerChange | undefined): string[] {
  if (!change) {
    const none = ledgerKey(prefix, projectId, 'none');
    return [none, none, none];
  }
  const day = ledgerKey(prefix, projectId, change.day);
  return [
    day,
    ledgerKey(prefix, projectId, change.month),
    change.previousDay ? ledgerKey(prefix, projectId, change.previousDay) : day,
  ];
}

/** The arguments apply_ledger reads, in its order. */
export function ledgerArgs(change: LedgerChange): (string | number)[] {
  const args: (string | number)[] = [
    Math.max(change.usd, 0),
    Math.max(change.gpuHours, 0),
    Math.max(change.hours, 0),
    DAY_TTL_SECONDS,
    MONTH_TTL_SECONDS,
    change.previousDay ? '1' : '0',
    change.openBefore.length,
  ];
  for (const o of change.openBefore) pushOpening(args, o);
  args.push(change.close.length);
  for (const id of change.close) args.push(id);
  args.push(change.open.length);
  for (const o of change.open) pushOpening(args, o);
  return args;
}

function pushOpening(args: (string | number)[], o: Opening): void {
  const meta = JSON.stringify(o.name ? { type: o.type ?? '', name: o.name } : { type: o.type ?? '' });
  args.push(o.id, o.gpus, Math.max(o.usdPerHour ?? 0, 0), meta);
}

/** A ledger day as stored: open intervals count up to the day's clock. */
export function readLedgerDay(h: Readonly<Record<string, string>>): LedgerDay {
  const clock = Number(h.clock ?? 0);
  const instances: Record<string, number> = {};
  const hours: Record<string, number> = {};
  const usd: Record<string, number> = {};
  const add = (to: Record<string, number>, id: string, n: number) => {
    if (n > 0) to[id] = (to[id] ?? 0) + n;
  };
  for (const [field, value] of Object.entries(h)) {
    const colon = field.indexOf(':');
    const id = field.slice(colon + 1);
    switch (field.slice(0, colon)) {
      case 'inst':
        add(instances, id, Number(value));
        break;
      case 'hrs':
        add(hours, id, Number(value));
        break;
      case 'usd':
        add(usd, id, Number(value));
        break;
      case 'open': {
        const [start, gpus, perHour] = value.split(' ').map(Number);
        const open = clock - (start ?? clock);
        if (open <= 0) break;
        add(instances, id, open * (gpus ?? 0));
        add(hours, id, open);
        add(usd, id, open * (perHour || 0));
        break;
      }
    }
  }
  const machines: Record<string, LedgerMachine> = {};
  for (const [id, n] of Object.entries(hours)) {
    const meta = metaOf(h[`meta:${id}`]);
    machines[id] = { hours: n, usd: usd[id] ?? 0, ...meta };
  }
  return { usd: Number(h.usd ?? 0), gpuHours: Number(h.gpuh ?? 0), instances, machines };
}

function metaOf(raw: string | undefined): { type: string; name?: string } {
  try {
    const v = JSON.parse(raw ?? '{}') as { type?: unknown; name?: unknown };
    const type = typeof v.type === 'string' ? v.type : '';
    return typeof v.name === 'string' ? { type, name: v.name } : { type };
  } catch {
    return { type: '' };
  }
}

// Closed GPU-hours added directly (tests and tools seed a ledger with it). KEYS: day, month. ARGV: usd,
// GPU-hours of the day, day TTL, month TTL, then instance field and hours pairs (all positive).
const ADD = `
if tonumber(ARGV[1]) > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'usd', ARGV[1])
  redis.call('HINCRBYFLOAT', KEYS[2], 'usd', ARGV[1])
end
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'gpuh', ARGV[2]) end
for i = 5, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
`;

interface LedgerScripts {
  gpuopsWatchLedgerAdd(...args: (string | number | (string | number)[])[]): Promise<number>;
}

export interface Ledger {
  /** Adds spend and closed GPU-hours per instance to a day and its month. */
  addToLedger(
    projectId: string,
    day: string,
    month: string,
    add: { usd: number; gpuHours: Readonly<Record<string, number>> },
  ): Promise<void>;
  ledgerDay(projectId: string, day: string): Promise<LedgerDay>;
  ledgerMonthUsd(projectId: string, month: string): Promise<number>;
}

export function createLedger(redis: Redis, prefix: string): Ledger {
  const r = redis as Redis & Partial<LedgerScripts>;
  if (typeof r.gpuopsWatchLedgerAdd !== 'function') {
    redis.defineCommand('gpuopsWatchLedgerAdd', { lua: ADD, numberOfKeys: 2 });
  }
  const s = r as Redis & LedgerScripts;
  return {
    async addToLedger(projectId, day, month, add) {
      const total = Object.values(add.gpuHours).reduce((a, b) => a + b, 0);
      const pairs: (string | number)[] = [];
      for (const [id, hours] of Object.entries(add.gpuHours)) {
        if (hours > 0) pairs.push(`inst:${id}`, hours);
      }
      await s.gpuopsWatchLedgerAdd(
        ledgerKey(prefix, projectId, day),
        ledgerKey(prefix, projectId, month),
        Math.max(add.usd, 0),
        Math.max(total, 0),
        DAY_TTL_SECONDS,
        MONTH_TTL_SECONDS,
        pairs,
      );
    },
    async ledgerDay(projectId, day) {
      return readLedgerDay(await redis.hgetall(ledgerKey(prefix, projectId, day)));
    },
    async ledgerMonthUsd(projectId, month) {
      return Number((await redis.hget(ledgerKey(prefix, projectId, month), 'usd')) ?? 0);
    },
  };
}
