import { expect } from 'vitest';
import type { StoredMessage } from '../../../src/devkit/fake-slack-api.js';
import { MAYBE_QUEUED, REDIS_DOWN } from '../../../src/slack/listeners/gpu-command.js';
import { until } from '../../support/until.js';

/** How a change refused in degraded mode (no replica) begins: refused, nothing stored. */
const DEGRADED_REFUSAL_START = ':warning: gpuops takes no changes right now';

import { FINAL, finals, type LaneRequest, type Rig, sendLanes } from './reliability-rig.js';

// What gpuops promises through a Redis outage (a restart, a Sentinel or a Cluster failover), checked
// the same way by every test that causes one: every acknowledged command reaches exactly one final
// answer, every refused one leaves nothing, every "may or may not run" runs at most once, and no
// create runs twice.

/** A command sent through an outage, with what the listener promised its sender. */
export interface OutageRequest extends LaneRequest {
  /** `no`: refused, nothing stored; `maybe`: Redis failed while storing it, and the person was told so. */
  readonly acknowledged: 'yes' | 'no' | 'maybe';
}

/** The requests of a run, by what the listener told the person who sent them. */
export interface OutageTally {
  readonly acked: readonly OutageRequest[];
  readonly refused: readonly OutageRequest[];
  readonly uncertain: readonly OutageRequest[];
}

/** Sends lanes of commands (sendLanes) and sorts each answer by what it promised. */
export async function sendThroughOutage(
  rig: Rig,
  url: string,
  lanes: Parameters<typeof sendLanes>[2],
): Promise<OutageRequest[]> {
  const requests: OutageRequest[] = (await sendLanes(rig, url, lanes)).map((r) => ({
    ...r,
    acknowledged:
      r.answer === REDIS_DOWN || r.answer.startsWith(DEGRADED_REFUSAL_START)
        ? 'no'
        : r.answer === MAYBE_QUEUED
          ? 'maybe'
          : 'yes',
  }));
  // Acknowledged, refused or told it may not run: always within Slack's three seconds.
  for (const r of requests) expect(r.sent.response.elapsedMs, said(r, 'answered')).toBeLessThan(3_000);
  return requests;
}

/** How a failure names a request: the command as the person typed it, where, and what they were told. */
function said(r: OutageRequest, told: string): string {
  return `"/gpu ${r.sent.text}" in ${r.sent.channelId}, ${told}`;
}

/**
 * Checks the promise above for every request of a run, and returns them by what they were told.
 * `settle` runs once every acknowledged command has its answer, before the refused and uncertain
 * ones are counted (a test that can tell when the queue is empty waits for it there).
 */
export async function checkOutageAnswers(
  rig: Rig,
  requests: readonly OutageRequest[],
  options: { messageTimeoutMs?: number; settle?: () => Promise<unknown> } = {},
): Promise<OutageTally> {
  const acked = requests.filter((r) => r.acknowledged === 'yes');
  const refused = requests.filter((r) => r.acknowledged === 'no');
  const uncertain = requests.filter((r) => r.acknowledged === 'maybe');
  const made = (r: OutageRequest) => rig.sim.control.createCount('createInstance', r.name);

  for (const r of acked) {
    const seen = said(r, 'acknowledged');
    if (r.kind === 'ls') {
      const post = await rig.responses.waitForPost((p) => r.sent.responseUrl.endsWith(p.id), 60_000);
      expect(String(post.body.text), `${seen}: its answer`).toMatch(/Instances \(\d+\)/);
      expect(rig.responses.postsTo(r.sent.responseUrl), `${seen}: its answers`).toHaveLength(1);
      continue;
    }
    // Its final answer, in whichever message holds it: the "Queued" message, or the job's own when
    // the reference to that one was lost in the outage (the "Queued" one is then deleted).
    const finalHere = (m: StoredMessage) =>
      FINAL.test(String(m.text)) && String(m.text).includes(`create ${r.name} `);
    const shown = () => rig.slack.messages(r.sent.channelId).filter(finalHere);
    const waited = options.messageTimeoutMs ?? 60_000;
    await until(
      `${seen}: a final answer`,
      () => (shown().length > 0 ? true : undefined),
      waited + 60_000,
      100,
    ).catch(() => {
      const seenThere = rig.slack.messages(r.sent.channelId).map((m) => m.text);
      throw new Error(
        `${seen}: no final answer in ${(waited + 60_000) / 1000} s; the channel showed ${JSON.stringify(seenThere)}`,
      );
    });
    const [message, ...more] = shown();
    expect(
      more.map((m) => m.text),
      `${seen}: other messages with a final answer`,
    ).toEqual([]);
    expect(message!.text, `${seen}: its message`).toMatch(new RegExp(`^Done: .*${r.name} is running`));
    const history = JSON.stringify(message!.history.map((v) => v.text));
    expect(finals(message!), `${seen}: final answers in its message, whose versions were ${history}`).toBe(1);
    expect(made(r), `${seen}: machines made`).toBe(1);
  }
  await options.settle?.();

  // Refused creates made nothing; those caught while being stored ran at most once.
  const instances = new Set(
    rig.sim.control
      .state()
      .projects.flatMap((p) => (p as { instances: Array<{ name: string }> }).instances.map((i) => i.name)),
  );
  for (const r of refused.filter((x) => x.kind === 'create')) {
    const seen = said(r, 'refused');
    expect(made(r), `${seen}: machines made`).toBe(0);
    expect(instances.has(r.name), `${seen}: a machine of that name`).toBe(false);
  }
  for (const r of uncertain.filter((x) => x.kind === 'create')) {
    expect(made(r), `${said(r, 'told it may or may not run')}: machines made`).toBeLessThanOrEqual(1);
  }
  return { acked, refused, uncertain };
}
