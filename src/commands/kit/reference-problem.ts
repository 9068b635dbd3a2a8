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

interface Kind {
  /** What it is called in a sentence. */
  readonly noun: string;
  /** Whose names they are: the project's, the channel's, the account's. */
  readonly where: string;
  /** Where it was looked for, in a sentence. */
  readonly place: string;
  /** The command that lists them. */
  readonly list: string;
}

const KINDS: Record<Exclude<Reference['what'], 'type'>, Kind> = {
  instance: { noun: 'instance', where: 'This project', place: 'in this project', list: '/gpu ls' },
  filesystem: { noun: 'filesystem', where: 'This project', place: 'in this project', list: '/gpu fs' },
  'k8s cluster': {
    noun: 'Kubernetes cluster',
    where: 'This project',
    place: 'in this project',
    list: '/gpu k8s ls',
  },
  'slurm cluster': {
    noun: 'Slurm cluster',
    where: 'This project',
    place: 'in this project',
    list: '/gpu slurm ls',
  },
  key: { noun: 'SSH key', where: 'The account', place: 'on the account', list: '/gpu keys' },
  schedule: { noun: 'schedule', where: 'This channel', place: 'in this channel', list: '/gpu schedules' },
};

/**
 * `ref` names none of `names` (each a name or an id): what to say, with the nearest name when one is
 * close. Schedules belong to a channel, SSH keys to the account, the others to the project.
 */
export function missingProblem(
  what: Exclude<Reference['what'], 'type'>,
  ref: string,
  names: readonly string[],
): ReferenceProblem {
  const { noun, where, place, list: command } = KINDS[what];
  const head = `No ${noun} "${ref}" ${place}.`;
  const near = nearestWord(ref, names);
  const has = names.length > 0 ? ` ${where} has: ${list(names)}.` : ` ${where} has no ${noun}s.`;
  if (near) {
    return {
      plain: `${head} Did you mean ${near}? (${command} lists them.)`,
      message: `No ${noun} "${escapeText(ref)}" ${place}. Did you mean \`${escapeText(near)}\`? (\`${command}\` lists them.)`,
    };
  }
  return {
    plain: `${head}${has} Check the name with ${command}.`,
    message: `No ${noun} "${escapeText(ref)}" ${place}.${escapeText(has)} Check the name with \`${command}\`.`,
  };
}

/**
 * `ref` names an instance a job of gpuops deleted after the cached listing was made: the listing
 * still names it, but asking anyone to act on it would act on nothing.
 */
export function deletedProblem(ref: string): ReferenceProblem {
  const { noun, place, list: command } = KINDS.instance;
  return {
    plain: `No ${noun} "${ref}" ${place}: it has been deleted (${command} lists the machines there are).`,
    message: `No ${noun} "${escapeText(ref)}" ${place}: it has been deleted (\`${command}\` lists the machines there are).`,
  };
}
