import type { Operation } from '../../cloud/routes.js';
import {
  checkBase64,
  checkImageRef,
  checkSize,
  DEFAULT_IMAGE,
  IMAGE_PREFIX,
  UUID,
} from '../../cloud/rules.js';
import {
  asFields,
  check,
  invalid,
  optionalBoolean,
  optionalString,
  optionalStringArray,
  requiredString,
} from '../read-fields.js';
import { filesystemView, instanceView, projectView } from '../resource-views.js';
import { EMPTY, type Handler, json, param, projectOf, readTags } from './kit.js';

// Projects, instances, filesystems and capacity.

export const instanceRoutes = {
  createProject: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    return json(projectView(call.state.createProject(name, readTags(o))));
  },
  listProjects: (call) => json(call.state.listProjects().map(projectView)),
  getProject: (call) => json(projectView(call.state.getProject(param(call, 'id')))),
  deleteProject: (call) => {
    call.state.deleteProject(param(call, 'id'));
    return EMPTY;
  },
  createInstance: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const type = requiredString(o, 'type', 'an instance type such as h100-hgx-80gb.8x');
    const image =
      optionalString(o, 'image', 'an image reference such as image://ubuntu22.04') ?? DEFAULT_IMAGE;
    check('image', image, checkImageRef);
    const userData = optionalString(o, 'userData', 'base64 text') ?? null;
    if (userData !== null) check('userData', userData, checkBase64);
    let filesystems: string[] = [];
    if (call.shape !== 'A') {
      filesystems = optionalStringArray(o, 'filesystems', 'filesystem UUIDs') ?? [];
      filesystems.forEach((id, i) => {
        if (!UUID.test(id))
          throw invalid(`filesystems[${i}]`, `must be a filesystem UUID; got "${id.slice(0, 40)}"`);
      });
    }
    const inst = call.state.createInstance(projectOf(call), {
      name,
      type,
      image: image.slice(IMAGE_PREFIX.length),
      preemptible: optionalBoolean(o, 'preemptible') ?? false,
      ephemeral: optionalBoolean(o, 'ephemeral') ?? false,
      userData,
      filesystems,
      tags: readTags(o),
    });
    return json(instanceView(inst, call.shape));
  },
  listInstances: (call) => {
    const out: unknown[] = [];
    for (const inst of projectOf(call).instances.values()) out.push(instanceView(inst, call.shape));
    return json(out);
  },
  getInstance: (call) =>
    json(instanceView(call.state.getInstance(projectOf(call), param(call, 'id')), call.shape)),
  deleteInstance: (call) => {
    call.state.deleteInstance(projectOf(call), param(call, 'id'));
    return EMPTY;
  },
  // B answers 202 and C 200; both get the instance in its new state (B's document shows no body, so
  // clients ignore it there).,
  startInstance: (call) =>
    json(instanceView(call.state.startInstance(projectOf(call), param(call, 'id')), call.shape)),
  stopInstance: (call) =>
    json(instanceView(call.state.stopInstance(projectOf(call), param(call, 'id')), call.shape)),
  createFilesystem: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const size = requiredString(o, 'size', 'a size with a unit such as 512Gi');
    check('size', size, checkSize);
    return json(filesystemView(call.state.createFilesystem(projectOf(call), name, size)));
  },
  listFilesystems: (call) => json([...projectOf(call).filesystems.values()].map(filesystemView)),
  getFilesystem: (call) => json(filesystemView(call.state.getFilesystem(projectOf(call), param(call, 'id')))),
  deleteFilesystem: (call) => {
    call.state.deleteFilesystem(projectOf(call), param(call, 'id'));
    return EMPTY;
  },
  listCapacity: (call) => json(call.state.remainingCapacity()),
} satisfies Partial<Record<Operation, Handler>>;
