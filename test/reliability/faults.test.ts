import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BotProcess, Rig, Sent } from './support/reliability-rig.js';
import {
  FINAL,
  finalOf,
  finals,
  leaks,
  messageOf,
  slash,
  startRig,
  TYPE,
} from './support/reliability-rig.js';

/** The notice a request gets when a cloud call hangs and is retried (src/commands/kit/job-run.ts). */
const CLOUD_WAIT = /The cloud API did not answer: retrying/;
/** The acknowledgement of a look-up answered later, through the response_url. */
const LOOKING = /Looking that up/;

// 1,000 commands while the simulator answers 20% of cloud calls with a 5xx, 5% with a 429 and holds 5%
// until they time out (the client's limit is half a second here). Every command still reaches exactly
// one final answer in Slack, no machine is created twice, and nothing is left in the queue.
//
// 100 instances, one lane each (a channel of its own): create, then stop/start eight times, with one
// `/gpu ls` somewhere in the lane. A lane waits for each answer before its next command, so every
// command is valid when sent; the lanes run side by side.

const LANES = 100;
const ROUNDS = 8;
const SEED = 1234;
/** Overall shares of cloud calls hit; each fault is tried in turn, so its own rate is conditional. */
const FAULTS = [
  { status: 500, share: 0.05 },
  { status: 502, share: 0.05 },
  { status: 503, share: 0.05 },
  { status: 504, share: 0.05 },
  { status: 429, share: 0.05, retryAfterSeconds: 1 },
  { hang: true, share: 0.05 },
] as const;

interface Outcome {
  readonly lane: number;
  readonly text: string;
  readonly sent: Sent;
  /** Channel commands: the message's ts. */
  readonly ts?: string;
  readonly final: string;
}

describe('1,000 commands under cloud faults (20% 5xx, 5% 429, 5% hanging)', () => {
  let rig: Rig;
  let bot: BotProcess;
  let url: string;

  beforeAll(async () => {
    rig = await startRig({ sim: { seed: SEED, transitionMs: 50 } });
    bot = await rig.spawn({
      BOT_ROLE: 'all',
      BOT_CONCURRENCY: '32',
      BOT_POLL_MS: '50',
      // Short, so a held request becomes a timeout quickly.
      CLOUD_TIMEOUT_MS: '500',
      LOG_LEVEL: 'warn',
    });
    url = await bot.url();
    await rig.catalogue();
    let left = 1;
    for (const fault of FAULTS) {
      const { share, ...rest } = fault;
      rig.sim.control.addFault({ operation: '*', rate: share / left, ...rest });
      left -= share;
    }
  });

  afterAll(async () => {
    await rig?.close();
  });

  it('answers every command exactly once, creates each machine once, and leaves nothing queued', async () => {
    const started = Date.now();
    const outcomes: Outcome[] = [];
    const channelOf = (lane: number) => `C0LANE${lane}`;
    const lsAt = (lane: number) => 1 + (lane % (ROUNDS + 1));

    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        const name = `rel-${lane}`;
        const channelId = channelOf(lane);
        let created = false;
        const plan: string[] = [`create ${name} ${TYPE}`];
        for (let r = 0; r < ROUNDS; r++) plan.push(r % 2 === 0 ? `stop ${name}` : `start ${name}`);
        plan.splice(lsAt(lane), 0, 'ls');
        for (const [k, planned] of plan.entries()) {
          // A lane whose create failed for good asks about the machine instead of acting on it.
          const text = k > 0 && !created && planned !== 'ls' ? `show ${name}` : planned;
          // Each command from its own user: the same command from the same person within 30 s is
          // taken as a double submission, which is not what this test is about.
          const sent = await slash(rig, url, text, { channelId, userId: `U${lane}X${k}` });
          expect(sent.response.status).toBe(200);
          if (text === 'ls' || text.startsWith('show')) {
            // Asked about a machine whose create failed for good, the listener answers at once from
            // what it knows of the project ("No instance …"): that acknowledgement is the final answer.
            const ack = String((sent.response.json() as { text?: unknown }).text);
            if (!LOOKING.test(ack)) {
              outcomes.push({ lane, text, sent, final: ack });
              continue;
            }
            const post = await rig.responses.waitForPost(
              (p) => sent.responseUrl.endsWith(p.id) && !CLOUD_WAIT.test(String(p.body.text)),
              90_000,
            );
            outcomes.push({ lane, text, sent, final: String(post.body.text) });
            continue;
          }
          const ts = await messageOf(rig, sent);
          const message = await finalOf(rig, channelId, ts, 90_000);
          if (k === 0) created = String(message.text).startsWith('Done:');
          outcomes.push({ lane, text, sent, ts, final: String(message.text) });
        }
      }),
    );

    // Nothing still to come: every request job has ended.
    const deadline = Date.now() + 30_000;
    while ((await rig.pendingRequests()) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await rig.pendingRequests()).toBe(0);
    expect(outcomes).toHaveLength(LANES * (ROUNDS + 2));

    // Exactly one final answer per channel message, and it is the last thing the message says.
    for (const o of outcomes.filter((x) => x.ts)) {
      const message = rig.slack.message(channelOf(o.lane), o.ts!)!;
      expect(finals(message), `${o.text}: ${JSON.stringify(message.history.map((v) => v.text))}`).toBe(1);
      expect(message.text).toMatch(FINAL);
    }
    // One message per channel command: no job posted a second one.
    for (let lane = 0; lane < LANES; lane++) {
      const expected = outcomes.filter((o) => o.lane === lane && o.ts).length;
      expect(rig.slack.channelView(channelOf(lane))).toHaveLength(expected);
    }
    // Private answers: one final answer each, the last post, replacing the "looking" note; a request whose cloud
    // call hung was first told so ("did not answer: retrying"), once, in the message the final replaces.
    for (const o of outcomes.filter((x) => !x.ts)) {
      if (!LOOKING.test(o.sent.response.text)) {
        // Answered in the acknowledgement: only a show of a machine whose create failed for good.
        expect(o.text, o.final).toMatch(/^show /);
        expect(o.final).toMatch(/^No instance "rel-\d+" in this project/);
        expect(rig.responses.postsTo(o.sent.responseUrl)).toEqual([]);
        continue;
      }
      const posts = rig.responses.postsTo(o.sent.responseUrl);
      const texts = posts.map((p) => String(p.body.text));
      expect(
        texts.slice(0, -1).every((t) => /The cloud API did not answer: retrying/.test(t)),
        o.text,
      ).toBe(true);
      expect(posts.length).toBeLessThanOrEqual(2);
      expect(posts.every((p) => p.replaceOriginal === true)).toBe(true);
      expect(o.final).not.toMatch(/undefined|\n\s+at /);
    }

    // No machine made twice; a create that said Done made exactly one, running or as the lane left it.
    const state = rig.sim.control.state();
    const instances = state.projects.flatMap(
      (p) => (p as { instances: Array<{ name: string; state: string }> }).instances,
    );
    for (let lane = 0; lane < LANES; lane++) {
      const name = `rel-${lane}`;
      expect(rig.sim.control.createCount('createInstance', name)).toBeLessThanOrEqual(1);
      const mine = instances.filter((i) => i.name === name);
      const laneOutcomes = outcomes.filter((o) => o.lane === lane && o.ts);
      if (laneOutcomes[0]!.final.startsWith('Done:')) {
        expect(mine).toHaveLength(1);
        expect(rig.sim.control.createCount('createInstance', name)).toBe(1);
        // The last answer, when it is Done, tells the true state.
        const last = laneOutcomes.at(-1)!;
        if (last.final.startsWith('Done:')) {
          expect(last.final).toContain(`${name} is ${mine[0]!.state}`);
        }
      } else {
        // Failed for good (rare: six attempts): never a second machine.
        expect(mine.length).toBeLessThanOrEqual(1);
      }
    }

    // Nothing secret in what the run left: logs, Redis, Slack.
    expect(await leaks(rig, bot.lines)).toEqual([]);

    const done = outcomes.filter(
      (o) => o.final.startsWith('Done:') || (!o.ts && !/fail/i.test(o.final)),
    ).length;
    const hits = rig.sim.control.faults().map((f) => `${f.status ?? 'hang'}×${f.hits}`);
    const attempts = Object.values(rig.sim.control.creates().attempts.createInstance ?? {}).reduce(
      (a, b) => a + b,
      0,
    );
    console.info(
      `[reliability] faults: ${outcomes.length} commands in ${Math.round((Date.now() - started) / 1000)} s; ` +
        `${done} done, ${outcomes.length - done} failed; faults hit ${hits.join(', ')}; ` +
        `${attempts} create requests reached the cloud for ${LANES} machines`,
    );
  });
});
