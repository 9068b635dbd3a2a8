import type { WebClient } from '@slack/web-api';
import type { Instance } from '../../cloud/index.js';
import { ValidationError } from '../../errors.js';
import { MetricsError } from '../../metrics/metrics-error.js';
import type { MatrixSeries } from '../../metrics/prometheus-schemas.js';
import { scopePromql } from '../../metrics/scope-promql.js';
import type { ChartSeries, ChartSpec } from '../../render/chart-spec.js';
import { formatDuration } from '../../render/format-duration.js';
import { clip } from '../../render/job-message.js';
import { chartFileName, summaryBlocks, summaryMrkdwn } from '../../render/metrics-message.js';
import { renderSummaryText } from '../../render/summarise-series.js';
import { type SnapshotDeps, stepFor, takeSnapshot } from '../../snapshot/take-snapshot.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { resolveRef } from '../kit/resolve.js';
import type { CommandOf } from '../registry.js';

// `/gpu metrics <instance>` and `/gpu metrics query <promql>`: a PNG chart uploaded (files upload v2)
// as a reply in the thread of the job's message, with its text summary as the file's comment; the job
// message itself ends with the same summary, so the channel reads well without opening the thread.

export const METRICS_NOT_CONFIGURED =
  'Metrics are not configured: set METRICS_URL and METRICS_API_KEY (or the METRICS_CLIENT_* settings).';

/** What a retry needs to finish without uploading the chart a second time. */
type UploadProgress = { uploaded: boolean; summary: string; headline: string; note: string };

function requireSnapshots(run: JobRun): SnapshotDeps {
  if (!run.deps.snapshots) throw new PermanentJobError(METRICS_NOT_CONFIGURED);
  return run.deps.snapshots;
}

/** A query Prometheus refuses (bad PromQL, no access) ends the job; timeouts and outages are retried. */
async function reading<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof MetricsError && !err.retryable) throw new PermanentJobError(err.message);
    throw err;
  }
}

/**
 * The end of the range: the next step boundary after now. Aligned like every snapshot (the same
 * buckets a moment later), but rounded up, so samples younger than one step are drawn too.
 */
export function rangeEnd(now: number, stepS: number): number {
  const step = stepS * 1000;
  return Math.ceil(now / step) * step;
}

function hasData(spec: ChartSpec): boolean {
  return spec.series.some((s) => s.points.some((p) => Number.isFinite(p.v)));
}

export async function showMetrics(run: JobRun, command: CommandOf<'metrics'>): Promise<Outcome> {
  const snapshots = requireSnapshots(run);
  const done = run.progress<UploadProgress>();
  if (done.uploaded) return uploadedOutcome(done);
  const range = formatDuration(command.rangeSeconds);
  const { cloud } = run.deps;
  // The cloud says which instance is meant, so names work before the metrics carry them, and an
  // instance of another project is never charted.
  const instance: Instance = await resolveRef(
    command.instance,
    'instance',
    () => cloud.listInstances(run.call),
    (id) => cloud.getInstance({ id }, run.call),
  );
  await run.update('working', `Reading GPU utilisation of ${instance.name} over the last ${range}…`);
  const end = rangeEnd(run.now(), stepFor(command.rangeSeconds * 1000));
  const snapshot = await reading(() =>
    takeSnapshot(snapshots, {
      instance: instance.id,
      metric: 'util',
      rangeMs: command.rangeSeconds * 1000,
      end,
      signal: run.signal,
    }),
  );
  if (!hasData(snapshot.spec)) {
    return {
      detail: `No metrics yet for ${instance.name} in the last ${range}: it is ${instance.state}, and an instance reports GPU metrics only while it runs and has GPUs (the first samples come about a minute after it starts).`,
    };
  }
  return upload(run, {
    png: snapshot.png,
    summary: snapshot.text,
    title: snapshot.spec.title,
    fileName: chartFileName(instance.name, range),
    headline: `GPU utilisation of ${instance.name} over the last ${range}`,
    warnings: snapshot.warnings,
    coverage: coverageNote(snapshot.spec, command.rangeSeconds * 1000, end, command),
  });
}

/** The query limited to the job's project on every selector, or a refusal that sends nothing. */
function scopedQuery(run: JobRun, promql: string, label: string): string {
  try {
    return scopePromql(promql, { label, value: run.projectId });
  } catch (err) {
    if (err instanceof ValidationError) throw new PermanentJobError(err.message);
    throw err;
  }
}

export async function queryMetrics(run: JobRun, command: CommandOf<'metrics.query'>): Promise<Outcome> {
  const { client, fonts, catalog } = requireSnapshots(run);
  const done = run.progress<UploadProgress>();
  if (done.uploaded) return uploadedOutcome(done);
  const promql = scopedQuery(run, command.promql, catalog.projectLabel);
  const range = formatDuration(command.rangeSeconds);
  const rangeMs = command.rangeSeconds * 1000;
  const stepS = stepFor(rangeMs);
  const end = rangeEnd(run.now(), stepS);
  const start = end - rangeMs;
  await run.update('working', `Running the query over the last ${range}…`);
  const answer = await reading(() =>
    client.queryRange(promql, {
      start: new Date(start),
      end: new Date(end),
      step: stepS,
      signal: run.signal,
    }),
  );
  const spec: ChartSpec = {
    title: clip(command.promql, 120),
    unit: '',
    start,
    end,
    stepMs: stepS * 1000,
    series: querySeries(answer.data.result),
  };
  if (!hasData(spec)) {
    return { detail: `The query returned no data for the last ${range}.` };
  }
  // Loaded on the first chart, as in takeSnapshot: resvg is native and most replicas never draw one.
  const { renderChartPng } = await import('../../render/render-chart-png.js');
  return upload(run, {
    png: renderChartPng(spec, fonts),
    summary: renderSummaryText(spec),
    title: spec.title,
    fileName: chartFileName('query', range),
    headline: `${spec.series.length} series over the last ${range}`,
    warnings: answer.warnings,
  });
}

/** One series per result, named by its labels (without the metric name), in a stable order. */
export function querySeries(result: readonly MatrixSeries[]): ChartSeries[] {
  return result
    .map((s) => {
      const labels = Object.entries(s.metric).filter(([k]) => k !== '__name__');
      const label =
        labels.length > 0
          ? clip(labels.map(([k, v]) => `${k}=${v}`).join(','), 60)
          : (s.metric.__name__ ?? 'value');
      return { label, points: s.values.map((p) => ({ t: Math.round(p.time * 1000), v: p.value })) };
    })
    .sort((a, b) => a.label.localeCompare(b.label));
}

interface Chart {
  readonly png: Buffer;
  readonly summary: string;
  readonly title: string;
  readonly fileName: string;
  readonly headline: string;
  readonly warnings: readonly string[];
  /** A line of our own under the summary (how much of the range has data). */
  readonly coverage?: string | undefined;
}

/**
 * When the data starts well inside the range asked for (a machine started minutes ago, charted over
 * the default hour), one line saying so and the range that would show it, else undefined.
 */
export function coverageNote(
  spec: ChartSpec,
  rangeMs: number,
  end: number,
  command: { readonly instance: string },
): string | undefined {
  const first = Math.min(
    ...spec.series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.v)).map((p) => p.t)),
  );
  if (!Number.isFinite(first)) return undefined;
  const covered = end - first;
  if (covered >= rangeMs / 4) return undefined;
  const minutes = Math.max(1, Math.ceil(covered / 60_000));
  const suggest = minutes <= 10 ? 15 : Math.ceil((minutes * 1.5) / 5) * 5;
  return `Data covers only the last ${formatDuration(minutes * 60)} of the ${formatDuration(rangeMs / 1000)} asked for (there is none before): \`/gpu metrics ${command.instance} --range ${suggest}m\` shows it in more detail.`;
}

/** Uploads the chart into the thread of the job's message (or the channel when there is none). */
async function upload(run: JobRun, chart: Chart): Promise<Outcome> {
  const slack: WebClient = run.deps.slack;
  const ref = run.data.message ?? (await run.deps.store.jobMessage(run.job.id!));
  const where = ref ? { channel_id: ref.channel, thread_ts: ref.ts } : { channel_id: run.data.ctx.channelId };
  await slack.files.uploadV2({
    ...where,
    file: chart.png,
    filename: chart.fileName,
    title: clip(chart.title, 250),
    alt_text: clip(`${chart.title}. ${chart.summary}`, 990),
    initial_comment: summaryMrkdwn(chart.summary),
  });
  const headline = `${chart.headline}: the chart is ${ref ? 'in the thread' : 'below'}.`;
  const note = [
    chart.coverage,
    chart.warnings.length > 0 ? `Prometheus warned: ${chart.warnings.join('; ')}` : undefined,
  ]
    .filter((n) => n !== undefined)
    .join('\n');
  await run.saveProgress({ uploaded: true, summary: chart.summary, headline, note });
  return uploadedOutcome({ headline, summary: chart.summary, ...(note ? { note } : {}) });
}

function uploadedOutcome(done: Partial<UploadProgress>): Outcome {
  return {
    detail: done.headline ?? 'The chart was posted.',
    result: summaryBlocks(done.summary ?? '', done.note || undefined),
  };
}

export const handlers = {
  metrics: showMetrics,
  'metrics.query': queryMetrics,
} satisfies Handlers;
