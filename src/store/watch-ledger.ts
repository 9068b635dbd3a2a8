import type { Redis } from 'ioredis';
import { watchKey } from './watch-keys.js';

// The spend ledger the watchers keep and the digest and Home tab read: per project and day (and
// month), estimated dollars, GPU-hours, and GPU-hours per instance. A look must not cost one write per
// running machine (10,000 machines were 10,000 increments a look), so per-instance hours are kept as
// intervals on a clock: the day's `clock` is the watched hours of that day (each look adds the time
// since the previous look, at most an hour); an instance that starts running opens an interval at the
// clock (`open:<id>` = "<clock> <gpus>"), and one that stops closes it, adding gpus × (clock − start)
// to `inst:<id>`. A look then writes only what changed. The first look of a day closes the previous
// day's intervals and opens the new day's for what was running (once a day, the fleet's size);
// a baseline look opens one for everything running.

export const DAY_TTL_SECONDS = 40 * 86_400;
export const MONTH_TTL_SECONDS = 400 * 86_400;

export const ledgerKey = (prefix: string, projectId: string, period: string) =>
  watchKey(prefix, 'ledger', projectId, period);

/** An instance whose interval opens: its id and GPUs. */
export interface Opening {
  readonly id: string;
  readonly gpus: number;
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

export interface LedgerDay {
  readonly usd: number;
  readonly gpuHours: number;
  /** GPU-hours per instance id (closed intervals, and open ones up to the day's clock). */
  readonly instances: Readonly<Record<string, number>>;
}

/**
 * apply_ledger(dayKey, monthKey, previousDayKey, cursor): reads a LedgerChange from ARGV with the
 * cursor function `nxt` (see ledgerArgs for the order) and applies it.
 */
export const LEDGER_LUA = `
local function ledger_close(day, id, clock)
  local v = redis.call('HGET', day, 'open:' .. id)
  if not v then return end
  local start, gpus = string.match(v, '^(%S+) (%S+)$')
  local h = (clock - tonumber(start)) * tonumber(gpus)
  if h > 0 then redis.call('HINCRBYFLOAT', day, 'inst:' .. id, h) end
  redis.call('HDEL', day, 'open:' .. id)
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
  for _ = 1, tonumber(nxt()) do
    local id = nxt()
    redis.call('HSETNX', day, 'open:' .. id, clock .. ' ' .. nxt())
  end
  if hours > 0 then clock = tonumber(redis.call('HINCRBYFLOAT', day, 'clock', hours)) end
  if usd > 0 then
    redis.call('HINCRBYFLOAT', day, 'usd', usd)
    redis.call('HINCRBYFLOAT', month, 'usd', usd)
  end
  if gpuh > 0 then redis.call('HINCRBYFLOAT', day, 'gpuh', gpuh) end
  for _ = 1, tonumber(nxt()) do ledger_close(day, nxt(), clock) end
  for _ = 1, tonumber(nxt()) do
    local id = nxt()
    redis.call('HSETNX', day, 'open:' .. id, clock .. ' ' .. nxt())
  end
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
  for (const o of change.openBefore) args.push(o.id, o.gpus);
  args.push(change.close.length);
  for (const id of change.close) args.push(id);
  args.push(change.open.length);
  for (const o of change.open) args.push(o.id, o.gpus);
  return args;
}

/** A ledger day as stored: open intervals count up to the day's clock. */
export function readLedgerDay(h: Readonly<Record<string, string>>): LedgerDay {
  const clock = Number(h.clock ?? 0);
  const instances: Record<string, number> = {};
  for (const [field, value] of Object.entries(h)) {
    if (field.startsWith('inst:')) {
      const id = field.slice(5);
      instances[id] = (instances[id] ?? 0) + Number(value);
    } else if (field.startsWith('open:')) {
      const id = field.slice(5);
      const [start, gpus] = value.split(' ').map(Number);
      const hours = (clock - (start ?? clock)) * (gpus ?? 0);
      if (hours > 0) instances[id] = (instances[id] ?? 0) + hours;
    }
  }
  return { usd: Number(h.usd ?? 0), gpuHours: Number(h.gpuh ?? 0), instances };
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
