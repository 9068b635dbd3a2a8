import { GPU_MODELS, type GpuModel, gpusOfInstanceType, type InstanceTypeGpus } from './instance-types.js';
import { multiplyDecimal } from './price-for-type.js';

// What an operation will cost, from the platform API's configurations: price per GPU-hour × GPUs per
// machine × machines, or the stopped price for a stopped machine. Prices are decimal strings and are
// multiplied exactly. A price that cannot be worked out is `{ known: false, reason }`, never 0.

/** A configuration as the catalogue cache keeps it (camelCase). */
export interface PricedConfiguration {
  readonly gpuType: string;
  readonly gpuCounts?: readonly number[];
  readonly pricePerGpuHour: string;
  readonly stoppedPricePerHour: string;
  readonly regions?: readonly string[];
  readonly provisioningMinutes?: number;
}

/** A configuration as the platform API (and the simulator) gives it (snake_case). */
export interface PlatformConfigurationLike {
  readonly gpu_type: string;
  readonly gpu_counts?: readonly number[];
  readonly price_per_gpu_hr: string;
  readonly stopped_price_per_hour: string;
  readonly regions?: readonly string[];
  readonly estimated_provisioning_time_minutes?: number;
}

/** The policy's pricing section (the policy file declares it; prices are worked out here). */
export interface PricingPolicy {
  readonly types: Readonly<Record<string, { readonly gpuType: string; readonly gpuCount: number }>>;
  readonly models: readonly GpuModel[];
  readonly stoppedPrice: 'per_instance' | 'per_gpu';
}

export interface PriceBook {
  /** Undefined when prices could not be loaded (no platform API, or it failed). */
  readonly configurations: readonly (PricedConfiguration | PlatformConfigurationLike)[] | undefined;
  /** The policy's pricing section: exact type overrides, extra models, how the stopped price counts. */
  readonly pricing?: PricingPolicy;
}

export interface KnownCost {
  readonly known: true;
  /** US dollars; the exact decimal strings are in perHourUsd/perDayUsd. */
  readonly perHour: number;
  readonly perDay: number;
  readonly perHourUsd: string;
  readonly perDayUsd: string;
  readonly state: 'running' | 'stopped';
  readonly instanceType: string;
  readonly machines: number;
  readonly gpuType: string;
  readonly gpusPerMachine: number;
  /** How the figure was reached, for the approval card: `8 × H100_SXM5_80GB at $2.89 per GPU-hour`. */
  readonly basis: string;
  readonly provisioningMinutes?: number;
  readonly regions?: readonly string[];
  /** False when the configuration does not list this GPU count (the estimate is still per GPU). */
  readonly countOffered: boolean;
}

export interface UnknownCost {
  readonly known: false;
  /** Why, in words for the card: which type or price is missing and how to fix it. */
  readonly reason: string;
}

export type CostEstimate = KnownCost | UnknownCost;

export const HOURS_PER_DAY = 24;

function normalise(c: PricedConfiguration | PlatformConfigurationLike): PricedConfiguration {
  if ('gpu_type' in c) {
    return {
      gpuType: c.gpu_type,
      pricePerGpuHour: c.price_per_gpu_hr,
      stoppedPricePerHour: c.stopped_price_per_hour,
      ...(c.gpu_counts ? { gpuCounts: c.gpu_counts } : {}),
      ...(c.regions ? { regions: c.regions } : {}),
      ...(c.estimated_provisioning_time_minutes !== undefined
        ? { provisioningMinutes: c.estimated_provisioning_time_minutes }
        : {}),
    };
  }
  return c;
}

/**
 * The GPUs of an instance type: the policy's exact `pricing.types` entry first, then its extra
 * `pricing.models`, then the built-in name rules of src/pricing/instance-types.ts.
 */
export function gpusOfType(type: string, pricing?: PricingPolicy): InstanceTypeGpus | undefined {
  const exact = pricing?.types[type];
  if (exact) return exact;
  const models: readonly GpuModel[] = pricing?.models.length
    ? [...pricing.models, ...GPU_MODELS]
    : GPU_MODELS;
  return gpusOfInstanceType(type, models);
}

const isDecimal = (s: string) => /^\d+(?:\.\d+)?$/.test(s.trim());

// Built once: toLocaleString with options builds a new formatter on every call (seen in profiles).
// Built on the first price shown, not at import: it loads about 9 MiB of ICU data an idle bot never reads.
let USD: Intl.NumberFormat | undefined;

/** `2.5` → `$2.50`, `554.88` → `$554.88`, `0.004` → `$0.004` (never rounds a small price to $0.00). */
export function formatUsd(amount: number): string {
  if (amount !== 0 && Math.abs(amount) < 0.01) return `$${Number(amount.toPrecision(2))}`;
  USD ??= new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `$${USD.format(amount)}`;
}

/**
 * The cost of `machines` machines of `type` in `state`: running machines are billed per GPU-hour,
 * stopped ones at the configuration's stopped price (per machine, or per GPU with
 * `pricing.stopped_price: per_gpu`).
 */
export function estimateMachines(input: {
  readonly prices: PriceBook;
  readonly type: string;
  readonly machines?: number;
  readonly state?: 'running' | 'stopped';
}): CostEstimate {
  const { prices, type } = input;
  const machines = input.machines ?? 1;
  const state = input.state ?? 'running';
  if (!Number.isInteger(machines) || machines < 1) {
    return { known: false, reason: `${machines} is not a number of machines` };
  }
  const gpus = gpusOfType(type, prices.pricing);
  if (!gpus) {
    return {
      known: false,
      reason: `gpuops does not know which GPUs the instance type ${type} has; add it under pricing.types in the policy file`,
    };
  }
  if (gpus.gpuCount < 1) {
    return { known: false, reason: `${type} has no GPUs, and the platform prices GPU configurations only` };
  }
  if (prices.configurations === undefined) {
    return { known: false, reason: 'prices could not be loaded from the platform API' };
  }
  const config = prices.configurations.map(normalise).find((c) => c.gpuType === gpus.gpuType);
  if (!config) {
    return { known: false, reason: `no configuration of the platform prices ${gpus.gpuType} (${type})` };
  }
  const perGpu = config.pricePerGpuHour.trim();
  const stopped = config.stoppedPricePerHour.trim();
  const unit = state === 'running' ? perGpu : stopped;
  if (!isDecimal(unit)) {
    return {
      known: false,
      reason: `the platform gives ${state === 'running' ? 'price_per_gpu_hr' : 'stopped_price_per_hour'} ${JSON.stringify(unit)} for ${gpus.gpuType}, which is not a price`,
    };
  }
  const perGpuStopped = prices.pricing?.stoppedPrice === 'per_gpu';
  const factor = state === 'running' || perGpuStopped ? gpus.gpuCount * machines : machines;
  const perHourUsd = multiplyDecimal(unit, factor) ?? '0';
  const perDayUsd = multiplyDecimal(perHourUsd, HOURS_PER_DAY) ?? '0';
  const many = machines > 1 ? `${machines} × ${type}: ` : '';
  const basis =
    state === 'running'
      ? `${many}${gpus.gpuCount * machines} × ${gpus.gpuType} at $${perGpu} per GPU-hour`
      : perGpuStopped
        ? `${many}stopped, ${gpus.gpuCount * machines} × ${gpus.gpuType} at $${stopped} per GPU-hour`
        : `${many}stopped, $${stopped} per machine-hour`;
  return {
    known: true,
    perHour: Number(perHourUsd),
    perDay: Number(perDayUsd),
    perHourUsd,
    perDayUsd,
    state,
    instanceType: type,
    machines,
    gpuType: gpus.gpuType,
    gpusPerMachine: gpus.gpuCount,
    basis,
    ...(config.provisioningMinutes !== undefined ? { provisioningMinutes: config.provisioningMinutes } : {}),
    ...(config.regions ? { regions: config.regions } : {}),
    countOffered: config.gpuCounts?.includes(gpus.gpuCount) ?? true,
  };
}

/** A node pool: `count` machines of `type`, running. */
export function estimatePool(input: {
  readonly prices: PriceBook;
  readonly type: string;
  readonly count: number;
}): CostEstimate {
  return estimateMachines({
    prices: input.prices,
    type: input.type,
    machines: input.count,
    state: 'running',
  });
}

/** `$23.12/h · $554.88/day`, or `price unknown: <reason>`. */
export function formatCost(estimate: CostEstimate): string {
  if (!estimate.known) return `price unknown: ${estimate.reason}`;
  return `${formatUsd(estimate.perHour)}/h · ${formatUsd(estimate.perDay)}/day`;
}
