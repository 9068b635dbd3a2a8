import type { Configuration } from '../cloud/index.js';
import { isOffered, type OfferedType } from '../pricing/offered-types.js';
import type { TypePrice } from '../pricing/price-for-type.js';
import { escapeText } from './job-message.js';

// Capacity and GPU configurations as people read them: one line per instance type or gpu_type.
// Prices are the platform API's decimal strings, shown as they come (taken as US dollars).

export function formatMoney(amount: string): string {
  return `$${amount}`;
}

export function formatMinutes(minutes: number): string {
  if (minutes < 60) return `~${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `~${h} h` : `~${h} h ${m} min`;
}

/** "1, 2, 4 or 8 GPUs". */
export function formatCounts(counts: readonly number[]): string {
  const sorted = [...counts].sort((a, b) => a - b).map(String);
  if (sorted.length === 0) return 'no GPU counts listed';
  const last = sorted.pop()!;
  const list = sorted.length > 0 ? `${sorted.join(', ')} or ${last}` : last;
  return `${list} GPU${last === '1' && sorted.length === 0 ? '' : 's'}`;
}

/** One line per instance type: whether it can be had (and how many, where known) and what it costs. */
export function capacityLine(type: OfferedType, pricesKnown: boolean): string {
  const icon = isOffered(type) ? ':large_green_circle:' : ':red_circle:';
  const regions = type.price?.regions ?? [];
  const availability =
    type.capacity !== undefined
      ? type.capacity > 0
        ? `${type.capacity} available`
        : 'none available'
      : regions.length > 0
        ? `offered in ${escapeText(regions.join(', '))}`
        : 'not offered in any region now';
  const parts = [`${icon} *${escapeText(type.name)}* · ${availability}`];
  if (type.price) parts.push(typePriceText(type.price));
  else if (pricesKnown) parts.push('price unknown');
  return parts.join(' · ');
}

/** `8× H100_SXM5_80GB · $2.89/GPU-h ($23.12/h) · ready in ~12 min`. */
export function typePriceText(p: TypePrice): string {
  return `${p.gpuCount}× ${escapeText(p.gpuType)} · ${formatMoney(p.pricePerGpuHour)}/GPU-h (${formatMoney(p.pricePerHour)}/h) · ready in ${formatMinutes(p.provisioningMinutes)}`;
}

/** One line per configuration: GPU counts, prices, regions and provisioning estimate. */
export function configurationLine(c: Configuration): string {
  return [
    `*${escapeText(c.gpu_type)}*`,
    `${formatMoney(c.price_per_gpu_hr)}/GPU-h`,
    `stopped ${formatMoney(c.stopped_price_per_hour)}/h`,
    formatCounts(c.gpu_counts),
    c.regions.length > 0 ? escapeText(c.regions.join(', ')) : 'no regions listed',
    `ready in ${formatMinutes(c.estimated_provisioning_time_minutes)}`,
  ].join(' · ');
}
