import { settleWithin, withDeadline } from './with-deadline.js';

// One deadline per request, started when it arrives and handed to every step before the answer (the
// access gate, the role check, the form): each step keeps its own limit, but none runs past the
// request's, so the steps together can never make the answer late.

/** The request's deadline ran out before a step answered: nothing was started. */
export class DeadlinePassed extends Error {
  readonly code = 'deadline_passed';
  constructor(what: string) {
    super(`${what} did not answer before the request's deadline`);
  }
}

export interface Deadline {
  /** When it runs out (ms since the epoch). */
  readonly at: number;
  /** Milliseconds left until `reserveMs` before it runs out; never below 0. */
  left(reserveMs?: number): number;
  /**
   * `promise`, unless `reserveMs` before the deadline comes first (DeadlinePassed) or the step's own
   * `capMs` does (withDeadline's error).
   */
  race<T>(promise: Promise<T>, what: string, limits?: { capMs?: number; reserveMs?: number }): Promise<T>;
}

export function deadlineAt(at: number, now: () => number = Date.now): Deadline {
  const left = (reserveMs = 0) => Math.max(0, at - reserveMs - now());
  return {
    at,
    left,
    race<T>(
      promise: Promise<T>,
      what: string,
      { capMs, reserveMs = 0 }: { capMs?: number; reserveMs?: number } = {},
    ) {
      const ms = left(reserveMs);
      const capped = capMs !== undefined ? withDeadline(promise, capMs, what) : promise;
      if (capMs !== undefined && capMs <= ms) return capped;
      // The step goes on (its answer may fill a cache); this request stops waiting for it.
      return settleWithin(capped, ms, () => new DeadlinePassed(what));
    },
  };
}

export function deadlineIn(ms: number, now: () => number = Date.now): Deadline {
  return deadlineAt(now() + ms, now);
}

export const isDeadlinePassed = (err: unknown): err is DeadlinePassed => err instanceof DeadlinePassed;
