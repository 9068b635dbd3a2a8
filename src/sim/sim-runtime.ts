import type { Shape } from '../cloud/shape.js';
import type { FaultGate } from './fault-gate.js';
import type { FaultRegistry } from './fault-registry.js';
import type { SimClock } from './sim-clock.js';
import type { SimState } from './sim-state.js';

// What every part of the running simulator shares: one state, one clock, one set of credentials.

export interface SimCredentials {
  readonly cloudToken: string;
  readonly platformApiKey: string;
  readonly metricsApiKey: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** HS256 key of the token server; never leaves the process. */
  readonly jwtSecret: string;
}

export interface SimRuntime {
  readonly shape: Shape;
  readonly state: SimState;
  readonly clock: SimClock;
  readonly faults: FaultRegistry;
  readonly gate: FaultGate;
  readonly credentials: SimCredentials;
  readonly cloudAudience: string;
  readonly metricsAudience: string;
  readonly authUrl: string;
  log(line: string): void;
}
