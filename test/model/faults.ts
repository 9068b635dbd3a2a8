import type fc from 'fast-check';
import { checkWorld, type Model, type Real } from './model.js';
import { CLOUD_TIMEOUT_MS } from './world.js';

// The cloud hanging past the client's timeout (CLOUD_TIMEOUT_MS, short in the model's world) for the
// next call of one operation, in two kinds: held for good (the cloud never acts on it: a request lost
// on its way), or held half a second past the timeout and then carried out (the cloud was slow, the
// client had already given up on it). Starts and stops are retried by the client, and their job waits
// out the abandoned try before answering (src/commands/kit/late-action.ts); deletes are retried too (a
// DELETE is safe to repeat); a create is not, so its job's next attempt waits out the unanswered send
// and adopts what it made (src/commands/kit/earlier-send.ts): either way one machine and one answer.
//
// Left out: a call held longer than the client's timeout plus the one-second margin and then carried
// out. That can make a second machine (docs/reliability.md, "Known holes": only an idempotency key on
// the cloud's create closes it), so the model does not draw it.

export type HangKind = 'forever' | 'then-acts';

export class CloudHangs implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly operation: 'startInstance' | 'stopInstance' | 'createInstance' | 'deleteInstance',
    readonly kind: HangKind,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.stack.sim.control.addFault(
      this.kind === 'forever'
        ? { operation: this.operation, hang: true, count: 1 }
        : { operation: this.operation, latencyMs: CLOUD_TIMEOUT_MS + 500, count: 1 },
    );
    await checkWorld(model, real);
  }
  toString(): string {
    return this.kind === 'forever'
      ? `the cloud holds the next ${this.operation} call for good`
      : `the cloud holds the next ${this.operation} call past the client's timeout, then carries it out`;
  }
}
