/** Rejects when `promise` takes longer than `ms`: a listener must answer Slack within 3 s. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return settleWithin(promise, ms, () => new Error(`${what} took longer than ${ms} ms`));
}

/**
 * `promise`'s outcome, or `late()`'s error once `ms` have passed first. One promise and one timer,
 * no race: this wraps every Redis step of a request.
 */
export function settleWithin<T>(promise: Promise<T>, ms: number, late: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
