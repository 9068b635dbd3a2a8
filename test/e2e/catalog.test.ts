import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { expectCleanSlack, privateAnswer } from './answers.js';

// /gpu capacity and /gpu configs in every shape, end to end: shape C lists capacity, A and B answer
// from the platform API's price list, in the same layout.

describe.each(['A', 'B', 'C'] as const)('/gpu configs and /gpu capacity, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lists every GPU configuration privately, cheapest first, with prices, counts, regions and ETA', async () => {
    const answer = await privateAnswer(stack, 'configs');
    expect(answer.text).toBe('GPU configurations (4): 4 items');
    const lines = answer.blocksJson;
    expect(lines).toContain(
      '*H100_SXM5_80GB* · $2.89/GPU-h · stopped $0.12/h · 1 or 8 GPUs · ICELAND, NORWAY · ready in ~12 min',
    );
    expect(lines).toContain('*L40S_48GB* · $0.99/GPU-h · stopped $0.05/h · 2 GPUs · NORWAY');
    // The names /gpu create takes, with their GPUs and machine price: in every shape.
    expect(lines).toContain('*Instance types for /gpu create (');
    expect(lines).toContain(
      '• `h100-hgx-80gb.8x` · 8× H100_SXM5_80GB · $2.89/GPU-h ($23.12/h) · ready in ~12 min',
    );
    expect(lines).toContain('• `l40s-48gb.2x` · 2× L40S_48GB');
    const order = ['RTX_A5000_24GB', 'L40S_48GB', 'A100_SXM4_80GB', 'H100_SXM5_80GB'].map((t) =>
      lines.indexOf(`*${t}*`),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // Read-only: nothing shows in the channel.
    expect(stack.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expectCleanSlack(stack);
  });

  if (shape !== 'C') {
    it('answers capacity from the price list, saying what that list cannot tell', async () => {
      const answer = await privateAnswer(stack, 'capacity');
      expect(answer.text).toBe('Capacity: 5 of 5 instance types offered.');
      const lines = answer.blocksJson;
      expect(lines).toContain(
        ':large_green_circle: *h100-hgx-80gb.8x* · offered in ICELAND, NORWAY · 8× H100_SXM5_80GB · $2.89/GPU-h ($23.12/h) · ready in ~12 min',
      );
      expect(lines).toContain('not how many machines are free right now');
      expect(lines).not.toMatch(/listCapacity|shape [AB]/);
      expectCleanSlack(stack);
    });

    it('answers a region-less configuration as not offered now', async () => {
      stack.sim.control.setRegions('L40S_48GB', []);
      const answer = await privateAnswer(stack, 'capacity', { userId: 'U0BOB', userName: 'bob' });
      expect(answer.text).toBe('Capacity: 4 of 5 instance types offered.');
      expect(answer.blocksJson).toContain(':red_circle: *l40s-48gb.2x* · not offered in any region now');
    });
    return;
  }

  it('lists what is left per instance type with price per GPU-hour, machine price and ETA', async () => {
    const answer = await privateAnswer(stack, 'capacity');
    expect(answer.text).toBe('Capacity: 6 of 6 instance types available.');
    const lines = answer.blocksJson;
    expect(lines).toContain(
      '*h100-hgx-80gb.8x* · 4 available · 8× H100_SXM5_80GB · $2.89/GPU-h ($23.12/h) · ready in ~12 min',
    );
    expect(lines).toContain('*l40s-48gb.2x* · 12 available · 2× L40S_48GB · $0.99/GPU-h ($1.98/h)');
    expect(lines).toContain('*cpu.16x* · 50 available · price unknown');
    expectCleanSlack(stack);
  });

  it('shows the capacity the cloud has now: a launched machine and a sold-out type', async () => {
    await stack.cloud.createInstance({ name: 'big-1', type: 'h100-hgx-80gb.8x' });
    stack.sim.control.setCapacity('a100-sxm4-80gb.4x', 0);
    // Another person: the same request from the same person within seconds is taken as a double click.
    const answer = await privateAnswer(stack, 'capacity', { userId: 'U0BOB', userName: 'bob' });
    expect(answer.text).toBe('Capacity: 5 of 6 instance types available.');
    expect(answer.blocksJson).toContain('*h100-hgx-80gb.8x* · 3 available');
    expect(answer.blocksJson).toContain(
      ':red_circle: *a100-sxm4-80gb.4x* · none available · 4× A100_SXM4_80GB',
    );
    expectCleanSlack(stack);
  });
});
