import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { createMetricCatalog, parseSeriesOverrides } from '../../src/metrics/catalog.js';

const ID = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';

describe('GPU metric catalogue', () => {
  it('builds one PromQL selector per metric for one instance, with memory shown in GiB', () => {
    const catalog = createMetricCatalog();
    expect(catalog.list().map((m) => [m.name, m.unit])).toEqual([
      ['util', '%'],
      ['memory', 'GiB'],
      ['power', 'W'],
      ['temp', '°C'],
    ]);
    expect(catalog.exprFor('util', ID)).toBe(`DCGM_FI_DEV_GPU_UTIL{instance_id="${ID}"}`);
    expect(catalog.exprFor('memory', ID)).toBe(`DCGM_FI_DEV_FB_USED{instance_id="${ID}"} / 1024`);
    expect(catalog.exprFor('power', ID)).toBe(`DCGM_FI_DEV_POWER_USAGE{instance_id="${ID}"}`);
    expect(catalog.exprFor('temp', ID)).toBe(`DCGM_FI_DEV_GPU_TEMP{instance_id="${ID}"}`);
    expect(catalog.get('util')).toMatchObject({ title: 'GPU utilisation', min: 0, max: 100 });
  });

  it('takes other label and series names from the settings', () => {
    const catalog = createMetricCatalog({
      instanceLabel: 'machine_id',
      nameLabel: 'machine',
      series: parseSeriesOverrides('util=nvidia_gpu_utilization, temp=nvidia_gpu_temp_c'),
    });
    expect(catalog.exprFor('util', 'm-1')).toBe('nvidia_gpu_utilization{machine_id="m-1"}');
    expect(catalog.exprFor('temp', 'm-1')).toBe('nvidia_gpu_temp_c{machine_id="m-1"}');
    expect(catalog.exprFor('power', 'm-1')).toBe('DCGM_FI_DEV_POWER_USAGE{machine_id="m-1"}');
    expect(catalog.nameSelector('train-1')).toBe('{machine="train-1"}');
  });

  it('escapes names so a quote cannot change the query', () => {
    const catalog = createMetricCatalog();
    expect(catalog.nameSelector('a"} or vector(1) #')).toBe('{instance_name="a\\"} or vector(1) #"}');
    expect(catalog.exprFor('util', 'x\\y')).toBe('DCGM_FI_DEV_GPU_UTIL{instance_id="x\\\\y"}');
  });

  it('names the choices for an unknown metric and rejects bad settings', () => {
    const catalog = createMetricCatalog();
    expect(() => catalog.get('fan')).toThrow(
      'Unknown metric "fan": choose one of util, memory, power, temp.',
    );
    expect(() => createMetricCatalog({ instanceLabel: 'instance-id' })).toThrow(ValidationError);
    expect(() => parseSeriesOverrides('fan=x')).toThrow(/METRICS_SERIES/);
    expect(() => createMetricCatalog({ series: { util: 'bad name' } })).toThrow(
      /not a Prometheus metric name/,
    );
  });
});
