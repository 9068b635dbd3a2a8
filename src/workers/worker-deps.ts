import type { HandlerDeps } from '../commands/kit/handler-deps.js';
import type { GpuQueue } from '../jobs/queue.js';
import type { Guardrails } from '../policy/guardrails.js';

/** Everything a processor may touch: the handlers' deps, and what the workers add around them. */
export interface WorkerDeps extends HandlerDeps {
  /** Audit of job starts and outcomes, approval expiry, leases (src/policy/guardrails.ts). */
  readonly guardrails: Guardrails;
  /** The queue, for jobs a job adds: a lease's reminder and stop. */
  readonly queue?: GpuQueue | undefined;
  /** The sweeper's pass over requests stuck between states (requests/drive-approved.ts), composed in app/. */
  readonly sweep?: (() => Promise<string>) | undefined;
}
