import { AppError, ErrorCode } from '../errors.js';
import type { Logger } from '../log/logger.js';

// What start-up opened, in order, so that a failed start and a stop close it in reverse: one list
// instead of a close call remembered in every part.

/** A start-up failure with the sentence to print: what, why, how to fix. */
export class StartError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.Config, message, cause === undefined ? undefined : { cause });
  }
}

/** `promise`, or the error `onTimeout` makes once `ms` have passed. */
export async function within<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface Closer {
  readonly what: string;
  readonly close: () => Promise<unknown>;
}

export class Lifecycle {
  private readonly closers: Closer[] = [];

  constructor(private readonly log: Logger) {}

  /** Remembers how to close something just opened. */
  opened(what: string, close: () => Promise<unknown>): void {
    this.closers.push({ what, close });
  }

  /** Forgets the closers of these parts: stop() ends them itself, in its own order. */
  forget(...whats: readonly string[]): void {
    const rest = this.closers.filter((c) => !whats.includes(c.what));
    this.closers.splice(0, this.closers.length, ...rest);
  }

  /** Closes everything still open, newest first, each within 5 s; a failure is logged, not thrown. */
  async closeAll(): Promise<void> {
    for (const { what, close } of this.closers.splice(0).reverse()) {
      try {
        await within(close(), 5_000, () => new Error('timed out'));
      } catch (err) {
        this.log.warn({ err, what }, 'could not close cleanly');
      }
    }
  }
}
