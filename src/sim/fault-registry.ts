import { asFields, type Fields, invalid } from './read-fields.js';
import type { SeededRandom } from './seeded-random.js';

// Injected faults (POST /_sim/faults): latency, an error status (429 with Retry-After), or a request
// that hangs until the simulator closes; per operation or for all ("*"), at a rate, a number of times.

export interface FaultSpec {
  /** A route-table operation, a platform or token operation, or "*" (every infrastructure and platform operation). */
  readonly operation?: string;
  readonly status?: number;
  readonly retryAfterSeconds?: number;
  readonly latencyMs?: number;
  readonly hang?: boolean;
  /** Share of matching requests affected, 0..1 (default 1). */
  readonly rate?: number;
  /** How many requests to affect (default unlimited). */
  readonly count?: number;
}

export interface Fault {
  readonly id: string;
  readonly operation: string;
  readonly status: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly latencyMs: number;
  readonly hang: boolean;
  readonly rate: number;
  /** Requests still to affect; null = unlimited. */
  remaining: number | null;
  /** Requests affected so far. */
  hits: number;
}

export const ANY_OPERATION = '*';

const MAX_LATENCY_MS = 600_000;

export class FaultRegistry {
  private faults: Fault[] = [];
  private seq = 0;
  private readonly random: SeededRandom;
  private readonly known: ReadonlySet<string>;

  constructor(random: SeededRandom, knownOperations: readonly string[]) {
    this.random = random;
    this.known = new Set(knownOperations);
  }

  /** Validates a fault request body and registers it; throws a 400-kind error naming the field. */
  add(body: unknown): Fault {
    const o: Fields = asFields(body ?? {});
    const operation = o.operation ?? ANY_OPERATION;
    if (typeof operation !== 'string' || (operation !== ANY_OPERATION && !this.known.has(operation))) {
      throw invalid(
        'operation',
        `must be "*" or one of ${[...this.known].join(', ')}; got ${JSON.stringify(operation)}`,
      );
    }
    const int = (field: string, min: number, max: number): number | undefined => {
      const v = o[field];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
        throw invalid(field, `must be a whole number from ${min} to ${max}; got ${JSON.stringify(v)}`);
      }
      return v;
    };
    const status = int('status', 400, 599);
    const retryAfterSeconds = int('retryAfterSeconds', 0, 86_400);
    const latencyMs = int('latencyMs', 0, MAX_LATENCY_MS) ?? 0;
    const count = int('count', 1, Number.MAX_SAFE_INTEGER);
    if (o.hang !== undefined && typeof o.hang !== 'boolean') throw invalid('hang', 'must be true or false');
    const hang = o.hang === true;
    const rate = o.rate ?? 1;
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
      throw invalid('rate', `must be a number from 0 to 1; got ${JSON.stringify(o.rate)}`);
    }
    if (status === undefined && latencyMs === 0 && !hang) {
      throw invalid('body', 'a fault needs at least one of status, latencyMs or hang: true');
    }
    const fault: Fault = {
      id: `fault-${++this.seq}`,
      operation,
      status,
      retryAfterSeconds: retryAfterSeconds ?? (status === 429 ? 1 : undefined),
      latencyMs,
      hang,
      rate,
      remaining: count ?? null,
      hits: 0,
    };
    this.faults.push(fault);
    return fault;
  }

  clear(): void {
    this.faults = [];
  }

  list(): readonly Fault[] {
    return this.faults;
  }

  /**
   * The fault that hits this request, if any: the first registered one that names the operation (or
   * "*" where `wildcard` allows), has requests left and wins its rate roll. Hitting uses one of `count`.
   */
  pick(operation: string, wildcard: boolean): Fault | undefined {
    for (const f of this.faults) {
      if (f.operation !== operation && !(wildcard && f.operation === ANY_OPERATION)) continue;
      if (f.remaining === 0) continue;
      if (f.rate < 1 && this.random.next() >= f.rate) continue;
      if (f.remaining !== null) f.remaining--;
      f.hits++;
      return f;
    }
    return undefined;
  }
}
