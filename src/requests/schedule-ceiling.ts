import { estimateMachines, formatUsd, type PriceBook } from '../pricing/cost.js';
import { countNoun } from '../render/count-noun.js';
import type { Schedule } from '../store/schedules.js';

// What a start schedule's firing may start without a new approval: the machines of each type its
// target had when the schedule was made (an approver, where one was needed, agreed to those). A
// firing within them needs nothing; one beyond them is priced with today's price list against them,
// and above that it asks again. The hours are the schedule's own times, the same at every firing.

type Ceiling = NonNullable<Schedule['ceiling']>;

function perHour(types: readonly string[], prices: PriceBook): number | undefined {
  let total = 0;
  for (const type of types) {
    const estimate = estimateMachines({ prices, type });
    if (!estimate.known) return undefined;
    total += estimate.perHour;
  }
  return total;
}

const expand = (ceiling: Ceiling): string[] =>
  Object.entries(ceiling.types).flatMap(([type, n]) => Array.from({ length: n }, () => type));

function described(types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => `${n}× ${t}`).join(', ') || 'none';
}

/** Why starting machines of `due` types goes beyond the schedule's ceiling, in a sentence; else undefined. */
export function aboveCeiling(
  ceiling: Ceiling,
  due: readonly string[],
  prices: PriceBook,
): string | undefined {
  const left = { ...ceiling.types };
  const beyond = due.filter((type) => {
    if ((left[type] ?? 0) < 1) return true;
    left[type] = (left[type] ?? 0) - 1;
    return false;
  });
  if (beyond.length === 0) return undefined;
  const agreedTypes = expand(ceiling);
  const now = perHour(due, prices);
  const agreed = perHour(agreedTypes, prices);
  // Other machines, no more of them and no dearer: still what was agreed.
  if (now !== undefined && agreed !== undefined && due.length <= ceiling.machines && now <= agreed) {
    return undefined;
  }
  const price = (usd: number | undefined) => (usd === undefined ? '' : `, about ${formatUsd(usd)}/h`);
  return (
    `This firing would start ${countNoun(due.length, 'machine')} (${described(due)}${price(now)}), more than the ` +
    `${ceiling.machines} (${described(agreedTypes)}${price(agreed)}) agreed when the schedule was made.`
  );
}
