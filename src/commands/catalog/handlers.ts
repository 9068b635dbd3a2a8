import type { Configuration } from '../../cloud/index.js';
import {
  type Availability,
  isOffered,
  type OfferedType,
  PRICE_LIST_NOTE,
  readAvailability,
  sortOffered,
  typesFromCapacity,
  typesFromPriceList,
} from '../../pricing/offered-types.js';
import { capacityLine, configurationLine, typePriceText } from '../../render/capacity.js';
import { listBlocks } from '../../render/instances.js';
import { escapeText } from '../../render/job-message.js';
import type { Handlers } from '../kit/handler.js';
import { classifyFailure, PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { requirePlatform } from '../kit/require-platform.js';

/** Where the price list is the only source and it is not configured: what an admin can do. */
export const NO_AVAILABILITY_SOURCE =
  'gpuops cannot tell what can be ordered here: this cloud does not list capacity, and the price list needs the platform API. Ask an admin to set PLATFORM_API_URL and PLATFORM_API_KEY; meanwhile `/gpu create` takes any type name you know.';

/** What can be ordered in this deployment: the capacity listing where there is one, else the price list. */
export async function availabilityFor(run: JobRun): Promise<Availability> {
  const { cloud, platform } = run.deps;
  const availability = await readAvailability({
    ...(cloud.supports('listCapacity') ? { listCapacity: () => cloud.listCapacity(run.call) } : {}),
    ...(platform ? { listConfigurations: () => platform.listConfigurations({ signal: run.signal }) } : {}),
  });
  if (!availability) throw new PermanentJobError(NO_AVAILABILITY_SOURCE);
  return availability;
}

/**
 * `/gpu capacity`: what can be ordered now per instance type. Shape C lists free machines, joined
 * with prices where the platform API answers; A and B answer from the price list, in the same layout,
 * with a line saying what that list cannot tell.
 */
export async function listCapacity(run: JobRun): Promise<Outcome> {
  const availability = await availabilityFor(run);
  const { types, source, pricesKnown } = availability;
  const lines = types.map((t) => capacityLine(t, pricesKnown));
  const available = types.filter(isOffered).length;
  const verb = source === 'capacity' ? 'available' : 'offered';
  const { blocks } = pagedList(
    run.data.command,
    `Capacity (${available} of ${types.length} types ${verb})`,
    lines,
  );
  const notes: string[] = [];
  if (source === 'price-list') notes.push(PRICE_LIST_NOTE);
  if (!run.deps.platform) {
    notes.push('Prices need the platform API: set PLATFORM_API_URL and PLATFORM_API_KEY.');
  } else if (availability.pricesError !== undefined) {
    run.deps.log.warn(
      { err: availability.pricesError, jobId: run.job.id },
      'configurations unavailable for /gpu capacity',
    );
    notes.push(`Prices are not shown: ${classifyFailure(availability.pricesError).message}`);
  }
  for (const note of notes) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: note }] });
  return {
    detail: `Capacity: ${available} of ${types.length} instance types ${verb}.`,
    result: blocks,
    outputs: {
      source,
      types: types.map((t) => ({
        name: t.name,
        offered: isOffered(t),
        ...(t.capacity !== undefined ? { capacity: t.capacity } : {}),
      })),
    },
  };
}

/** The type names `/gpu create` takes for a configuration, with their GPUs and price. */
function typeLines(types: readonly OfferedType[]): string[] {
  return types.map((t) => `• \`${escapeText(t.name)}\`${t.price ? ` · ${typePriceText(t.price)}` : ''}`);
}

/**
 * `/gpu configs`: the platform API's GPU configurations, cheapest first, then the instance type names
 * `/gpu create` takes: the capacity listing's where the cloud has one, else named from the price list.
 */
export async function listConfigurations(run: JobRun): Promise<Outcome> {
  const platform = requirePlatform(run);
  const { cloud } = run.deps;
  const [configurations, capacity] = await Promise.all([
    platform.listConfigurations({ signal: run.signal }),
    cloud.supports('listCapacity')
      ? cloud.listCapacity(run.call).catch((err: unknown) => {
          run.deps.log.warn({ err, jobId: run.job.id }, 'capacity unavailable for /gpu configs');
          return undefined;
        })
      : Promise.resolve(undefined),
  ]);
  const sorted = [...configurations].sort(
    (a: Configuration, b: Configuration) =>
      Number(a.price_per_gpu_hr) - Number(b.price_per_gpu_hr) || a.gpu_type.localeCompare(b.gpu_type),
  );
  const { text, blocks } = listBlocks(
    `GPU configurations (${configurations.length})`,
    sorted.map(configurationLine),
  );
  const types = sortOffered(
    capacity ? typesFromCapacity(capacity, configurations) : typesFromPriceList(configurations),
  );
  if (types.length > 0) {
    blocks.push(...listBlocks(`Instance types for /gpu create (${types.length})`, typeLines(types)).blocks);
  } else {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: 'gpuops cannot name the instance types of these configurations: an admin can add their names under `pricing.models` in the policy file (docs/policy.md).',
        },
      ],
    });
  }
  return { detail: text, result: blocks };
}

export const handlers = {
  capacity: listCapacity,
  configs: listConfigurations,
} satisfies Handlers;
