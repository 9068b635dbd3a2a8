import { SimError, SimErrorKind } from '../sim-error.js';
import { SimCore } from './core.js';
import {
  type CreateInstanceInput,
  found,
  type GpuLoad,
  type RunningInstanceView,
  type SimFilesystem,
  type SimInstance,
  type SimProject,
} from './types.js';

// Instances on the clock (creating → running, stopping → stopped, deleting → gone) and filesystems.

export abstract class SimInstances extends SimCore {
  // --- instances ---------------------------------------------------------------------------------------

  createInstance(project: SimProject, input: CreateInstanceInput): SimInstance {
    const type = this.instanceType(input.type);
    input.filesystems.forEach((fsId, i) => {
      if (!project.filesystems.has(fsId.toLowerCase())) {
        throw new SimError(
          SimErrorKind.BadReference,
          `filesystems[${i}]: no filesystem ${fsId.slice(0, 40)} in project ${project.id}; create it first or remove it from the request.`,
          'filesystems',
        );
      }
    });
    this.take(type, 1);
    const inst: SimInstance = {
      id: this.random.uuid(),
      projectId: project.id,
      name: input.name,
      type,
      state: 'creating',
      ip: null,
      image: input.image,
      preemptible: input.preemptible,
      ephemeral: input.ephemeral,
      userData: input.userData,
      filesystems: input.filesystems.map((f) => f.toLowerCase()),
      tags: input.tags,
      createdAt: this.clock.now(),
      startedAt: null,
      load: 'auto',
      epoch: 0,
      via: input.via ?? 'infrastructure',
    };
    project.instances.set(inst.id, inst);
    this.moveTo(project, inst, 'running');
    return inst;
  }

  getInstance(project: SimProject, id: string): SimInstance {
    return found(project.instances, id, 'Instance', `project ${project.id}`);
  }

  startInstance(project: SimProject, id: string): SimInstance {
    const inst = this.getInstance(project, id);
    if (inst.state !== 'stopped') {
      throw new SimError(
        SimErrorKind.WrongState,
        `Instance ${inst.name} is ${inst.state}; only a stopped instance can be started.`,
      );
    }
    inst.state = 'starting';
    this.moveTo(project, inst, 'running');
    return inst;
  }

  stopInstance(project: SimProject, id: string): SimInstance {
    const inst = this.getInstance(project, id);
    if (inst.state !== 'running') {
      throw new SimError(
        SimErrorKind.WrongState,
        `Instance ${inst.name} is ${inst.state}; only a running instance can be stopped.`,
      );
    }
    inst.state = 'stopping';
    inst.startedAt = null;
    this.moveTo(project, inst, 'stopped');
    return inst;
  }

  deleteInstance(project: SimProject, id: string): void {
    const inst = this.getInstance(project, id);
    if (inst.state === 'deleting') {
      // Delete lists no 409; the instance is on its way out, so "not found" is the honest listed answer.
      throw new SimError(SimErrorKind.NotFound, `Instance ${inst.name} is already being deleted.`);
    }
    inst.state = 'deleting';
    inst.startedAt = null;
    this.moveTo(project, inst, 'gone');
  }

  /** Schedules the end of the current transition; a later state change supersedes it. */
  protected moveTo(project: SimProject, inst: SimInstance, to: 'running' | 'stopped' | 'gone'): void {
    const epoch = ++inst.epoch;
    this.clock.at(this.clock.now() + this.transitionMs, () => {
      if (inst.epoch !== epoch || project.instances.get(inst.id) !== inst) return;
      if (to === 'gone') {
        project.instances.delete(inst.id);
        this.release(inst.type.name, 1);
        return;
      }
      inst.epoch++;
      inst.state = to;
      if (to === 'running') {
        inst.ip ??= this.nextPrivateIp();
        inst.startedAt = this.clock.now();
      }
    });
  }

  setLoad(id: string, load: GpuLoad): SimInstance {
    for (const project of this.projects.values()) {
      const inst = project.instances.get(id.toLowerCase());
      if (inst) {
        inst.load = load;
        return inst;
      }
    }
    throw new SimError(SimErrorKind.NotFound, `Instance ${id.slice(0, 40)} was not found in any project.`);
  }

  runningInstances(): RunningInstanceView[] {
    const out: RunningInstanceView[] = [];
    for (const project of this.projects.values()) {
      for (const inst of project.instances.values()) {
        if (inst.state !== 'running' || inst.startedAt === null) continue;
        out.push({
          id: inst.id,
          name: inst.name,
          type: inst.type.name,
          projectId: project.id,
          gpuCount: inst.type.gpuCount,
          gpuModel: inst.type.gpuModel,
          gpuMemoryGiB: inst.type.gpuMemoryGiB,
          maxPowerWatts: inst.type.maxPowerWatts,
          startedAt: inst.startedAt,
          load: inst.load,
        });
      }
    }
    return out;
  }

  // --- filesystems -------------------------------------------------------------------------------------

  createFilesystem(project: SimProject, name: string, size: string): SimFilesystem {
    const fs: SimFilesystem = { id: this.random.uuid(), name, size };
    project.filesystems.set(fs.id, fs);
    return fs;
  }

  getFilesystem(project: SimProject, id: string): SimFilesystem {
    return found(project.filesystems, id, 'Filesystem', `project ${project.id}`);
  }

  deleteFilesystem(project: SimProject, id: string): void {
    project.filesystems.delete(this.getFilesystem(project, id).id);
  }
}
