import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../src/cloud/index.js';
import { GPU_MODELS, gpuCountOf, gpusOfInstanceType } from '../../src/pricing/instance-types.js';
import { multiplyDecimal, priceForType } from '../../src/pricing/price-for-type.js';
import { SIM_CONFIGURATIONS, SIM_INSTANCE_TYPES } from '../../src/sim/catalog.js';

const CONFIGS: Configuration[] = SIM_CONFIGURATIONS.map((c) => ({
  ...c,
  gpu_counts: [...c.gpu_counts],
  regions: [...c.regions],
}));

describe('instance type → GPUs', () => {
  it('reads the model and the count of every GPU type the simulator sells, as the platform names it', () => {
    for (const type of SIM_INSTANCE_TYPES.filter((t) => t.gpuCount > 0)) {
      expect(gpusOfInstanceType(type.name), type.name).toEqual({
        gpuType: type.gpuType,
        gpuCount: type.gpuCount,
      });
    }
  });

  it('leaves unknown models and names without a .<N>x count unknown', () => {
    expect(gpusOfInstanceType('cpu.16x')).toBeUndefined();
    expect(gpusOfInstanceType('b200-hgx-192gb.8x')).toBeUndefined();
    expect(gpusOfInstanceType('h100-hgx-80gb')).toBeUndefined();
    expect(gpuCountOf('h100-hgx-80gb.0x')).toBeUndefined();
    // A prefix must end at a separator: "h1000" is not an H100.
    expect(gpusOfInstanceType('h1000-x.1x')).toBeUndefined();
  });

  it('prefers the longest prefix, so a specific model can be added before a general one', () => {
    const models = [...GPU_MODELS, { prefix: 'a100-pcie-40gb', gpuType: 'A100_PCIE_40GB' }];
    expect(gpusOfInstanceType('a100-pcie-40gb.2x', models)).toEqual({
      gpuType: 'A100_PCIE_40GB',
      gpuCount: 2,
    });
    expect(gpusOfInstanceType('a100-sxm4-80gb.4x', models)).toEqual({
      gpuType: 'A100_SXM4_80GB',
      gpuCount: 4,
    });
    expect(gpusOfInstanceType('H100-HGX-80GB.8X')).toEqual({ gpuType: 'H100_SXM5_80GB', gpuCount: 8 });
  });
});

describe('price of an instance type', () => {
  it('multiplies decimal prices exactly', () => {
    expect(multiplyDecimal('2.89', 8)).toBe('23.12');
    expect(multiplyDecimal('0.45', 1)).toBe('0.45');
    expect(multiplyDecimal('0.1', 3)).toBe('0.3');
    expect(multiplyDecimal('3', 4)).toBe('12');
    expect(multiplyDecimal('0.05', 2)).toBe('0.10');
    expect(multiplyDecimal('n/a', 2)).toBeUndefined();
  });

  it('prices a machine as price per GPU-hour × its GPUs, with the provisioning estimate', () => {
    expect(priceForType('h100-hgx-80gb.8x', CONFIGS)).toEqual({
      gpuType: 'H100_SXM5_80GB',
      gpuCount: 8,
      pricePerGpuHour: '2.89',
      pricePerHour: '23.12',
      stoppedPricePerHour: '0.12',
      provisioningMinutes: 12,
      regions: ['ICELAND', 'NORWAY'],
      countOffered: true,
    });
    expect(priceForType('cpu.16x', CONFIGS)).toBeUndefined();
    expect(priceForType('l40s-48gb.2x', [])).toBeUndefined();
  });
});
