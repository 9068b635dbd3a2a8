import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_TAG } from '../../src/commands/instances/handlers.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { channelRequest, finalMessage } from '../support/slash-requests.js';
import { until } from '../support/until.js';

// A create the cloud answers with an error (a 503: it is too busy to take it) is not a create whose
// answer was lost: the cloud said so, so the next attempt has no earlier send to wait for and sends at
// once. Only a send that got no answer (a timeout, a dropped connection) or a gateway's 502/504 (the
// cloud behind it may still be working on it) makes the next attempt wait out the client's timeout
// before it looks again. Either way the cloud never makes two machines for one create.

const TYPE = 'h100-hgx-80gb.1x';
/** Long enough that a needless wait would show, short enough that the old code still ends. */
const CLOUD_TIMEOUT_MS = 5_000;
const WAITED = /An earlier attempt sent this request and lost the answer/;

const historyOf = (stack: BotStack, ts: string) =>
  (stack.slack.message('C0GPU', ts)?.history ?? []).map((v) => String(v.text));

describe('a create the cloud refuses with an error', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      transitionMs: 100,
      env: { CLOUD_TIMEOUT_MS: String(CLOUD_TIMEOUT_MS) },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each([
    ['a machine', `create busy-1 ${TYPE}`, 'createInstance', 'busy-1', /busy-1 is running/],
    ['a Slurm cluster', 'slurm create busyhpc', 'createSlurmCluster', 'busyhpc', /busyhpc/],
  ])(
    'sends %s again at once after two 503s, without claiming a lost answer',
    async (_what, text, operation, name, done) => {
      stack.sim.control.addFault({ operation, status: 503, count: 2 });
      const ts = await channelRequest(stack, text);
      const message = await finalMessage(stack, ts, 'Done', 'C0GPU', 25_000);
      expect(String(message.text)).toMatch(done);
      const history = historyOf(stack, ts);
      // The person was told the cloud was busy and that it retries, never that an answer was lost.
      expect(
        history.some((t) => /HTTP 503/.test(t) && /Retrying \(attempt 3 of 6\)/.test(t)),
        history.join('\n'),
      ).toBe(true);
      expect(
        history.filter((t) => WAITED.test(t)),
        history.join('\n'),
      ).toEqual([]);
      expect(stack.sim.control.createCount(operation, name)).toBe(1);
    },
    40_000,
  );

  it('adopts the machine a 503 hid (made before the cloud answered), and makes no second one', async () => {
    // The cloud holds the create, makes the machine, then answers 503 (as a proxy may after its backend
    // made it): the simulator cannot do both, so the test makes the machine, tagged by the job, meanwhile.
    const held = stack.sim.control.addFault({
      operation: 'createInstance',
      status: 503,
      latencyMs: 1_000,
      count: 1,
    });
    const ts = await channelRequest(stack, `create hidden-1 ${TYPE}`);
    await until('the create to reach the cloud', () =>
      stack.sim.control.faults().find((f) => f.id === held.id && f.hits > 0),
    );
    const [job] = await stack.queue.getJobs(['active']);
    await stack.cloud.createInstance({ name: 'hidden-1', type: TYPE, tags: { [JOB_TAG]: String(job?.id) } });
    const message = await finalMessage(stack, ts, 'Done', 'C0GPU', 25_000);
    expect(String(message.text)).toMatch(/hidden-1 is running/);
    const machines = (await stack.cloud.listInstances()).filter((i) => i.name === 'hidden-1');
    expect(machines).toHaveLength(1);
  }, 40_000);

  it('still waits out the send a gateway answered 504 for: the cloud behind it may still make it', async () => {
    stack.sim.control.addFault({ operation: 'createInstance', status: 504, count: 1 });
    const ts = await channelRequest(stack, `create gateway-1 ${TYPE}`);
    await finalMessage(stack, ts, 'Done', 'C0GPU', 25_000);
    const history = historyOf(stack, ts);
    expect(
      history.filter((t) => WAITED.test(t)),
      history.join('\n'),
    ).toHaveLength(1);
    expect(stack.sim.control.createCount('createInstance', 'gateway-1')).toBe(1);
  }, 40_000);
});
