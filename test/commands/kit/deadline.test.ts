import { describe, expect, it } from 'vitest';
import { DeadlinePassed, deadlineIn } from '../../../src/commands/kit/deadline.js';
import { withDeadline } from '../../../src/commands/kit/with-deadline.js';

// Every Redis and Slack step before an acknowledgement runs inside these: a step that hangs must be
// given up on in time, naming what was slow, and a step that answers must come through unchanged.

const never = () => new Promise<never>(() => {});
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('withDeadline', () => {
  it('gives up on a step that does not answer in time, saying which step and how long it had', async () => {
    const started = Date.now();
    await expect(withDeadline(never(), 50, 'Redis')).rejects.toThrow('Redis took longer than 50 ms');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("hands on a step's answer, or its own failure, when it comes in time", async () => {
    await expect(withDeadline(after(5, 'bound to proj-1'), 1_000, 'Redis')).resolves.toBe('bound to proj-1');
    await expect(withDeadline(Promise.reject(new Error('NOSCRIPT')), 1_000, 'Redis')).rejects.toThrow(
      'NOSCRIPT',
    );
  });

  it('leaves no timer behind once the step answered (a finished request keeps nothing alive)', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await withDeadline(Promise.resolve(1), 60_000, 'Redis');
    const afterwards = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(afterwards).toBe(before);
  });
});

describe("a request's deadline", () => {
  it('stops waiting for a step at the reserve before it runs out, with DeadlinePassed', async () => {
    const deadline = deadlineIn(2_000);
    const started = Date.now();
    const late = deadline.race(never(), 'Slack users.info', { reserveMs: 1_900 });
    await expect(late).rejects.toBeInstanceOf(DeadlinePassed);
    await expect(late).rejects.toThrow("Slack users.info did not answer before the request's deadline");
    expect(Date.now() - started).toBeLessThan(1_900);
  });

  it("keeps the step's own cap when it comes first", async () => {
    const deadline = deadlineIn(10_000);
    await expect(deadline.race(never(), 'Redis', { capMs: 30 })).rejects.toThrow(
      'Redis took longer than 30 ms',
    );
  });

  it('a step that fails after the request stopped waiting for it raises no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const deadline = deadlineIn(20);
      const slowFailure = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 60));
      await expect(deadline.race(slowFailure, 'Redis')).rejects.toBeInstanceOf(DeadlinePassed);
      await after(100, undefined);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
