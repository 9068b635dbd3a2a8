import { ValidationError } from '../errors.js';

// The GPU metrics a person asks for by name (/gpu metrics, gpuops snapshot --metric). The spec does not
// list the cloud's metric names, so the series names and the labels that tie a series to an instance
// are settings (docs/metrics.md); the defaults are NVIDIA DCGM exporter names.

export const METRIC_NAMES = ['util', 'memory', 'power', 'temp'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

export const DEFAULT_SERIES: Readonly<Record<MetricName, string>> = {
  util: 'DCGM_FI_DEV_GPU_UTIL',
  memory: 'DCGM_FI_DEV_FB_USED',
  power: 'DCGM_FI_DEV_POWER_USAGE',
  temp: 'DCGM_FI_DEV_GPU_TEMP',
};

export const DEFAULT_INSTANCE_LABEL = 'instance_id';
export const DEFAULT_NAME_LABEL = 'instance_name';
export const DEFAULT_PROJECT_LABEL = 'project_id';
export const DEFAULT_GPU_LABEL = 'gpu';

export interface MetricDefinition {
  readonly name: MetricName;
  readonly title: string;
  /** Unit of the values the expression returns (after any conversion). */
  readonly unit: string;
  /** The raw series name. */
  readonly series: string;
  /** Natural bounds for the value axis, when the metric has them (util is 0–100 %). */
  readonly min?: number;
  readonly max?: number;
  /** Smallest value-axis span worth drawing (temperatures move a degree or two). */
  readonly minSpan?: number;
}

export interface MetricCatalog {
  readonly instanceLabel: string;
  readonly nameLabel: string;
  readonly gpuLabel: string;
  /** The label carrying the project id, which every `/gpu metrics query` selector is limited to. */
  readonly projectLabel: string;
  list(): readonly MetricDefinition[];
  /** Throws a ValidationError naming the choices for an unknown name. */
  get(name: string): MetricDefinition;
  /** PromQL for every GPU of one instance, e.g. DCGM_FI_DEV_GPU_UTIL{instance_id="…"}. */
  exprFor(name: MetricName, instanceId: string): string;
  /** Selector matching every series of the instance with that name (for resolving names to ids). */
  nameSelector(instanceName: string): string;
}

export interface MetricCatalogOptions {
  readonly instanceLabel?: string | undefined;
  readonly nameLabel?: string | undefined;
  readonly gpuLabel?: string | undefined;
  readonly projectLabel?: string | undefined;
  readonly series?: Partial<Record<MetricName, string>> | undefined;
}

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const METRIC_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;

export function createMetricCatalog(options: MetricCatalogOptions = {}): MetricCatalog {
  const instanceLabel = checkLabel('METRICS_INSTANCE_LABEL', options.instanceLabel ?? DEFAULT_INSTANCE_LABEL);
  const nameLabel = checkLabel('METRICS_NAME_LABEL', options.nameLabel ?? DEFAULT_NAME_LABEL);
  const gpuLabel = checkLabel('gpu label', options.gpuLabel ?? DEFAULT_GPU_LABEL);
  const projectLabel = checkLabel('METRICS_PROJECT_LABEL', options.projectLabel ?? DEFAULT_PROJECT_LABEL);
  const series = { ...DEFAULT_SERIES, ...options.series };
  for (const [name, value] of Object.entries(series)) {
    if (!METRIC_NAME.test(value)) {
      throw new ValidationError(
        'METRICS_SERIES',
        'metric name',
        `METRICS_SERIES: "${value}" for ${name} is not a Prometheus metric name.`,
      );
    }
  }
  const definitions: Record<MetricName, MetricDefinition> = {
    util: { name: 'util', title: 'GPU utilisation', unit: '%', series: series.util, min: 0, max: 100 },
    memory: { name: 'memory', title: 'GPU memory used', unit: 'GiB', series: series.memory, min: 0 },
    power: { name: 'power', title: 'GPU power draw', unit: 'W', series: series.power, min: 0 },
    temp: { name: 'temp', title: 'GPU temperature', unit: '°C', series: series.temp, minSpan: 20 },
  };
  return {
    instanceLabel,
    nameLabel,
    gpuLabel,
    projectLabel,
    list: () => METRIC_NAMES.map((n) => definitions[n]),
    get(name) {
      if (!isMetricName(name)) {
        throw new ValidationError(
          'metric',
          'known metric',
          `Unknown metric "${name}": choose one of ${METRIC_NAMES.join(', ')}.`,
        );
      }
      return definitions[name];
    },
    exprFor(name, instanceId) {
      const selector = `${definitions[name].series}{${instanceLabel}="${escapePromqlString(instanceId)}"}`;
      // DCGM reports framebuffer memory in MiB; people read GiB.
      return name === 'memory' ? `${selector} / 1024` : selector;
    },
    nameSelector(instanceName) {
      return `{${nameLabel}="${escapePromqlString(instanceName)}"}`;
    },
  };
}

export function isMetricName(name: string): name is MetricName {
  return (METRIC_NAMES as readonly string[]).includes(name);
}

/** A PromQL double-quoted string: backslash, quote and newline escaped. */
export function escapePromqlString(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** METRICS_SERIES: comma-separated name=series pairs, e.g. "util=nvidia_gpu_util,temp=nvidia_gpu_temp_c". */
export function parseSeriesOverrides(text: string | undefined): Partial<Record<MetricName, string>> {
  const out: Partial<Record<MetricName, string>> = {};
  if (text === undefined || text.trim() === '') return out;
  for (const part of text.split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (!key || !value || !isMetricName(key)) {
      throw new ValidationError(
        'METRICS_SERIES',
        'name=series pairs',
        `METRICS_SERIES: "${part.trim()}" should look like util=DCGM_FI_DEV_GPU_UTIL, with a name among ${METRIC_NAMES.join(', ')}.`,
      );
    }
    out[key] = value;
  }
  return out;
}

function checkLabel(setting: string, value: string): string {
  if (!LABEL_NAME.test(value)) {
    throw new ValidationError(
      setting,
      'label name',
      `${setting}: "${value}" is not a Prometheus label name.`,
    );
  }
  return value;
}
