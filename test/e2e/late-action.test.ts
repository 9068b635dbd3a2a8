import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { channelRequest, finalMessage } from '../support/slash-requests.js';
import { until } from '../support/until.js';

// The cloud holds a stop past the client's timeout and then carries it out: the client has already
// tried again and that second try stopped the machine. If the job answers "Done" at once, the person
// starts the machine again, and the first stop, still held, lands after the start and stops it: the
// answers say running, the machine is stopped. A start or stop that abandoned a call must not answer
// before that call can no longer land (the client's timeout plus the one-second margin creates use).

const CLOUD_TIMEOUT_MS = 1_000;
/** Past the client's timeout, within the margin: what the bot promises to wait out. */
const HELD_MS = CLOUD_TIMEOUT_MS + 900;
const TYPE = 'h100-hgx-80gb.1x';

describe('a start or stop the cloud carries out after the client gave up on it', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'A',
      transitionMs: 20,
      env: { CLOUD_TIMEOUT_MS: String(CLOUD_TIMEOUT_MS) },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const stateOf = async (id: string) => (await stack.cloud.getInstance({ id })).state;

  it.each([
    ['stopInstance', 'stop', 'start', 'running'],
    ['startInstance', 'start', 'stop', 'stopped'],
  ] as const)(
    'a late %s does not undo the next request: the machine ends as the last Done says',
    async (operation, first, second, last) => {
      const name = `late-${first}`;
      const made = await stack.cloud.createInstance({ name, type: TYPE });
      await until(`${name} to run`, async () => ((await stateOf(made.id)) === 'running' ? true : undefined));
      if (first === 'start') {
        await stack.cloud.stopInstance({ id: made.id });
        await until(`${name} to stop`, async () =>
          (await stateOf(made.id)) === 'stopped' ? true : undefined,
        );
      }
      const held = stack.sim.control.addFault({ operation, latencyMs: HELD_MS, count: 1 });

      const firstTs = await channelRequest(stack, `${first} ${name}`);
      const arrived = await until('the first call to reach the cloud', () =>
        stack.sim.control.faults().find((f) => f.id === held.id && f.hits > 0) ? Date.now() : undefined,
      );
      await finalMessage(stack, firstTs, 'Done', 'C0GPU', 20_000);
      const secondTs = await channelRequest(stack, `${second} ${name}`);
      const answer = await finalMessage(stack, secondTs, 'Done', 'C0GPU', 20_000);
      expect(String(answer.text)).toContain(`${name} is ${last}`);

      // The held call is carried out HELD_MS after it arrived; whatever it did then shows in the state.
      const settledAt = arrived + HELD_MS + 500;
      const final = await until('the held call to have been carried out', async () => {
        const state = await stateOf(made.id);
        return state !== last || Date.now() > settledAt ? state : undefined;
      });
      expect(final, `the last answer said ${name} is ${last}`).toBe(last);
      await until(`${name} to settle`, async () => {
        const state = await stateOf(made.id);
        return state === 'starting' || state === 'stopping' ? undefined : state;
      }).then((state) => expect(state, `the last answer said ${name} is ${last}`).toBe(last));
    },
    45_000,
  );
});
