import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpendSource } from '../../src/budgets/spend-source.js';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { SIM_CONFIGURATIONS, SIM_INSTANCE_TYPES } from '../../src/sim/catalog.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { periodsOf } from '../../src/store/ledger-periods.js';
import { countSpendOf } from '../../src/store/spend-projects.js';
import { pollProject } from '../../src/watch/poll-project.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// The accuracy of the spend ledger (docs/budgets.md): a simulated month on the simulator's manual clock,
// machines started, stopped and deleted at times that fall between looks, runs shorter than a look, a
// stretch with no looks at all (a worker down for 50 minutes), in a project no channel watches. The
// ledger's dollars must be within 1 % of the simulator's own running time × its prices.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Looks every 10 minutes (production: 30 s), so the month takes 4,320 looks, not 86,400. */
const LOOK = 10 * MINUTE;
const TRANSITION = 90_000;
const MONTH = 30 * DAY;
const OUTAGE = { from: 15 * DAY + 3 * HOUR, to: 15 * DAY + 3 * HOUR + 50 * MINUTE };

/** The simulator's price of a type running for an hour: its list price per GPU-hour × its GPUs. */
function simPricePerHour(type: string): number {
  const t = SIM_INSTANCE_TYPES.find((x) => x.name === type)!;
  const c = SIM_CONFIGURATIONS.find((x) => x.gpu_type === t.gpuType)!;
  return Number(c.price_per_gpu_hr) * t.gpuCount;
}

/** A small deterministic generator (the test must not be flaky): minutes in [lo, hi). */
function minutes(seed: number): (lo: number, hi: number) => number {
  let s = seed;
  return (lo, hi) => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (lo + (s % (hi - lo))) * MINUTE + (s % 53) * 1000;
  };
}

interface SimProjectDump {
  readonly id: string;
  readonly instances: readonly { readonly name: string; readonly state: string }[];
}

type Action = { at: number; op: 'create' | 'start' | 'stop' | 'delete'; machine: string };

/** What happens to the machines over the month, at offsets from its start. */
function plan(): Action[] {
  const r = minutes(20_261_128);
  const out: Action[] = [];
  // Runs all month but for two and a half days off.
  out.push({ at: 7 * MINUTE, op: 'create', machine: 'big' });
  out.push({ at: 9 * DAY + 13 * MINUTE, op: 'stop', machine: 'big' });
  out.push({ at: 11 * DAY + 12 * HOUR + 29 * MINUTE, op: 'start', machine: 'big' });
  // Working hours: up in the morning, down in the evening, at odd minutes.
  out.push({ at: 8 * HOUR + r(0, 30), op: 'create', machine: 'work' });
  out.push({ at: 19 * HOUR + r(0, 50), op: 'stop', machine: 'work' });
  for (let d = 1; d < 30; d++) {
    out.push({ at: d * DAY + 8 * HOUR + r(0, 59), op: 'start', machine: 'work' });
    out.push({ at: d * DAY + 18 * HOUR + r(0, 59), op: 'stop', machine: 'work' });
  }
  // Made on day 5, deleted while running on day 20.
  out.push({ at: 5 * DAY + 3 * HOUR + r(0, 59), op: 'create', machine: 'mid' });
  out.push({ at: 20 * DAY + 22 * HOUR + r(0, 59), op: 'delete', machine: 'mid' });
  // Short runs, some shorter than a look, several a day.
  out.push({ at: 2 * HOUR, op: 'create', machine: 'short' });
  out.push({ at: 2 * HOUR + 20 * MINUTE, op: 'stop', machine: 'short' });
  for (let d = 0; d < 30; d++) {
    for (const h of [4, 12, 21]) {
      const at = d * DAY + h * HOUR + r(0, 40);
      out.push({ at, op: 'start', machine: 'short' }, { at: at + r(5, 95), op: 'stop', machine: 'short' });
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

const TYPES: Record<string, string> = {
  big: 'h100-hgx-80gb.8x',
  work: 'a100-sxm4-80gb.4x',
  mid: 'h100-hgx-80gb.1x',
  short: 'l40s-48gb.2x',
};

describe('the spend ledger over a simulated month', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'C',
      simClock: 'manual',
      transitionMs: TRANSITION,
      policy: DEFAULT_POLICY,
      watch: { schedulers: false },
    });
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-spend-accuracy');
    await until('the price list', async () =>
      (await readCatalog(stack.store, stack.sim.info.projectId))?.catalog.configurations ? true : undefined,
    );
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('counts dollars within 1 % of the simulator’s exact running time × price, in a project nobody watches', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    const clock = stack.sim.clock;
    const deps = { ...stack.watch!.deps, now: () => clock.now() };
    await countSpendOf(stack.store, projectId);
    const start = clock.now();
    const ids = new Map<string, string>();

    const actions = plan();
    // Every moment something happens: a look, an action, an action's transition ending.
    const moments = new Set<number>();
    for (let t = 0; t <= MONTH; t += LOOK) moments.add(t);
    for (const a of actions) moments.add(a.at).add(a.at + TRANSITION);
    const times = [...moments].filter((t) => t <= MONTH).sort((a, b) => a - b);

    // The simulator's own running time (its state between two moments cannot change) × its price.
    const exact = new Map<string, number>();
    let next = 0;
    let looks = 0;
    for (let i = 0; i < times.length; i++) {
      const t = times[i]!;
      await clock.advance(start + t - clock.now());
      if (t % LOOK === 0 && !(t >= OUTAGE.from && t < OUTAGE.to)) {
        const outcome = await pollProject(deps, projectId, signal);
        expect(['baseline', 'committed']).toContain(outcome.status);
        looks++;
      }
      for (; next < actions.length && actions[next]!.at === t; next++) {
        const { op, machine } = actions[next]!;
        if (op === 'create') {
          ids.set(machine, (await stack.cloud.createInstance({ name: machine, type: TYPES[machine]! })).id);
        } else if (op === 'start') await stack.cloud.startInstance({ id: ids.get(machine)! });
        else if (op === 'stop') await stack.cloud.stopInstance({ id: ids.get(machine)! });
        else await stack.cloud.deleteInstance({ id: ids.get(machine)! });
      }
      const until = times[i + 1];
      if (until === undefined) break;
      // The simulator's state dump, as GET /_sim/state gives it.
      const projects = stack.sim.control.state().projects as readonly SimProjectDump[];
      for (const inst of projects.find((p) => p.id === projectId)!.instances) {
        if (inst.state !== 'running') continue;
        const hours = (until - t) / HOUR;
        exact.set(inst.name, (exact.get(inst.name) ?? 0) + hours);
      }
    }
    expect(looks).toBeGreaterThan(4_000);

    const source = createSpendSource({ store: stack.store, policy: DEFAULT_POLICY });
    const tz = DEFAULT_POLICY.digest.tz;
    const rows = await source.rows({
      from: periodsOf(start, tz).day,
      to: periodsOf(clock.now(), tz).day,
      projects: [projectId],
    });
    const exactUsd = [...exact].reduce((sum, [name, h]) => sum + h * simPricePerHour(TYPES[name]!), 0);
    const ledgerUsd = rows.reduce((sum, r) => sum + r.usd, 0);
    // Hundreds of hours a month (the big machine alone about 660): the bound is not met by accident.
    expect(exactUsd).toBeGreaterThan(10_000);
    expect(Math.abs(ledgerUsd - exactUsd) / exactUsd).toBeLessThan(0.01);
    // Per machine, with its type, within the model's bound: one look interval per run at most.
    for (const [name, hours] of exact) {
      const mine = rows.filter((r) => r.name === name);
      expect(new Set(mine.map((r) => r.type))).toEqual(new Set([TYPES[name]]));
      const counted = mine.reduce((sum, r) => sum + r.hours, 0);
      const runs = actions.filter(
        (a) => a.machine === name && (a.op === 'create' || a.op === 'start'),
      ).length;
      expect(Math.abs(counted - hours), name).toBeLessThanOrEqual((runs * LOOK) / HOUR);
    }
  }, 600_000);
});
