import { describe, expect, it } from 'vitest';
import { configurationLine } from '../../../src/commands/forms/catalog-blocks.js';

// The price list the create form shows: a configuration sold only as one GPU reads "1 GPU".

const config = (gpuCounts: number[]) => ({
  gpuType: 'RTX_A5000_24GB',
  gpuCounts,
  pricePerGpuHour: '0.45',
  stoppedPricePerHour: '0.02',
  regions: ['NORWAY'],
  provisioningMinutes: 4,
});

describe('the create form price list', () => {
  it('says "1 GPU", not "1 GPUs", and lists several counts as people read them', () => {
    expect(configurationLine(config([1]))).toContain(' · 1 GPU · NORWAY');
    expect(configurationLine(config([1, 2, 4]))).toContain(' · 1, 2 or 4 GPUs · NORWAY');
  });
});
