import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { type Policy, toPolicy } from '../../src/policy/policy.js';
import { policyFileSchema } from '../../src/policy/policy-schema.js';
import { IDLE_ACTIONS } from '../../src/render/idle-alert.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { createIdleState } from '../../src/store/idle-state.js';
import { checkIdle } from '../../src/watch/idle-check.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { pngHeader } from '../support/png.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { until as waitUntil } from '../support/until.js';
import { CHANNEL, channelRequest, expectCleanSlack, finalMessage, listenerAnswer } from './answers.js';

// Idle GPUs against a real Prometheus fed by the simulator's exporter: instances whose names start
// with "idle" sit idle, "busy" ones work. An idle instance gets exactly one alert, with its chart, in
// the watching channel and in its owner's DM; a busy one and one without GPU metrics get none; the
// alert's Stop stops it in the simulator through the same door as /gpu stop; Keep quiets it; and the
// policy stops one nobody answered.

const OWNER = 'U0ADA';

// A short window so the test runs in seconds; the rest as a team would write it.
const POLICY: Policy = toPolicy(
  policyFileSchema.parse({
    idle: { threshold_percent: 5, window: '6s', check_every: '1s' },
    digest: { enabled: false },
  }),
  'idle test policy',
);

const until = <T>(what: string, read: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000) =>
  waitUntil(what, read, timeoutMs, 100);

const alertsFor = (stack: BotStack, channel: string, name: string): StoredMessage[] =>
  stack.slack.channelView(channel).filter((m) => String(m.text).startsWith(`${name} has been idle`));

const buttonValue = (message: StoredMessage, actionId: string): string => {
  const actions = (message.blocks ?? []).find((b) => (b as { type: string }).type === 'actions') as
    | { elements: Array<{ action_id: string; value: string }> }
    | undefined;
  const button = actions?.elements.find((e) => e.action_id === actionId);
  if (!button) throw new Error(`no ${actionId} button on the alert`);
  return button.value;
};

describe('idle GPU alerts (shape B, real Prometheus)', () => {
  let stack: BotStack;
  const ids: Record<string, string> = {};
  const signal = new AbortController().signal;

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      metrics: true,
      policy: POLICY,
      slack: { users: [{ id: OWNER, name: 'ada' }] },
      watch: { idleEveryMs: 500, pollEveryMs: 500 },
    });
    // Prices for the alert's cost (and for the create's own approval check), as the scheduled refresh would.
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-idle-test');
    await until(
      'the catalogue',
      async () => (await readCatalog(stack.store, stack.sim.info.projectId)) ?? undefined,
    );
    expect(await listenerAnswer(stack, 'watch on')).toContain('This channel now watches project');
    // Made through gpuops by its owner, who is told by DM…
    const ts = await channelRequest(stack, 'create idle-1 h100-hgx-80gb.1x');
    await finalMessage(stack, ts, 'Done', CHANNEL, 30_000);
    // …and from elsewhere: no owner known, the channel only.
    for (const [name, type] of [
      ['idle-2', 'h100-hgx-80gb.1x'],
      ['idle-3', 'h100-hgx-80gb.1x'],
      ['busy-1', 'h100-hgx-80gb.1x'],
      ['idle-cpu', 'cpu.16x'],
    ] as const) {
      await stack.cloud.createInstance({ name, type });
    }
    for (const i of await stack.cloud.listInstances()) ids[i.name] = i.id;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('alerts once per idle instance, with its chart, cost and buttons, in the channel and the owner DM', async () => {
    const alert = await until('the idle-1 alert', () => alertsFor(stack, CHANNEL, 'idle-1')[0]);
    for (const name of ['idle-2', 'idle-3'])
      await until(`the ${name} alert`, () => alertsFor(stack, CHANNEL, name)[0]);
    const blocks = JSON.stringify(alert.blocks);
    expect(alert.text).toMatch(
      /^idle-1 has been idle for at least \d+s \(GPU below 5%\), costing \$2\.89\/h\.$/,
    );
    expect(blocks).toContain('*Costs*\\n$2.89/h');
    expect(blocks).toContain('*Spent while idle*\\n$0.0');
    expect(blocks).toContain(`owner <@${OWNER}>`);
    for (const label of ['Stop', 'Keep for 2 hours', 'Snooze for a day'])
      expect(blocks).toContain(`"text":"${label}"`);

    // The chart in the alert's thread: a real PNG drawn from Prometheus.
    const chart = await until('the chart', () =>
      [...stack.slack.files.values()].find((f) => f.threadTs === alert.ts && f.completed),
    );
    expect(chart.channel).toBe(CHANNEL);
    expect(chart.filename).toMatch(/^metrics-idle-1-.*\.png$/);
    expect(pngHeader(chart.bytes!)).toEqual({ width: 1000, height: 560 });

    // The owner's DM has the same alert and chart; idle-2 has no owner, so no DM.
    const dm = stack.slack.dmChannelFor(OWNER);
    const dmAlert = await until('the DM alert', () => alertsFor(stack, dm, 'idle-1')[0]);
    await until('the DM chart', () =>
      [...stack.slack.files.values()].find((f) => f.channel === dm && f.threadTs === dmAlert.ts),
    );
    expect(alertsFor(stack, dm, 'idle-2')).toEqual([]);

    // Later checks find the same idle period: nothing more is sent.
    for (let i = 0; i < 2; i++) {
      const outcome = await checkIdle(stack.watch!.deps, stack.sim.info.projectId, signal);
      expect(outcome).toMatchObject({ idle: 3, alerted: 0 });
    }
    expect(alertsFor(stack, CHANNEL, 'idle-1')).toHaveLength(1);
    expect(alertsFor(stack, dm, 'idle-1')).toHaveLength(1);
    // Busy GPUs, and an instance named idle without GPU metrics, are never called idle.
    expect(alertsFor(stack, CHANNEL, 'busy-1')).toEqual([]);
    expect(alertsFor(stack, CHANNEL, 'idle-cpu')).toEqual([]);
    expectCleanSlack(stack);
  });

  it('stops the instance when Stop is pressed, through the same door as /gpu stop', async () => {
    const alert = alertsFor(stack, CHANNEL, 'idle-1')[0]!;
    const since = stack.slack.mark();
    const response = await stack.interact(
      blockActionsPayload({
        actionId: IDLE_ACTIONS.stop,
        value: buttonValue(alert, IDLE_ACTIONS.stop),
        text: 'Stop',
        channelId: CHANNEL,
        userId: OWNER,
        message: { ts: alert.ts, text: alert.text ?? '', blocks: alert.blocks ?? [] },
      }),
    );
    expect(response.status).toBe(200);
    // The stop request shows like a typed one: its own message, edited until done.
    const done = await stack.slack.waitFor(
      'chat.update',
      (c) => String(c.body.text).startsWith(`Done: /gpu stop ${ids['idle-1']}`),
      30_000,
      since,
    );
    expect(String(done.body.text)).toContain('idle-1 is stopped');
    expect((await stack.cloud.getInstance({ id: ids['idle-1']! })).state).toBe('stopped');
    const answered = stack.slack.message(CHANNEL, alert.ts)!;
    expect(JSON.stringify(answered.blocks)).toContain(`<@${OWNER}> asked to stop it (job `);
    expect(JSON.stringify(answered.blocks)).not.toContain(IDLE_ACTIONS.stop);
  });

  it('keeps an instance quiet for 2 hours when Keep is pressed', async () => {
    const alert = alertsFor(stack, CHANNEL, 'idle-2')[0]!;
    await stack.interact(
      blockActionsPayload({
        actionId: IDLE_ACTIONS.keep,
        value: buttonValue(alert, IDLE_ACTIONS.keep),
        text: 'Keep for 2 hours',
        channelId: CHANNEL,
        userId: OWNER,
        message: { ts: alert.ts, text: alert.text ?? '', blocks: alert.blocks ?? [] },
      }),
    );
    await stack.slack.waitFor('chat.update', (c) => c.body.ts === alert.ts);
    expect(JSON.stringify(stack.slack.message(CHANNEL, alert.ts)!.blocks)).toContain(
      `<@${OWNER}> keeps it for 2 hours: no idle alert or automatic stop until`,
    );
    const suppression = await createIdleState(stack.store).suppression(ids['idle-2']!);
    expect(suppression).toMatchObject({ by: OWNER, reason: 'keep' });
    await checkIdle(stack.watch!.deps, stack.sim.info.projectId, signal);
    expect(alertsFor(stack, CHANNEL, 'idle-2')).toHaveLength(1);
  });

  it('lets the policy stop an idle instance nobody answered, and says so in the thread', async () => {
    const alert = alertsFor(stack, CHANNEL, 'idle-3')[0]!;
    const policy: Policy = { ...POLICY, idle: { ...POLICY.idle, autoStopAfterSeconds: 1 } };
    const deps = { ...stack.watch!.deps, policy };
    await until(
      'the policy to stop idle-3',
      async () => ((await checkIdle(deps, stack.sim.info.projectId, signal)).stopped > 0 ? true : undefined),
      15_000,
    );
    const reply = await until('the thread reply', () =>
      stack.slack
        .thread(CHANNEL, alert.ts)
        .find((m) => String(m.text).includes('Stopped by the gpuops policy')),
    );
    expect(reply.text).toMatch(/\*idle-3\* was idle for at least .* and nobody answered this alert for /);
    // The policy acts through the request pipeline: a stop job by the bot, on the audit trail.
    const state = await until('idle-3 to stop through its job', async () => {
      const s = (await stack.cloud.getInstance({ id: ids['idle-3']! })).state;
      return s === 'stopping' || s === 'stopped' ? s : undefined;
    });
    expect(['stopping', 'stopped']).toContain(state);
    const trail = await stack.guardrails.audit.latest(50);
    const request = trail.find((e) => e.event === 'request' && e.operation === 'stop' && e.actor === 'U0BOT');
    expect(
      request,
      `audit trail: ${JSON.stringify(trail.map((e) => [e.event, e.operation, e.actor]))}`,
    ).toMatchObject({
      outcome: 'queued',
      target: ids['idle-3'],
    });
    expect(String(request?.parameters.reason)).toContain('idle policy');
    await until('the stop job to end on the audit trail', async () =>
      (await stack.guardrails.audit.latest(50)).find(
        (e) => e.event === 'outcome' && e.operation === 'stop' && e.jobId === request?.jobId,
      ),
    );
    // idle-2 was kept, so the policy left it running.
    expect((await stack.cloud.getInstance({ id: ids['idle-2']! })).state).toBe('running');
    await until('the alert without buttons', () =>
      JSON.stringify(stack.slack.message(CHANNEL, alert.ts)?.blocks).includes(
        'Stopped by the gpuops policy (no answer)',
      )
        ? true
        : undefined,
    );
    expectCleanSlack(stack);
  });
});
