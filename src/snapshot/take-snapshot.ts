import { AppError, ErrorCode } from '../errors.js';
import type { MetricCatalog, MetricName } from '../metrics/catalog.js';
import type { MetricsClient } from '../metrics/metrics-client.js';
import type { MatrixSeries } from '../metrics/prometheus-schemas.js';
import { formatRange } from '../render/chart-format.js';
import type { ChartSeries, ChartSpec } from '../render/chart-spec.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import { renderSummaryText } from '../render/summarise-series.js';

// One metric of one instance over a range: resolve the instance, query Prometheus, and give back the
// PNG and its text twin. `gpuops snapshot` uses it today; the /gpu metrics worker can call it as is.

export interface SnapshotDeps {
  readonly client: MetricsClient;
  readonly catalog: MetricCatalog;
  readonly fonts: ChartFonts;
}

export interface SnapshotRequest {
  /** Instance id (uuid) or name. */
  readonly instance: string;
  readonly metric: MetricName;
  readonly rangeMs: number;
  /** End of the range, unix ms. */
  readonly end: number;
  /** About this many points per series; default 240. */
  readonly points?: number;
  readonly width?: number;
  readonly height?: number;
  readonly signal?: AbortSignal;
}

export interface Snapshot {
  readonly png: Buffer;
  readonly text: string;
  readonly spec: ChartSpec;
  readonly instance: { readonly id: string; readonly name: string | undefined };
  readonly warnings: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whole seconds between points so that the range holds about `points` of them. */
export function stepFor(rangeMs: number, points = 240): number {
  return Math.max(1, Math.ceil(rangeMs / points / 1000));
}

export async function takeSnapshot(deps: SnapshotDeps, req: SnapshotRequest): Promise<Snapshot> {
  const stepS = stepFor(req.rangeMs, req.points);
  // Align the end to the step so two snapshots a few seconds apart draw the same buckets.
  const end = Math.floor(req.end / (stepS * 1000)) * stepS * 1000;
  const start = end - req.rangeMs;
  // Names are looked up up to the real end: an instance whose first sample is younger than one step still resolves.
  const instance = await resolveInstance(deps, req.instance, start, req.end, req.signal);
  const definition = deps.catalog.get(req.metric);
  const answer = await deps.client.queryRange(deps.catalog.exprFor(req.metric, instance.id), {
    start: new Date(start),
    end: new Date(end),
    step: stepS,
    ...(req.signal ? { signal: req.signal } : {}),
  });
  const series = toChartSeries(answer.data.result, deps.catalog.gpuLabel);
  const who = instance.name ? `${instance.name} (${instance.id.slice(0, 8)})` : instance.id;
  const spec: ChartSpec = {
    title: `${who} · ${definition.title}`,
    unit: definition.unit,
    start,
    end,
    stepMs: stepS * 1000,
    series,
    ...(definition.min !== undefined ? { min: definition.min } : {}),
    ...(definition.max !== undefined ? { max: definition.max } : {}),
    ...(definition.minSpan !== undefined ? { minSpan: definition.minSpan } : {}),
    ...(req.width !== undefined ? { width: req.width } : {}),
    ...(req.height !== undefined ? { height: req.height } : {}),
  };
  // resvg (a native module) is loaded on the first chart, not at start-up: most replicas never draw one.
  const { renderChartPng } = await import('../render/render-chart-png.js');
  return {
    png: renderChartPng(spec, deps.fonts),
    text: renderSummaryText(spec),
    spec,
    instance,
    warnings: [...answer.warnings],
  };
}

/**
 * An id is taken as it is (its name, when the metrics carry one, goes in the title); a name is looked
 * up through the name label of the metrics themselves, so it works for any instance that reports GPUs.
 */
export async function resolveInstance(
  deps: Pick<SnapshotDeps, 'client' | 'catalog'>,
  ref: string,
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<{ id: string; name: string | undefined }> {
  const { client, catalog } = deps;
  const window = { start: new Date(start), end: new Date(end), ...(signal ? { signal } : {}) };
  if (UUID.test(ref)) {
    const names = await client.labelValues(catalog.nameLabel, {
      match: [`{${catalog.instanceLabel}="${ref}"}`],
      ...window,
    });
    return { id: ref, name: names.data.length === 1 ? names.data[0] : undefined };
  }
  const ids = await client.labelValues(catalog.instanceLabel, {
    match: [catalog.nameSelector(ref)],
    ...window,
  });
  if (ids.data.length === 0) {
    throw new AppError(
      ErrorCode.Validation,
      `No GPU metrics for an instance named "${ref}" in ${formatRange(start, end)}: check the name, or pass the instance id (names are looked up through the ${catalog.nameLabel} label of the metrics).`,
    );
  }
  if (ids.data.length > 1) {
    throw new AppError(
      ErrorCode.Validation,
      `Several instances named "${ref}" reported metrics (${ids.data.join(', ')}): pass the instance id instead.`,
    );
  }
  return { id: ids.data[0]!, name: ref };
}

/** One chart series per GPU, in GPU order, labelled "GPU n". */
export function toChartSeries(result: readonly MatrixSeries[], gpuLabel: string): ChartSeries[] {
  const labelled = result.map((s) => {
    const gpu = s.metric[gpuLabel];
    return {
      gpu,
      label: gpu !== undefined ? `GPU ${gpu}` : seriesName(s.metric),
      points: s.values.map((p) => ({ t: Math.round(p.time * 1000), v: p.value })),
    };
  });
  labelled.sort((a, b) => {
    const na = Number(a.gpu);
    const nb = Number(b.gpu);
    if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
    return a.label.localeCompare(b.label);
  });
  return labelled.map(({ label, points }) => ({ label, points }));
}

function seriesName(metric: Readonly<Record<string, string>>): string {
  const entries = Object.entries(metric).filter(([k]) => k !== '__name__');
  return entries.length === 0 ? (metric.__name__ ?? 'value') : entries.map(([k, v]) => `${k}=${v}`).join(',');
}
