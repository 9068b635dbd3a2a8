import type { Configuration } from '../../cloud/index.js';
import { priceForType } from '../../pricing/price-for-type.js';
import { capacityLine, configurationLine } from '../../render/capacity.js';
import { listBlocks } from '../../render/instances.js';
import type { Handlers } from '../kit/handler.js';
import { classifyFailure } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { requirePlatform } from '../kit/require-platform.js';

/**
 * `/gpu capacity`: machines still available per instance type (shape C), joined with the platform
 * API's prices where it is configured. Prices are a bonus: when they cannot be read the capacity is
 * still shown, with a note saying why prices are missing.
 */
export async function listCapacity(run: JobRun): Promise<Outcome> {
  const entries = await run.deps.cloud.listCapacity(run.call);
  let configurations: Configuration[] | undefined;
  let note: string | undefined;
  if (!run.deps.platform) {
    note = 'Prices need the platform API: set PLATFORM_API_URL and PLATFORM_API_KEY.';
  } else {
    try {
      configurations = await run.deps.platform.listConfigurations({ signal: run.signal });
    } catch (err) {
      run.deps.log.warn({ err, jobId: run.job.id }, 'configurations unavailable for /gpu capacity');
      note = `Prices are not shown: ${classifyFailure(err).message}`;
    }
  }
  const lines = [...entries]
    .sort((a, b) => b.capacity - a.capacity || a.name.localeCompare(b.name))
    .map((e) =>
      capacityLine({
        type: e.name,
        capacity: e.capacity,
        price: configurations ? priceForType(e.name, configurations) : undefined,
        pricesKnown: configurations !== undefined,
      }),
    );
  const available = entries.filter((e) => e.capacity > 0).length;
  const { blocks } = listBlocks(`Capacity (${available} of ${entries.length} types available)`, lines);
  if (note) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: note }] });
  return {
    detail: `Capacity: ${available} of ${entries.length} instance types available.`,
    result: blocks,
  };
}

/** `/gpu configs`: the platform API's GPU configurations, cheapest first. */
export async function listConfigurations(run: JobRun): Promise<Outcome> {
  const platform = requirePlatform(run);
  const configurations = await platform.listConfigurations({ signal: run.signal });
  const lines = [...configurations]
    .sort(
      (a, b) =>
        Number(a.price_per_gpu_hr) - Number(b.price_per_gpu_hr) || a.gpu_type.localeCompare(b.gpu_type),
    )
    .map(configurationLine);
  const { text, blocks } = listBlocks(`GPU configurations (${configurations.length})`, lines);
  return { detail: text, result: blocks };
}

export const handlers = {
  capacity: listCapacity,
  configs: listConfigurations,
} satisfies Handlers;
