import type { ServerResponse } from 'node:http';
import type { FaultRegistry } from './fault-registry.js';
import { sendMessage } from './http-io.js';

// Applies injected faults to live requests. Latency waits on its own timer and hanging requests are
// parked, so neither blocks other requests; close() releases both so the simulator never waits forever.

export interface FaultGate {
  /** True when the fault answered (or dropped) the request and the caller must not respond. */
  apply(operation: string, wildcard: boolean, res: ServerResponse): Promise<boolean>;
  /** Requests currently held by a hang fault. */
  readonly hanging: number;
  close(): void;
}

export function createFaultGate(registry: FaultRegistry, log: (line: string) => void): FaultGate {
  const hung = new Set<ServerResponse>();
  const sleepers = new Set<{ timer: NodeJS.Timeout; wake: (ok: boolean) => void }>();
  let closed = false;

  const sleep = (ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      if (closed) {
        resolve(false);
        return;
      }
      const sleeper = {
        timer: setTimeout(() => {
          sleepers.delete(sleeper);
          resolve(true);
        }, ms),
        wake: resolve,
      };
      sleepers.add(sleeper);
    });

  return {
    get hanging() {
      return hung.size;
    },
    async apply(operation, wildcard, res) {
      const fault = registry.pick(operation, wildcard);
      if (!fault) return false;
      if (fault.latencyMs > 0 && !(await sleep(fault.latencyMs))) {
        res.destroy();
        return true;
      }
      if (closed) {
        res.destroy();
        return true;
      }
      if (fault.hang) {
        log(`fault ${fault.id}: holding a ${operation} request until the simulator closes`);
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return true;
      }
      if (fault.status !== undefined) {
        const headers: Record<string, string> =
          fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
        sendMessage(
          res,
          fault.status,
          `Injected fault ${fault.id}: HTTP ${fault.status} for ${operation} (set through /_sim/faults).`,
          headers,
        );
        return true;
      }
      return false;
    },
    close() {
      closed = true;
      for (const s of sleepers) {
        clearTimeout(s.timer);
        s.wake(false);
      }
      sleepers.clear();
      for (const res of hung) res.destroy();
      hung.clear();
    },
  };
}
