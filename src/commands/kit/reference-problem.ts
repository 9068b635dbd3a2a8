import type { PricingPolicy } from '../../pricing/cost.js';
import { GPU_MODELS } from '../../pricing/instance-types.js';
import { typesFromPriceList } from '../../pricing/offered-types.js';
import { escapeText } from '../../render/job-message.js';
import { type Catalog, platformConfigurations } from '../../store/catalog-cache.js';
import type { Reference } from '../spec.js';
import { nearestWord } from '../suggest.js';

// What a request that names something that is not there is told, before anything is queued or posted:
// one sentence with the nearest name that does exist. Pure: the callers read the names (the cached
// catalogue, the channel's schedules) and decide when a listing is fresh enough to judge by.

/** A name that does not resolve, in Slack mrkdwn and in plain text (for a form field). */
export interface ReferenceProblem {
  readonly message: string;
  readonly plain: string;
}

const LISTED = 10;

function list(names: readonly string[]): string {
  const shown = names.slice(0, LISTED).join(', ');
  return names.length > LISTED ? `${shown}, …` : shown;
}

/** Every type name gpuops can vouch for: listed by the cloud, named by the price list or the policy. */
export function knownTypes(catalog: Catalog, pricing?: PricingPolicy): Set<string> | undefined {
  const models = pricing?.models.length ? [...pricing.models, ...GPU_MODELS] : GPU_MODELS;
  const fromPrices = typesFromPriceList(platformConfigurations(catalog), models).map((t) => t.name);
  const names = new Set([
    ...catalog.instanceTypes.map((t) => t.name),
    ...fromPrices,
    ...Object.keys(pricing?.types ?? {}),
  ]);
  // Nothing listed yet (no price list, no capacity listing, no machine seen): nothing to check against.
  return names.size > 0 ? names : undefined;
}

/** A type the cloud does not sell, with the types it does (undefined when it is sold or unknowable). */
export function unknownTypeProblem(
  type: string,
  catalog: Catalog,
  pricing?: PricingPolicy,
): ReferenceProblem | undefined {
  const known = knownTypes(catalog, pricing);
  if (!known || known.has(type)) return undefined;
  const offered = [...known].sort();
  const near = nearestWord(type, offered);
  const mean = near ? ` Did you mean ${near}?` : '';
  const meanMd = near ? ` Did you mean \`${escapeText(near)}\`?` : '';
  return {
    plain: `"${type}" is not an instance type this cloud offers.${mean} Types you can create: ${list(offered)} (see /gpu configs). If the cloud does sell it, an admin can name it under pricing.types in the policy file.`,
    message: `"${escapeText(type)}" is not an instance type this cloud offers.${meanMd} Types you can create: ${escapeText(list(offered))} (see \`/gpu configs\`). If the cloud does sell it, an admin can name it under \`pricing.types\` in the policy file.`,
  };
}

const LISTS: Record<Exclude<Reference['what'], 'type'>, string> = {
  instance: '/gpu ls',
  filesystem: '/gpu fs',
  schedule: '/gpu schedules',
};

/**
 * `ref` names none of `names` (each a name or an id): what to say, with the nearest name when one is
 * close. Schedules belong to a channel, the others to the project.
 */
export function missingProblem(
  what: Exclude<Reference['what'], 'type'>,
  ref: string,
  names: readonly string[],
): ReferenceProblem {
  const where = what === 'schedule' ? 'This channel' : 'This project';
  const head = `No ${what} "${ref}" in ${where.toLowerCase()}.`;
  const near = nearestWord(ref, names);
  const has = names.length > 0 ? ` ${where} has: ${list(names)}.` : ` ${where} has no ${what}s.`;
  const command = LISTS[what];
  if (near) {
    return {
      plain: `${head} Did you mean ${near}? (${command} lists them.)`,
      message: `No ${what} "${escapeText(ref)}" in ${where.toLowerCase()}. Did you mean \`${escapeText(near)}\`? (\`${command}\` lists them.)`,
    };
  }
  return {
    plain: `${head}${has} Check the name with ${command}.`,
    message: `No ${what} "${escapeText(ref)}" in ${where.toLowerCase()}.${escapeText(has)} Check the name with \`${command}\`.`,
  };
}
