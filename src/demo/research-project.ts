import type { LocalMessage } from '../chat/local-activity.js';
import type { LocalSlackApi } from '../chat/local-slack-api.js';
import { createInfraClient, staticToken } from '../cloud/index.js';
import type { Shape } from '../cloud/shape.js';
import type { GpuQueue } from '../jobs/queue.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import { countSpendOf } from '../store/spend-projects.js';
import type { Store } from '../store/store.js';
import { findChartFonts } from '../sys/fonts.js';
import { BOB } from './demo-people.js';

// The demo's second project, so that the default demo shows a budget alert without holding the tour
// back: a "research" project of the simulator with two machines already running, and a tiny budget
// (demo-policy.ts) that covers it alone. gpuops counts its spend from the start, as it would after a
// job there, so the first budget check after the first look finds its forecast past the budget and
// posts the alert in #ml-research, with a DM to Bob. The tour's creates are in the demo's own project,
// which that budget does not cover; the team's budget stays large (docs/demo.md).

export const RESEARCH_PROJECT_NAME = 'research';
export const RESEARCH_BUDGET = { name: 'research', monthlyUsd: 1, owner: BOB, channel: 'C0ML' } as const;
/** Already running when the chat opens: $6.60 an hour each at the simulator's prices. */
export const RESEARCH_MACHINES = [
  { name: 'research-1', type: 'a100-sxm4-80gb.4x' },
  { name: 'research-2', type: 'a100-sxm4-80gb.4x' },
] as const;

/** Makes the research project and starts its machines through the simulator's cloud API; returns its id. */
export async function seedResearchProject(
  sim: {
    readonly cloudUrl: string;
    readonly cloudToken: string;
    readonly projectId: string;
    readonly shape: Shape;
  },
  note: (line: string) => void,
): Promise<string> {
  const cloud = createInfraClient({
    baseUrl: sim.cloudUrl,
    shape: sim.shape,
    tokens: staticToken(sim.cloudToken),
    projectId: sim.projectId,
  });
  try {
    const project = await cloud.createProject({ name: RESEARCH_PROJECT_NAME, tags: { team: 'research' } });
    for (const machine of RESEARCH_MACHINES) {
      await cloud.createInstance({ name: machine.name, type: machine.type }, { projectId: project.id });
    }
    note(
      `A project ${RESEARCH_PROJECT_NAME} with ${RESEARCH_MACHINES.length} machines running (${RESEARCH_MACHINES.map((m) => m.name).join(', ')}) and a $${RESEARCH_BUDGET.monthlyUsd} budget, to show a budget alert in #ml-research.`,
    );
    return project.id;
  } finally {
    await cloud.close();
  }
}

/**
 * Asks for the research project's price list, as a request in it would (the watcher prices a
 * project's machines from its own cached catalogue); the demo's first settle waits for it.
 */
export async function askResearchPrices(queue: GpuQueue, projectId: string): Promise<void> {
  await addSystemJob(queue, { v: 1, system: 'catalog.refresh', projectId }, 'catalog-demo-research');
}

/** How long the demo waits for the research budget's first alert: a look, then a budget check. */
const ALERT_WAIT_MS = 30_000;

export interface ResearchSpend {
  readonly store: Pick<Store, 'redis' | 'prefix'>;
  readonly slack: LocalSlackApi;
  readonly projectId: string;
  readonly note: (line: string) => void;
}

/**
 * Counts the research project's spend from now on, as a finished job in it would (the watcher then
 * looks at it), and resolves once its budget alert is in #ml-research (with its chart) and Bob's DMs: true, or false (said) after a
 * limit (in the month's last minutes even the forecast stays under the budget), or on `signal`.
 */
export async function countResearchSpend(research: ResearchSpend, signal: AbortSignal): Promise<boolean> {
  const { store, slack, projectId } = research;
  const mark = slack.mark();
  // The chart comes only where the bot has a font for it (docs/demo.md, "What it needs").
  const chart = hasChartFonts();
  const said = () => {
    const messages = slack.activitySince(mark).flatMap((a) => (a.kind === 'message' ? [a.message] : []));
    const alert = (m: LocalMessage) => (m.text ?? '').startsWith(`Budget ${RESEARCH_BUDGET.name} `);
    const posted = messages.find((m) => m.channel === RESEARCH_BUDGET.channel && alert(m));
    return (
      posted !== undefined &&
      messages.some((m) => m.channel === slack.dmChannelOf(RESEARCH_BUDGET.owner) && alert(m)) &&
      (!chart || messages.some((m) => m.threadTs === posted.ts && m.files.length > 0))
    );
  };
  await countSpendOf(store, projectId);
  return new Promise<boolean>((resolve) => {
    let done = false;
    const cleanups: Array<() => void> = [];
    const finish = (alerted: boolean) => {
      if (done) return;
      done = true;
      for (const cleanup of cleanups) cleanup();
      if (!alerted && !signal.aborted)
        research.note(
          `No alert from the ${RESEARCH_BUDGET.name} budget yet; /gpu budget shows where it stands.`,
        );
      resolve(alerted);
    };
    const check = () => {
      if (said()) finish(true);
    };
    const onAbort = () => finish(false);
    const limit = setTimeout(onAbort, ALERT_WAIT_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(
      slack.onActivity(check),
      () => clearTimeout(limit),
      () => signal.removeEventListener('abort', onAbort),
    );
    check();
  });
}

function hasChartFonts(): boolean {
  try {
    findChartFonts();
    return true;
  } catch {
    return false;
  }
}
