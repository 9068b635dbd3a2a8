import type { Configuration } from '../cloud/index.js';
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

export interface CapacityRow {
  readonly type: string;
  readonly capacity: number;
  /** Present when prices are known for the type. */
  readonly price?: TypePrice | undefined;
  /** False when prices could not be read at all (platform API off or failing): no "unknown" per line. */
  readonly pricesKnown: boolean;
}

/** One line per instance type: how many machines can still be had, and what one costs. */
export function capacityLine(row: CapacityRow): string {
  const icon = row.capacity > 0 ? ':large_green_circle:' : ':red_circle:';
  const left = row.capacity > 0 ? `${row.capacity} available` : 'none available';
  const parts = [`${icon} *${escapeText(row.type)}* · ${left}`];
  if (row.price) {
    const p = row.price;
    parts.push(
      `${p.gpuCount}× ${escapeText(p.gpuType)} · ${formatMoney(p.pricePerGpuHour)}/GPU-h (${formatMoney(p.pricePerHour)}/h) · ready in ${formatMinutes(p.provisioningMinutes)}`,
    );
  } else if (row.pricesKnown) {
    parts.push('price unknown');
  }
  return parts.join(' · ');
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
