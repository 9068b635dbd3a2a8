// The point of no return of a request answered by a deadline (the `/gpu` listener, Slack's 3 s).
// Until its job is handed to the queue, or its approval to Redis, nothing can run; after that it
// may. A listener that runs out of time shuts the gate first: what was not handed over by then never
// is, so the person can be told that nothing was started instead of "it may or may not run".

export class AddGate {
  #state: 'open' | 'handing' | 'shut' = 'open';

  /** Right before the job (or approval) is handed to Redis: false, and nothing is handed, once shut. */
  begin(): boolean {
    if (this.#state === 'shut') return false;
    this.#state = 'handing';
    return true;
  }

  /** The hand-over was refused before anything reached Redis (no connection): nothing can run. */
  refused(): void {
    this.#state = 'shut';
  }

  /**
   * The caller stops waiting: true when nothing was handed over, and now never will be; false when the
   * hand-over began and may have reached Redis.
   */
  giveUp(): boolean {
    if (this.#state === 'handing') return false;
    this.#state = 'shut';
    return true;
  }
}

/** The job was not handed to the queue: the caller had given up waiting (AddGate). */
export class GaveUpError extends Error {
  constructor() {
    super('the request was not stored before its answer was due');
    this.name = 'GaveUpError';
  }
}

/**
 * ioredis refused to send the command at all (no connection, and no offline queue to wait in): it
 * never reached Redis. Its other errors ("Connection is closed.", a retry limit) come for commands
 * already written or queued to be written, which Redis may have run.
 */
export function neverSent(err: unknown): boolean {
  return /Stream isn't writeable/.test(String((err as Error | undefined)?.message));
}
