import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fault, FaultSpec } from './fault-registry.js';
import { BodyTooLarge, parseJsonBody, readBodyIf, sendJson, sendMessage } from './http-io.js';
import { asFields, invalid, requiredInteger, requiredString } from './read-fields.js';
import {
  filesystemView,
  instanceView,
  k8sClusterView,
  k8sPoolView,
  projectView,
  slurmClusterView,
  slurmPoolView,
  slurmUserView,
} from './resource-views.js';
import { SimError, SimErrorKind } from './sim-error.js';
import type { SimRuntime } from './sim-runtime.js';
import { type CreateCountsReport, GPU_LOADS, type GpuLoad } from './sim-state.js';

// The control side of the simulator, in process (SimControl) and over HTTP (/_sim/, no auth, loopback).

export interface SimStateDump {
  readonly shape: string;
  readonly clock: { readonly mode: string; readonly now: string; readonly nowMs: number };
  readonly capacity: ReadonlyArray<{ name: string; capacity: number }>;
  readonly sshKeys: ReadonlyArray<{ name: string; public_key: string }>;
  readonly faults: readonly Fault[];
  readonly projects: readonly unknown[];
}

export interface SimControl {
  /** Every project's resources as the API shows them, plus simulator-only fields (member, load, via). */
  state(): SimStateDump;
  /** Back to the start state: same projectId and credentials, full capacity, no faults or counts. */
  reset(): void;
  /** Create requests that reached a handler by operation and name, and `attempts` including faulted ones. */
  creates(): CreateCountsReport;
  createCount(operation: string, name: string): number;
  addFault(spec: FaultSpec): { id: string };
  clearFaults(): void;
  faults(): readonly Fault[];
  advance(ms: number): Promise<void>;
  setCapacity(type: string, capacity: number): void;
  /** The regions the price list gives a gpu_type; [] makes it offered nowhere. */
  setRegions(gpuType: string, regions: readonly string[]): void;
  setLoad(instanceId: string, load: GpuLoad): void;
}

export function createSimControl(rt: SimRuntime): SimControl {
  const { state, shape } = rt;
  return {
    state: () => ({
      shape,
      clock: { mode: rt.clock.mode, now: new Date(rt.clock.now()).toISOString(), nowMs: rt.clock.now() },
      capacity: state.remainingCapacity(),
      sshKeys: [...state.sshKeys].map(([name, public_key]) => ({ name, public_key })),
      faults: rt.faults.list(),
      projects: [...state.allProjects()].map((p) => ({
        ...projectView(p),
        member: p.member,
        instances: [...p.instances.values()].map((i) => ({
          ...instanceView(i, shape),
          load: i.load,
          via: i.via,
          createdAt: new Date(i.createdAt).toISOString(),
        })),
        filesystems: [...p.filesystems.values()].map(filesystemView),
        kubernetesClusters: [...p.k8s.values()].map((c) => ({
          ...k8sClusterView(c, shape),
          pools: [...c.pools.values()].map((pool) => k8sPoolView(pool, c, shape)),
        })),
        slurmClusters: [...p.slurm.values()].map((c) => ({
          ...slurmClusterView(c, shape),
          pools: [...c.pools.values()].map((pool) => slurmPoolView(pool, shape)),
          users: [...c.users.values()].map(slurmUserView),
        })),
      })),
    }),
    reset: () => {
      state.reset();
      rt.faults.clear();
      rt.log('state reset to the start state');
    },
    creates: () => state.createCounts(),
    createCount: (operation, name) => state.createCount(operation, name),
    addFault: (spec) => {
      const fault = rt.faults.add(spec);
      rt.log(`fault ${fault.id} added for ${fault.operation}`);
      return { id: fault.id };
    },
    clearFaults: () => rt.faults.clear(),
    faults: () => rt.faults.list(),
    advance: (ms) => rt.clock.advance(ms),
    setCapacity: (type, capacity) => state.setCapacity(type, capacity),
    setRegions: (gpuType, regions) => state.setRegions(gpuType, regions),
    setLoad: (id, load) => {
      if (!(GPU_LOADS as readonly string[]).includes(load)) {
        throw invalid('load', `must be one of ${GPU_LOADS.join(', ')}`);
      }
      state.setLoad(id, load);
    },
  };
}

export interface ControlApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createControlApi(control: SimControl, rt: SimRuntime): ControlApi {
  return {
    async handle(req, res, path) {
      const method = req.method ?? 'GET';
      let body: unknown;
      try {
        body = parseJsonBody(await readBodyIf(req, method !== 'GET' && method !== 'DELETE'));
      } catch (err) {
        if (err instanceof BodyTooLarge)
          return sendMessage(res, 413, `The request body is too large: ${err.message}.`);
        if (err instanceof SimError) return sendMessage(res, 400, err.message);
        res.destroy();
        return;
      }
      const route = `${method} ${path.replace(/\/+$/, '')}`;
      try {
        const load = /^PUT \/instances\/([^/]+)\/load$/.exec(route);
        if (load) {
          const o = asFields(body);
          const value = requiredString(o, 'load', 'idle, busy or auto');
          control.setLoad(decodeURIComponent(load[1]!), value as GpuLoad);
          return sendJson(res, 200, { id: decodeURIComponent(load[1]!), load: value });
        }
        switch (route) {
          case 'GET /state':
            return sendJson(res, 200, control.state());
          case 'POST /reset':
            control.reset();
            return sendJson(res, 200, { ok: true, projectId: rt.state.defaultProjectId });
          case 'GET /creates':
            return sendJson(res, 200, control.creates());
          case 'GET /faults':
            return sendJson(res, 200, control.faults());
          case 'POST /faults':
            return sendJson(res, 201, control.addFault((body ?? {}) as FaultSpec));
          case 'DELETE /faults':
            control.clearFaults();
            return sendJson(res, 200, { ok: true });
          case 'GET /clock':
            return sendJson(res, 200, { mode: rt.clock.mode, now: rt.clock.now() });
          case 'POST /clock': {
            const ms = requiredInteger(asFields(body), 'advanceMs', 0, 365 * 86_400_000);
            await control.advance(ms);
            return sendJson(res, 200, { mode: rt.clock.mode, now: rt.clock.now() });
          }
          case 'GET /capacity':
            return sendJson(res, 200, rt.state.remainingCapacity());
          case 'POST /capacity': {
            const o = asFields(body);
            const type = requiredString(o, 'type', 'an instance type name');
            const capacity = requiredInteger(o, 'capacity', 0, 1_000_000);
            control.setCapacity(type, capacity);
            return sendJson(res, 200, rt.state.remainingCapacity());
          }
          default:
            return sendMessage(
              res,
              404,
              `No control operation ${method} /_sim${path}; see docs/simulator.md (state, reset, creates, faults, clock, capacity, instances/{id}/load).`,
            );
        }
      } catch (err) {
        if (err instanceof SimError) {
          return sendMessage(res, err.kind === SimErrorKind.NotFound ? 404 : 400, err.message);
        }
        throw err;
      }
    },
  };
}
