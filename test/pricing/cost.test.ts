import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { estimateCommand } from '../../src/commands/registry.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import {
  estimateMachines,
  estimatePool,
  formatCost,
  formatUsd,
  type PriceBook,
} from '../../src/pricing/cost.js';
import { SIM_CONFIGURATIONS, SIM_INSTANCE_TYPES } from '../../src/sim/catalog.js';

const prices: PriceBook = { configurations: SIM_CONFIGURATIONS };

/** Cents, computed independently of the code under test. */
const cents = (usd: string) => Math.round(Number(usd) * 100);

function command(text: string) {
  const parsed = parseCommand(text);
  if (!parsed.ok) throw new Error(`bad test command ${text}`);
  return parsed.command;
}

describe('cost estimates', () => {
  it.each(
    SIM_CONFIGURATIONS.flatMap((c) => c.gpu_counts.map((n) => ({ gpuType: c.gpu_type, n, config: c }))),
  )('prices $gpuType × $n per hour and per day, running and stopped', ({ gpuType, n, config }) => {
    // Each configuration and count through a type the policy maps to it.
    const policy = parsePolicy(
      `pricing:\n  types:\n    box.${n}x: { gpu_type: ${gpuType}, gpu_count: ${n} }\n`,
    );
    const book: PriceBook = { configurations: SIM_CONFIGURATIONS, pricing: policy.pricing };
    const running = estimateMachines({ prices: book, type: `box.${n}x` });
    if (!running.known) throw new Error(running.reason);
    expect(Math.round(running.perHour * 100)).toBe(cents(config.price_per_gpu_hr) * n);
    expect(Math.round(running.perDay * 100)).toBe(cents(config.price_per_gpu_hr) * n * 24);
    expect(running.provisioningMinutes).toBe(config.estimated_provisioning_time_minutes);
    expect(running.countOffered).toBe(true);
    const stopped = estimateMachines({ prices: book, type: `box.${n}x`, state: 'stopped' });
    if (!stopped.known) throw new Error(stopped.reason);
    // The stopped price is per machine, whatever its GPU count.
    expect(Math.round(stopped.perHour * 100)).toBe(cents(config.stopped_price_per_hour));
    expect(Math.round(stopped.perDay * 100)).toBe(cents(config.stopped_price_per_hour) * 24);
  });

  it.each(SIM_INSTANCE_TYPES.filter((t) => t.gpuCount > 0))(
    'prices the simulator type $name from its name alone',
    (type) => {
      const config = SIM_CONFIGURATIONS.find((c) => c.gpu_type === type.gpuType)!;
      const estimate = estimateMachines({ prices, type: type.name });
      expect(estimate).toMatchObject({ known: true, gpuType: type.gpuType, gpusPerMachine: type.gpuCount });
      if (!estimate.known) return;
      expect(Math.round(estimate.perHour * 100)).toBe(cents(config.price_per_gpu_hr) * type.gpuCount);
      expect(Math.round(estimate.perDay * 100)).toBe(cents(config.price_per_gpu_hr) * type.gpuCount * 24);
    },
  );

  it('shows an 8×H100 machine exactly, as the approval card will', () => {
    const estimate = estimateMachines({ prices, type: 'h100-hgx-80gb.8x' });
    expect(estimate).toMatchObject({
      known: true,
      perHourUsd: '23.12',
      perDayUsd: '554.88',
      basis: '8 × H100_SXM5_80GB at $2.89 per GPU-hour',
      regions: ['ICELAND', 'NORWAY'],
    });
    expect(formatCost(estimate)).toBe('$23.12/h · $554.88/day');
    const stopped = estimateMachines({ prices, type: 'h100-hgx-80gb.8x', state: 'stopped' });
    expect(formatCost(stopped)).toBe('$0.12/h · $2.88/day');
  });

  it('prices a node pool as count × type', () => {
    const pool = estimatePool({ prices, type: 'a100-sxm4-80gb.4x', count: 3 });
    expect(pool).toMatchObject({
      known: true,
      machines: 3,
      perHourUsd: '19.80',
      perDayUsd: '475.20',
      basis: '3 × a100-sxm4-80gb.4x: 12 × A100_SXM4_80GB at $1.65 per GPU-hour',
    });
    expect(formatCost(pool)).toBe('$19.80/h · $475.20/day');
  });

  it('can count the stopped price per GPU', () => {
    const policy = parsePolicy('pricing:\n  stopped_price: per_gpu\n');
    const estimate = estimateMachines({
      prices: { configurations: SIM_CONFIGURATIONS, pricing: policy.pricing },
      type: 'h100-hgx-80gb.8x',
      state: 'stopped',
    });
    expect(estimate).toMatchObject({ known: true, perHourUsd: '0.96', perDayUsd: '23.04' });
  });

  it('reads the catalogue cache form (camelCase) as well as the platform form', () => {
    const camel: PriceBook = {
      configurations: SIM_CONFIGURATIONS.map((c) => ({
        gpuType: c.gpu_type,
        gpuCounts: c.gpu_counts,
        pricePerGpuHour: c.price_per_gpu_hr,
        stoppedPricePerHour: c.stopped_price_per_hour,
        regions: c.regions,
        provisioningMinutes: c.estimated_provisioning_time_minutes,
      })),
    };
    expect(estimateMachines({ prices: camel, type: 'l40s-48gb.2x' })).toEqual(
      estimateMachines({ prices, type: 'l40s-48gb.2x' }),
    );
  });

  it('says the price is unknown, never zero, and why', () => {
    const cpu = estimateMachines({ prices, type: 'cpu.16x' });
    expect(cpu).toEqual({
      known: false,
      reason:
        'gpuops does not know which GPUs the instance type cpu.16x has; add it under pricing.types in the policy file',
    });
    expect(formatCost(cpu)).toMatch(/^price unknown: gpuops does not know which GPUs/);
    expect(estimateMachines({ prices: { configurations: undefined }, type: 'h100-hgx-80gb.1x' })).toEqual({
      known: false,
      reason: 'prices could not be loaded from the platform API',
    });
    const noB200 = parsePolicy('pricing:\n  models:\n    - { prefix: b200, gpu_type: B200_180GB }\n');
    expect(
      estimateMachines({
        prices: { configurations: SIM_CONFIGURATIONS, pricing: noB200.pricing },
        type: 'b200.8x',
      }),
    ).toEqual({ known: false, reason: 'no configuration of the platform prices B200_180GB (b200.8x)' });
    const oddPrice = [{ ...SIM_CONFIGURATIONS[0]!, price_per_gpu_hr: 'call us' }];
    expect(
      estimateMachines({ prices: { configurations: oddPrice }, type: 'h100-hgx-80gb.1x' }),
    ).toMatchObject({
      known: false,
      reason: expect.stringContaining('"call us"'),
    });
  });

  it('estimates commands: what create, start and pool add add, what stop keeps costing', () => {
    expect(estimateCommand({ prices, command: command('create big h100-hgx-80gb.8x') })).toMatchObject({
      adds: true,
      estimate: { known: true, perHourUsd: '23.12' },
    });
    expect(
      estimateCommand({ prices, command: command('k8s pool add prod gpu-a l40s-48gb.2x 4') }),
    ).toMatchObject({
      adds: true,
      estimate: { known: true, perHourUsd: '7.92', machines: 4 },
    });
    expect(
      estimateCommand({ prices, command: command('start train-01'), targetType: 'rtx-a5000-24gb.1x' }),
    ).toMatchObject({ adds: true, estimate: { known: true, perHourUsd: '0.45' } });
    expect(estimateCommand({ prices, command: command('start train-01') })).toMatchObject({
      adds: true,
      estimate: {
        known: false,
        reason: 'the type of train-01 is not known yet, so its price cannot be worked out',
      },
    });
    expect(
      estimateCommand({ prices, command: command('stop train-01'), targetType: 'h100-hgx-80gb.1x' }),
    ).toMatchObject({
      adds: false,
      label: 'while it stays stopped',
      estimate: { known: true, perHourUsd: '0.12' },
    });
    expect(estimateCommand({ prices, command: command('ls') })).toBeUndefined();
    expect(estimateCommand({ prices, command: command('create') })).toBeUndefined();
  });

  it('formats money for people', () => {
    expect(formatUsd(2.5)).toBe('$2.50');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0.004)).toBe('$0.004');
    expect(formatUsd(0)).toBe('$0.00');
  });
});

describe('cost estimates that cannot be made, and what they say', () => {
  const h100 = SIM_CONFIGURATIONS.find((c) => c.gpu_type === 'H100_SXM5_80GB')!;
  const book = (change: Record<string, unknown>): PriceBook => ({
    configurations: [{ ...h100, ...change } as (typeof SIM_CONFIGURATIONS)[number]],
  });

  it.each([0, -1, 1.5])('refuses %s machines, naming the number', (machines) => {
    expect(estimateMachines({ prices, type: 'h100-hgx-80gb.8x', machines })).toEqual({
      known: false,
      reason: `${machines} is not a number of machines`,
    });
  });

  it('says a machine without GPUs is not priced by the platform', () => {
    const pricing = parsePolicy(
      'pricing:\n  types:\n    cpu.16x: { gpu_type: H100_SXM5_80GB, gpu_count: 0 }',
      'p.yaml',
    ).pricing;
    expect(estimateMachines({ prices: { ...prices, pricing }, type: 'cpu.16x' })).toEqual({
      known: false,
      reason: 'cpu.16x has no GPUs, and the platform prices GPU configurations only',
    });
  });

  it('names the field and value the platform gave when it is not a price', () => {
    const running = estimateMachines({
      prices: book({ price_per_gpu_hr: '2.89 USD' }),
      type: 'h100-hgx-80gb.1x',
    });
    expect(running).toEqual({
      known: false,
      reason: 'the platform gives price_per_gpu_hr "2.89 USD" for H100_SXM5_80GB, which is not a price',
    });
    const stopped = estimateMachines({
      prices: book({ stopped_price_per_hour: 'n/a' }),
      type: 'h100-hgx-80gb.1x',
      state: 'stopped',
    });
    expect(stopped).toEqual({
      known: false,
      reason: 'the platform gives stopped_price_per_hour "n/a" for H100_SXM5_80GB, which is not a price',
    });
    for (const bad of ['x2.89', '2.89x', '.5', '']) {
      expect(
        estimateMachines({ prices: book({ price_per_gpu_hr: bad }), type: 'h100-hgx-80gb.1x' }).known,
      ).toBe(false);
    }
  });

  it('reads prices with spaces around them, and says per GPU-hour or per machine-hour when stopped', () => {
    const spaced = estimateMachines({
      prices: book({ price_per_gpu_hr: ' 2.89 ', stopped_price_per_hour: ' 0.12 ' }),
      type: 'h100-hgx-80gb.8x',
      machines: 2,
    });
    expect(spaced).toMatchObject({
      known: true,
      perHourUsd: '46.24',
      basis: expect.stringContaining('at $2.89 per'),
    });
    const stopped = estimateMachines({ prices, type: 'h100-hgx-80gb.8x', machines: 2, state: 'stopped' });
    expect(stopped).toMatchObject({
      known: true,
      perHourUsd: '0.24',
      basis: '2 × h100-hgx-80gb.8x: stopped, $0.12 per machine-hour',
    });
    const perGpu = estimateMachines({
      prices: { ...prices, pricing: parsePolicy('pricing:\n  stopped_price: per_gpu', 'p.yaml').pricing },
      type: 'h100-hgx-80gb.8x',
      machines: 2,
      state: 'stopped',
    });
    expect(perGpu).toMatchObject({
      known: true,
      perHourUsd: '1.92',
      basis: '2 × h100-hgx-80gb.8x: stopped, 16 × H100_SXM5_80GB at $0.12 per GPU-hour',
    });
  });

  it('says whether the configuration offers the count, and keeps the provisioning estimate', () => {
    const offered = estimateMachines({ prices, type: 'h100-hgx-80gb.8x' });
    expect(offered).toMatchObject({ known: true, countOffered: true, provisioningMinutes: 12 });
    const notOffered = estimateMachines({ prices: book({ gpu_counts: [1] }), type: 'h100-hgx-80gb.8x' });
    expect(notOffered).toMatchObject({ known: true, countOffered: false });
    const unlisted = estimateMachines({
      prices: book({ gpu_counts: undefined, estimated_provisioning_time_minutes: undefined }),
      type: 'h100-hgx-80gb.8x',
    });
    expect(unlisted).toMatchObject({ known: true, countOffered: true });
    expect(unlisted).not.toHaveProperty('provisioningMinutes');
  });
});
