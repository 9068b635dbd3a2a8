import { createHash } from 'node:crypto';
import type { HomeData } from '../commands/home/home-data.js';
import { homeView } from '../commands/home/home-view.js';
import { spendChartSpec } from '../commands/home/spend-section.js';
import { cachedHomeChart, rememberHomeChart } from '../store/home-state.js';
import { gatherHome } from './gather-home.js';
import type { HomeDeps } from './home-deps.js';

// Publishing one person's Home tab (views.publish): gathered from Redis, the spend chart drawn and
// uploaded only when its figures changed since the last upload (the file is private to the bot, which
// is all an image block in its own view needs), then the view. Slack keeps the latest per person.

/** Running machines change the figures at every look: the picture is redrawn at most this often. */
export const CHART_REDRAW_MS = 10 * 60_000;

/** The chart's file id: the last upload while its figures are the same (or it is recent), else a new one. */
async function chartFile(deps: HomeDeps, data: HomeData): Promise<string | undefined> {
  if (!deps.fonts) return undefined;
  const spec = spendChartSpec(data.spend);
  const key = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 32);
  const cached = await cachedHomeChart(deps.store, data.userId);
  if (cached && (cached.key === key || data.now - cached.at < CHART_REDRAW_MS)) return cached.fileId;
  // resvg (native, with threads of its own) is loaded on the first chart, as in takeSnapshot.
  const { renderChartPng } = await import('../render/render-chart-png.js');
  const png = renderChartPng(spec, deps.fonts);
  const uploaded = await deps.client.files.uploadV2({
    file: png,
    filename: 'gpuops-week.png',
    title: 'GPU-hours a day this week',
    alt_text: 'GPU-hours a day this week: your machines and your projects',
  });
  const fileId = (uploaded as { files?: Array<{ files?: Array<{ id?: string }> }> }).files?.[0]?.files?.[0]
    ?.id;
  if (fileId) {
    await rememberHomeChart(deps.store, data.userId, { key, fileId, at: data.now });
    // The old picture is shown nowhere any more: it is not left in the workspace.
    if (cached) {
      await deps.client.files
        .delete({ file: cached.fileId })
        .catch((err: unknown) => deps.log.warn({ err }, 'could not delete an old Home tab chart'));
    }
  }
  return fileId;
}

export async function publishHome(deps: HomeDeps, userId: string, notice?: string): Promise<void> {
  const data = await gatherHome(deps, userId, notice);
  let chartFileId: string | undefined;
  try {
    chartFileId = await chartFile(deps, data);
  } catch (err) {
    // The figures still show; only the picture is missing.
    deps.log.warn({ err }, 'could not upload the Home tab chart');
  }
  const view = homeView({ ...data, spend: { ...data.spend, chartFileId } });
  try {
    await deps.client.views.publish({ user_id: userId, view });
  } catch (err) {
    if (!chartFileId) throw err;
    // Slack may refuse a file it has not finished processing: the Home goes out without the picture.
    deps.log.warn({ err }, 'Slack refused the Home tab with its chart; publishing it without');
    await deps.client.views.publish({ user_id: userId, view: homeView(data) });
  }
}
