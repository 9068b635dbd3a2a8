import type { Configuration } from '../cloud/index.js';
import { type GpuModel, gpusOfInstanceType } from './instance-types.js';

// The price of one machine of an instance type, from the platform API's configurations. Prices stay
// decimal strings (as the API gives them) and are multiplied exactly, so nothing is rounded.

export interface TypePrice {
  readonly gpuType: string;
  readonly gpuCount: number;
  /** As the platform API gives it, e.g. "2.89". */
  readonly pricePerGpuHour: string;
  /** pricePerGpuHour × gpuCount, exact, e.g. "23.12". */
  readonly pricePerHour: string;
  readonly stoppedPricePerHour: string;
  readonly provisioningMinutes: number;
  readonly regions: readonly string[];
  /** False when the configuration does not list this GPU count (the type may still exist). */
  readonly countOffered: boolean;
}

/** Multiplies a decimal string by a whole number without floating point; undefined when not a decimal. */
export function multiplyDecimal(value: string, factor: number): string | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match || !Number.isInteger(factor) || factor < 0) return undefined;
  const fraction = match[2] ?? '';
  const digits = (BigInt(`${match[1]}${fraction}`) * BigInt(factor))
    .toString()
    .padStart(fraction.length + 1, '0');
  if (fraction.length === 0) return digits;
  return `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`;
}

/** The price of `type`, or undefined when its GPUs are unknown or no configuration sells them. */
export function priceForType(
  type: string,
  configurations: readonly Configuration[],
  models?: readonly GpuModel[],
): TypePrice | undefined {
  const gpus = gpusOfInstanceType(type, models);
  if (!gpus) return undefined;
  const config = configurations.find((c) => c.gpu_type === gpus.gpuType);
  if (!config) return undefined;
  const pricePerHour = multiplyDecimal(config.price_per_gpu_hr, gpus.gpuCount);
  if (pricePerHour === undefined) return undefined;
  return {
    gpuType: gpus.gpuType,
    gpuCount: gpus.gpuCount,
    pricePerGpuHour: config.price_per_gpu_hr,
    pricePerHour,
    stoppedPricePerHour: config.stopped_price_per_hour,
    provisioningMinutes: config.estimated_provisioning_time_minutes,
    regions: config.regions,
    countOffered: config.gpu_counts.includes(gpus.gpuCount),
  };
}
