import type { GpuCommand } from '../commands/registry.js';
import type { PricingPolicy } from '../pricing/cost.js';
import { GPU_MODELS } from '../pricing/instance-types.js';
import { typesFromPriceList } from '../pricing/offered-types.js';
import { escapeText } from '../render/job-message.js';
import { type Catalog, platformConfigurations } from '../store/catalog-cache.js';

// Before a request goes to an approver: does its instance exist, is its type one this cloud sells?
// An approver only ever sees requests that would run. Pure: the caller reads the cached catalogue
// (refreshed for the purpose when it is old) and says whether the name was remembered from a create.

export interface TargetProblem {
  /** Slack mrkdwn: what is wrong and how to fix it. */
  readonly message: string;
  /** The same in plain text, for a form field. */
  readonly plain: string;
  /** The form field it belongs to (a workflow step's channel has none). */
  readonly field: 'instance' | 'type' | 'channel';
}

const LISTED = 10;

/** The instance a command acts on by name or id, where it has one. */
export function targetInstance(command: GpuCommand): string | undefined {
  return 'instance' in command && typeof command.instance === 'string' ? command.instance : undefined;
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

function list(names: readonly string[]): string {
  const shown = names.slice(0, LISTED).join(', ');
  return names.length > LISTED ? `${shown}, …` : shown;
}

/**
 * What stops the request from running, or undefined when it would run (or cannot be checked: an
 * instance listing that never succeeded, a cloud that lists no types). `remembered` is true when a
 * create made this instance since the catalogue's last refresh.
 */
export function targetProblem(
  command: GpuCommand,
  catalog: Catalog,
  remembered: boolean,
  pricing?: PricingPolicy,
): TargetProblem | undefined {
  const ref = targetInstance(command);
  if (ref !== undefined && catalog.instances && !remembered) {
    const found = catalog.instances.some((i) => i.name === ref || i.id === ref);
    if (!found) {
      const names = catalog.instances.map((i) => i.name);
      const has = names.length > 0 ? ` This project has: ${list(names)}.` : ' This project has no instances.';
      const plain = `No instance "${ref}" in this project.${has} Check the name with /gpu ls.`;
      return {
        field: 'instance',
        plain,
        message: `No instance "${escapeText(ref)}" in this project.${escapeText(has)} Check the name with \`/gpu ls\`.`,
      };
    }
  }
  if (command.kind === 'create' && !command.modal) {
    const known = knownTypes(catalog, pricing);
    if (known && !known.has(command.type)) {
      const offered = [...known].sort();
      const plain = `"${command.type}" is not an instance type this cloud offers. Types you can create: ${list(offered)} (see /gpu configs). If the cloud does sell it, an admin can name it under pricing.types in the policy file.`;
      return {
        field: 'type',
        plain,
        message: `"${escapeText(command.type)}" is not an instance type this cloud offers. Types you can create: ${escapeText(list(offered))} (see \`/gpu configs\`). If the cloud does sell it, an admin can name it under \`pricing.types\` in the policy file.`,
      };
    }
  }
  return undefined;
}
