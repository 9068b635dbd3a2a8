import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { channelRequest } from '../support/slash-requests.js';
import { until } from '../support/until.js';

// A cloud as slow as the real one: every machine, cluster, pool and filesystem stays in its
// creating state far longer than a job's lock (here 6 s against 1 s), as a GPU machine stays in
// `creating` for minutes against the 30 s lock in production. Each create's first answer is lost
// (the cloud holds it past the client's timeout and makes the resource anyway), so the job's next
// attempt must recognise what its first one made while it is still being created: a second create
// would be a second paid resource, and an attempt that only recognised a finished one would make it.

const TRANSITION_MS = 6_000;
const CLOUD_TIMEOUT_MS = 1_000;
const TYPE = 'h100-hgx-80gb.1x';
const CHANNEL = 'C0GPU';

interface Case {
  /** What the person types. */
  readonly text: string;
  /** The simulator's operation and the name it counts creates under. */
  readonly operation: string;
  readonly name: string;
  /** What the final message says once the resource is ready. */
  readonly done: RegExp;
}

const made = (name: string, operation: string, done: RegExp, text: string): Case => ({
  text,
  operation,
  name,
  done,
});

// Each resource-making handler, in a shape whose cloud can make it (and list it, to recognise it).
const CASES: Record<'A' | 'B' | 'C', readonly Case[]> = {
  A: [
    made('slow-1', 'createInstance', /slow-1 is running/, `create slow-1 ${TYPE}`),
    made('slowk8s', 'createK8sCluster', /slowk8s is ready/, 'k8s create slowk8s v1.31'),
  ],
  B: [
    made('slowhpc', 'createSlurmCluster', /slowhpc/, 'slurm create slowhpc'),
    // In the cluster the line above made: the cases run in order.
    made(
      'slowpart',
      'createSlurmNodePool',
      /slowpart/,
      'slurm pool add slowhpc slowpart rtx-a5000-24gb.1x 1',
    ),
  ],
  C: [
    made('slowfs', 'createFilesystem', /slowfs/, 'fs create slowfs 100Gi'),
    made('slowk8s', 'createK8sCluster', /slowk8s is ready/, 'k8s create slowk8s v1.31'),
    // In the cluster the line above made: the cases run in order.
    made('slowpool', 'createK8sNodePool', /slowpool/, 'k8s pool add slowk8s slowpool l40s-48gb.2x 1'),
  ],
};

/** The channel message's final text, failing with what the person saw if it never ends. */
async function outcome(stack: BotStack, ts: string, timeoutMs: number): Promise<string> {
  try {
    return await until(
      'the request to end',
      () => {
        const text = String(stack.slack.message(CHANNEL, ts)?.text ?? '');
        return /^(Done|Failed):/.test(text) ? text : undefined;
      },
      timeoutMs,
    );
  } catch {
    const history = (stack.slack.message(CHANNEL, ts)?.history ?? []).map((v) => `  ${String(v.text)}`);
    throw new Error(`the request never ended; the channel message went through:\n${history.join('\n')}`);
  }
}

describe.each(['A', 'B', 'C'] as const)(
  'creates against a cloud slower than the job lock, shape %s',
  (shape) => {
    let stack: BotStack;

    beforeAll(async () => {
      stack = await startBotStack({
        shape,
        transitionMs: TRANSITION_MS,
        lockDurationMs: 1_000,
        env: { CLOUD_TIMEOUT_MS: String(CLOUD_TIMEOUT_MS) },
      });
    }, 30_000);
    afterAll(async () => {
      await stack?.close();
    });

    const cases = CASES[shape];

    it.each(cases)(
      'makes one resource when the answer to "$text" is lost',
      async (c) => {
        // The cloud holds the create past the client's timeout, then makes the resource anyway.
        stack.sim.control.addFault({ operation: c.operation, latencyMs: CLOUD_TIMEOUT_MS + 500, count: 1 });
        const ts = await channelRequest(stack, c.text);
        const text = await outcome(stack, ts, 45_000);
        expect(text, `the person saw "${text}"`).toMatch(/^Done:/);
        expect(text).toMatch(c.done);
        const made = stack.sim.control.createCount(c.operation, c.name);
        expect(made, `the cloud made ${made} of ${c.name}, and the person pays for each`).toBe(1);
      },
      60_000,
    );

    if (shape === 'A') {
      // Another worker takes a job over from one that died right after sending the create: the job says
      // the create was sent (long enough ago that its answer cannot still come), and the machine or
      // cluster it made carries no tag of the job. It is still being created; the job must adopt it.
      const takeovers = [
        {
          text: `create taken-1 ${TYPE}`,
          operation: 'createInstance',
          name: 'taken-1',
          make: () => stack.cloud.createInstance({ name: 'taken-1', type: TYPE }),
        },
        {
          text: 'k8s create takenk8s v1.31',
          operation: 'createK8sCluster',
          name: 'takenk8s',
          make: () => stack.cloud.createK8sCluster({ name: 'takenk8s', version: 'v1.31' }),
        },
      ];
      it.each(takeovers)(
        'adopts what a dead worker made for "$text" while it is being created',
        async (c) => {
          const parsed = parseCommand(c.text);
          if (!parsed.ok) throw new Error(`"${c.text}" does not parse`);
          await c.make();
          const since = stack.slack.mark();
          await stack.queue.add(
            parsed.command.kind,
            {
              v: 1,
              command: parsed.command,
              ctx: { teamId: 'T0FAKE', channelId: CHANNEL, userId: 'U0ADA', requestedAt: Date.now() },
              progress: { sent: true, sentAt: Date.now() - 60_000 },
            },
            { jobId: `taken-${c.name}` },
          );
          const final = await stack.slack
            .waitFor(
              'chat.update',
              (u) => /^(Done|Failed):/.test(String(u.body.text)) && String(u.body.text).includes(c.name),
              45_000,
              since,
            )
            .catch(() => {
              const seen = stack.slack.calls.slice(since).map((u) => `${u.method}: ${String(u.body.text)}`);
              throw new Error(`the taken-over job never ended; Slack got:\n${seen.join('\n')}`);
            });
          const text = String(final.body.text);
          expect(text, `the person saw "${text}"`).toMatch(/^Done:/);
          const made = stack.sim.control.createCount(c.operation, c.name);
          expect(made, `the cloud made ${made} of ${c.name}, and the person pays for each`).toBe(1);
        },
        60_000,
      );
    }
  },
);
