import { UUID } from '../../cloud/rules.js';
import type { Shape } from '../../cloud/shape.js';
import {
  SIM_CONFIGURATIONS,
  SIM_INSTANCE_TYPES,
  type SimConfiguration,
  type SimInstanceType,
} from '../catalog.js';
import type { SeededRandom } from '../seeded-random.js';
import type { SimClock } from '../sim-clock.js';
import { SimError, SimErrorKind } from '../sim-error.js';
import {
  bump,
  type CreateCountsReport,
  DEFAULT_PROJECT_NAME,
  KNOWN_TYPES,
  OTHER_PROJECT_NAME,
  plainCounts,
  type SimPool,
  type SimProject,
  type SimStateOptions,
} from './types.js';

// The simulated cloud's core state: projects, capacity, addresses and the count of create requests.
// The resources build on it (instances.ts, clusters.ts); src/sim/sim-state.ts is the whole.

export abstract class SimCore {
  readonly shape: Shape;
  readonly defaultProjectId: string;
  readonly otherProjectId: string | undefined;
  protected readonly random: SeededRandom;
  protected readonly clock: SimClock;
  protected readonly transitionMs: number;
  protected readonly projects = new Map<string, SimProject>();
  protected readonly capacity = new Map<string, number>();
  /** The price list's regions per gpu_type, where a test changed them (the platform API lists these). */
  private readonly regions = new Map<string, readonly string[]>();
  readonly sshKeys = new Map<string, string>();
  protected readonly creates = new Map<string, Map<string, number>>();
  protected readonly attempts = new Map<string, Map<string, number>>();
  protected privateIpSeq: number;
  protected publicIpSeq: number;

  constructor(options: SimStateOptions) {
    this.shape = options.shape;
    this.random = options.random;
    this.clock = options.clock;
    this.transitionMs = options.transitionMs;
    this.defaultProjectId = this.random.uuid();
    // Shape C lists no 403, so it has no project the caller may not use.
    this.otherProjectId = this.shape === 'C' ? undefined : this.random.uuid();
    this.privateIpSeq = 2 + Math.floor(this.random.next() * 1000);
    this.publicIpSeq = 2 + Math.floor(this.random.next() * 1000);
    this.reset();
  }

  /** Back to the start state: same project ids, full capacity, no keys, counts or transitions. */
  reset(): void {
    this.clock.clear();
    this.projects.clear();
    this.capacity.clear();
    this.regions.clear();
    this.sshKeys.clear();
    this.creates.clear();
    this.attempts.clear();
    for (const t of SIM_INSTANCE_TYPES) this.capacity.set(t.name, t.capacity);
    const main = this.addProject(this.defaultProjectId, DEFAULT_PROJECT_NAME, {}, true);
    if (this.otherProjectId) this.addProject(this.otherProjectId, OTHER_PROJECT_NAME, {}, false);
    // Shapes A and C cannot create Slurm clusters, so one exists from the start to list and add users to.
    if (this.shape !== 'B') this.seedProject(main);
  }

  protected addProject(id: string, name: string, tags: Record<string, string>, member: boolean): SimProject {
    const project: SimProject = {
      id,
      name,
      state: 'active',
      tags,
      member,
      instances: new Map(),
      filesystems: new Map(),
      k8s: new Map(),
      slurm: new Map(),
    };
    this.projects.set(id, project);
    return project;
  }

  // --- addresses ------------------------------------------------------------------------------------

  protected nextPrivateIp(): string {
    const n = this.privateIpSeq++;
    return `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }

  protected nextPublicIp(): string {
    // 198.18.0.0/15 is reserved for benchmarking: plausible, never routable to a real host.
    const n = this.publicIpSeq++;
    return `198.${18 + ((n >>> 16) & 1)}.${(n >>> 8) & 255}.${n & 255}`;
  }

  // --- projects ---------------------------------------------------------------------------------------

  /** The project an X-PROJECT-ID header names, or the reason it cannot be used. */
  resolveProject(header: string | undefined): SimProject {
    if (header === undefined || header.trim() === '') {
      throw new SimError(
        SimErrorKind.ProjectHeader,
        'X-PROJECT-ID header is required: the UUID of a project.',
      );
    }
    const id = header.trim();
    if (!UUID.test(id)) {
      throw new SimError(
        SimErrorKind.ProjectHeader,
        `X-PROJECT-ID must be a UUID; got "${id.slice(0, 40)}".`,
      );
    }
    const project = this.projects.get(id.toLowerCase());
    if (!project) throw new SimError(SimErrorKind.UnknownProject, `Project ${id} was not found.`);
    if (!project.member) {
      throw new SimError(
        SimErrorKind.Forbidden,
        `You are not a member of project ${id}; use a project of your own.`,
      );
    }
    return project;
  }

  createProject(name: string, tags: Record<string, string>): SimProject {
    return this.addProject(this.random.uuid(), name, tags, true);
  }

  listProjects(): SimProject[] {
    return [...this.projects.values()].filter((p) => p.member);
  }

  getProject(id: string): SimProject {
    const project = this.projects.get(id.toLowerCase());
    if (!project?.member) throw new SimError(SimErrorKind.NotFound, `Project ${id} was not found.`);
    return project;
  }

  deleteProject(id: string): void {
    const project = this.getProject(id);
    for (const inst of project.instances.values()) this.release(inst.type.name, 1);
    for (const c of project.k8s.values()) this.releasePools(c.pools.values());
    for (const c of project.slurm.values()) this.releasePools(c.pools.values());
    this.projects.delete(project.id);
  }

  allProjects(): IterableIterator<SimProject> {
    return this.projects.values();
  }

  // --- capacity ----------------------------------------------------------------------------------------

  instanceType(name: string, field = 'type'): SimInstanceType {
    const type = SIM_INSTANCE_TYPES.find((t) => t.name === name);
    if (!type) {
      throw new SimError(
        SimErrorKind.Invalid,
        `${field}: "${name.slice(0, 60)}" is not an instance type; choose one of ${KNOWN_TYPES}.`,
        field,
      );
    }
    return type;
  }

  protected take(type: SimInstanceType, count: number, field = 'type'): void {
    const left = this.capacity.get(type.name) ?? 0;
    if (left < count) {
      throw new SimError(
        SimErrorKind.Invalid,
        `${field}: instance type ${type.name} is out of capacity (${left} left, ${count} asked); choose another type or try again later.`,
        field,
      );
    }
    this.capacity.set(type.name, left - count);
  }

  protected release(typeName: string, count: number): void {
    this.capacity.set(typeName, (this.capacity.get(typeName) ?? 0) + count);
  }

  protected releasePools(pools: Iterable<SimPool>): void {
    for (const p of pools) if (p.holdsCapacity) this.release(p.type.name, p.count);
  }

  remainingCapacity(): Array<{ name: string; capacity: number }> {
    return SIM_INSTANCE_TYPES.map((t) => ({ name: t.name, capacity: this.capacity.get(t.name) ?? 0 }));
  }

  setCapacity(typeName: string, capacity: number): void {
    const type = this.instanceType(typeName);
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new SimError(SimErrorKind.Invalid, 'capacity: must be a whole number of at least 0.', 'capacity');
    }
    this.capacity.set(type.name, capacity);
  }

  /** The platform API's configurations now: regions as set by setRegions, else as sold. */
  configurations(): SimConfiguration[] {
    return SIM_CONFIGURATIONS.map((c) => ({ ...c, regions: this.regions.get(c.gpu_type) ?? c.regions }));
  }

  /** Where a gpu_type is offered; no regions means the price list offers it nowhere now. */
  setRegions(gpuType: string, regions: readonly string[]): void {
    if (!SIM_CONFIGURATIONS.some((c) => c.gpu_type === gpuType)) {
      throw new SimError(
        SimErrorKind.Invalid,
        `gpu_type: "${gpuType.slice(0, 60)}" is not sold here.`,
        'gpu_type',
      );
    }
    this.regions.set(gpuType, [...regions]);
  }

  // --- create counts -----------------------------------------------------------------------------------

  /** Every create request received, before auth and faults (the `attempts` of the report). */
  countCreateAttempt(operation: string, name: string): void {
    bump(this.attempts, operation, name);
  }

  /** A create request that reached its handler, whether it then succeeded or not. */
  countCreate(operation: string, name: string): void {
    bump(this.creates, operation, name);
  }

  /** How many create requests for `name` reached the handler of `operation`. */
  createCount(operation: string, name: string): number {
    return this.creates.get(operation)?.get(name) ?? 0;
  }

  /** Creates that reached the handler, plus `attempts` including those rejected by auth or faults. */
  createCounts(): CreateCountsReport {
    return { ...plainCounts(this.creates), attempts: plainCounts(this.attempts) };
  }

  /** What a new project holds besides its empty maps (a Slurm cluster, where the shape has them). */
  protected abstract seedProject(project: SimProject): void;
}
