// Deterministic GPU readings for the simulator's exporter: the same seed, instance id, GPU index and
// time always give the same values, so tests and demos can rely on what a chart shows.

export type GpuLoad = 'idle' | 'busy';
export type LoadSetting = GpuLoad | 'auto';

export interface GpuHardware {
  readonly gpuMemoryGiB: number;
  readonly maxPowerWatts: number;
}

export interface GpuReading {
  /** DCGM_FI_DEV_GPU_UTIL, integer percent. */
  readonly util: number;
  /** DCGM_FI_DEV_FB_USED / FB_FREE, MiB. */
  readonly fbUsedMiB: number;
  readonly fbFreeMiB: number;
  /** DCGM_FI_DEV_POWER_USAGE, watts. */
  readonly powerW: number;
  /** DCGM_FI_DEV_GPU_TEMP, °C. */
  readonly tempC: number;
}

const DAY_MS = 86_400_000;

/** 32-bit FNV-1a of a string, mixed with a seed. */
export function hashString(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** murmur3's finaliser: spreads every input bit over the output. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in [0, 1) from a stream hash and a step index. */
function rand(stream: number, step: number): number {
  return (
    mix32(stream ^ Math.imul(step | 0, 0x9e3779b1) ^ Math.imul((step / 4_294_967_296) | 0, 0x27d4eb2f)) /
    4_294_967_296
  );
}

/** Smooth value noise in [0, 1): random knots every `periodMs`, eased in between. */
export function valueNoise(stream: number, timeMs: number, periodMs: number): number {
  const x = timeMs / periodMs;
  const k = Math.floor(x);
  const f = x - k;
  const eased = f * f * (3 - 2 * f);
  const a = rand(stream, k);
  const b = rand(stream, k + 1);
  return a + (b - a) * eased;
}

/**
 * What 'auto' means: an instance whose name starts with "idle" sits idle, one starting with "busy" is
 * busy, and any other instance is idle when a hash of its id falls in one quarter of the range — so
 * about one machine in four idles, always the same ones.
 */
export function resolveLoad(setting: LoadSetting, id: string, name: string): GpuLoad {
  if (setting !== 'auto') return setting;
  const lower = name.toLowerCase();
  if (lower.startsWith('idle')) return 'idle';
  if (lower.startsWith('busy')) return 'busy';
  return hashString(id) % 4 === 0 ? 'idle' : 'busy';
}

/** The stream hash of one GPU of one instance under one seed. */
export function gpuStream(seed: number, instanceId: string, gpu: number): number {
  return mix32(hashString(instanceId, seed) + Math.imul(gpu + 1, 0x9e3779b9));
}

export function gpuReading(stream: number, timeMs: number, load: GpuLoad, hw: GpuHardware): GpuReading {
  const totalMiB = Math.round(hw.gpuMemoryGiB * 1024);
  const maxPower = hw.maxPowerWatts;
  const idlePower = maxPower * 0.1;
  const phase = (stream % 1000) / 1000;
  if (load === 'idle') {
    const jitter = valueNoise(stream ^ 0x1111, timeMs, 30_000);
    const util = Math.floor(3 * jitter * jitter); // mostly 0, sometimes 1–2
    const fbUsed = Math.round(valueNoise(stream ^ 0x2222, timeMs, 600_000) * 512);
    const power = idlePower * (0.9 + 0.3 * valueNoise(stream ^ 0x3333, timeMs, 20_000));
    const temp = 30 + 45 * (power / maxPower) + 2 * valueNoise(stream ^ 0x4444, timeMs, 60_000);
    return {
      util,
      fbUsedMiB: fbUsed,
      fbFreeMiB: totalMiB - fbUsed,
      powerW: round2(power),
      tempC: Math.round(temp),
    };
  }
  // Busy: a slow day-long swell, a few-minute wander and second-scale jitter, kept within 70–100 %.
  const diurnal = Math.sin(2 * Math.PI * (timeMs / DAY_MS + phase));
  const wander = valueNoise(stream ^ 0x5555, timeMs, 300_000) - 0.5;
  const jitter = valueNoise(stream ^ 0x6666, timeMs, 15_000) - 0.5;
  const util = Math.round(clamp(86 + 6 * diurnal + 16 * wander + 8 * jitter, 70, 100));
  const fbShare = 0.6 + 0.3 * valueNoise(stream ^ 0x7777, timeMs, 1_800_000);
  const fbUsed = Math.round(totalMiB * fbShare);
  const efficiency = 0.78 + 0.18 * valueNoise(stream ^ 0x8888, timeMs, 10_000);
  const power = Math.min(maxPower, idlePower + (maxPower - idlePower) * (util / 100) * efficiency);
  const temp = 30 + 45 * (power / maxPower) + 3 * valueNoise(stream ^ 0x9999, timeMs, 60_000);
  return {
    util,
    fbUsedMiB: fbUsed,
    fbFreeMiB: totalMiB - fbUsed,
    powerW: round2(power),
    tempC: Math.round(temp),
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
