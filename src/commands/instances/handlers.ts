import type { KnownBlock } from '@slack/types';
import { CloudConflictError, CloudNotFoundError, type Instance } from '../../cloud/index.js';
import { instanceDetailBlocks, instanceLine } from '../../render/instances.js';
import { recordInstanceOwner } from '../../store/instance-owners.js';
import { sendOnce, waitOutEarlierSend } from '../kit/earlier-send.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { inheritUnendedSend, sendAction, waitOutLateAction } from '../kit/late-action.js';
import { loginBlock } from '../kit/login-line.js';
import { pagedList } from '../kit/paged-list.js';
import { pickByRef, resolveRef } from '../kit/resolve.js';
import { sealedInput } from '../kit/sealed-input.js';
import { waitFor } from '../kit/wait-for.js';
import type { CommandOf } from '../registry.js';

/** The tag that marks an instance as made by one job: how a retried create finds its own machine. */
export const JOB_TAG = 'gpuops-job';
const FAILED_STATES = new Set(['error', 'out-of-stock']);

function resolveInstance(run: JobRun, ref: string): Promise<Instance> {
  const { cloud } = run.deps;
  return resolveRef(
    ref,
    'instance',
    () => cloud.listInstances(run.call),
    (id) => cloud.getInstance({ id }, run.call),
  );
}

async function readInstance(run: JobRun, id: string): Promise<Instance | undefined> {
  try {
    return await run.deps.cloud.getInstance({ id }, run.call);
  } catch (err) {
    if (err instanceof CloudNotFoundError) return undefined;
    throw err;
  }
}

function waitForState(run: JobRun, instance: Instance, target: string): Promise<Instance | undefined> {
  return waitFor(run, {
    read: () => readInstance(run, instance.id),
    done: (i) => i?.state === target,
    failed: (i) =>
      i === undefined
        ? `${instance.name} disappeared while waiting for it to be ${target}.`
        : FAILED_STATES.has(i.state)
          ? `${instance.name} went to state "${i.state}" instead of ${target}.`
          : null,
    describe: (i) => `state: ${i?.state ?? 'gone'}`,
    goal: `${instance.name} to be ${target}`,
  });
}

/** The machine's details, and how to log in to it when it runs with an address. */
async function detailWithLogin(run: JobRun, instance: Instance): Promise<KnownBlock[]> {
  const login = await loginBlock(run, instance);
  return [...instanceDetailBlocks(instance), ...(login ? [login] : [])];
}

async function settled(run: JobRun, instance: Instance, verb: string): Promise<Outcome> {
  // An address is worth saying only while the machine runs: it is where you connect.
  const ip = instance.ip && instance.state === 'running' ? ` at ${instance.ip}` : '';
  return {
    detail: `${instance.name} is ${instance.state}${ip}${verb}.`,
    result: await detailWithLogin(run, instance),
    outputs: {
      instance: instance.name,
      instanceId: instance.id,
      state: instance.state,
      ...(instance.ip && instance.state === 'running' ? { ip: instance.ip } : {}),
    },
  };
}

export async function listInstances(run: JobRun): Promise<Outcome> {
  const instances = await run.deps.cloud.listInstances(run.call);
  instances.sort((a, b) => a.name.localeCompare(b.name));
  const { text, blocks } = pagedList(
    run.data.command,
    `Instances (${instances.length})`,
    instances.map(instanceLine),
  );
  return { detail: text, result: blocks };
}

export async function showInstance(run: JobRun, command: CommandOf<'show'>): Promise<Outcome> {
  const instance = await resolveInstance(run, command.instance);
  return { detail: `${instance.name}: ${instance.state}`, result: await detailWithLogin(run, instance) };
}

async function transition(run: JobRun, ref: string, action: 'start' | 'stop'): Promise<Outcome> {
  const target = action === 'start' ? 'running' : 'stopped';
  const from = action === 'start' ? 'stopped' : 'running';
  // An earlier attempt that died with its call under way: that call may still land after this answer.
  await inheritUnendedSend(run, run.deps.cloud.timeoutMs);
  let instance = await resolveInstance(run, ref);
  if (instance.state === target) {
    // An earlier attempt of this job may have left a try the cloud still carries out.
    if (!(await waitOutLateAction(run, `${action} ${instance.name}`)))
      return settled(run, instance, ', nothing to do');
  }
  const inFlight = action === 'start' ? 'starting' : 'stopping';
  if (instance.state !== inFlight && instance.state !== target) {
    if (instance.state !== from) {
      throw new PermanentJobError(
        `${instance.name} is ${instance.state}; only a ${from} instance can be ${action === 'start' ? 'started' : 'stopped'}.`,
      );
    }
    await run.update('working', `Asking the cloud to ${action} ${instance.name}…`);
    try {
      const { cloud } = run.deps;
      const id = instance.id;
      await sendAction(run, cloud.timeoutMs, (onRetry) =>
        action === 'start'
          ? cloud.startInstance({ id }, { ...run.call, onRetry })
          : cloud.stopInstance({ id }, { ...run.call, onRetry }),
      );
    } catch (err) {
      // A retried job whose first attempt got through sees a conflict: the state tells what happened.
      if (!(err instanceof CloudConflictError)) throw err;
    }
  }
  instance = (await waitForState(run, instance, target)) ?? instance;
  // Not Done while a try the client gave up on may still land: it would undo the person's next request.
  if (await waitOutLateAction(run, `${action} ${instance.name}`)) {
    instance = (await waitForState(run, instance, target)) ?? instance;
  }
  return settled(run, instance, '');
}

export const startInstance = (run: JobRun, c: CommandOf<'start'>) => transition(run, c.instance, 'start');
export const stopInstance = (run: JobRun, c: CommandOf<'stop'>) => transition(run, c.instance, 'stop');

export async function deleteInstance(run: JobRun, command: CommandOf<'rm'>): Promise<Outcome> {
  const instance = await resolveInstance(run, command.instance);
  if (instance.state !== 'deleting') {
    await run.update('working', `Deleting ${instance.name}…`);
    try {
      await run.deps.cloud.deleteInstance({ id: instance.id }, run.call);
    } catch (err) {
      if (!(err instanceof CloudNotFoundError)) throw err;
    }
  }
  await waitFor(run, {
    read: () => readInstance(run, instance.id),
    done: (i) => i === undefined,
    describe: (i) => `state: ${i?.state ?? 'gone'}`,
    goal: `${instance.name} to be deleted`,
  });
  return { detail: `${instance.name} is deleted.` };
}

type CreateArgs = Extract<CommandOf<'create'>, { modal: false }>;

type CreateProgress = {
  instanceId: string;
  sent: boolean;
};

/**
 * Creates are idempotent by name: before sending, the job looks for the instance it may already have
 * made (its job tag says so), so a retry after a crash or a timeout never launches a second machine.
 */
export async function createInstance(run: JobRun, command: CreateArgs): Promise<Outcome> {
  const { cloud } = run.deps;
  const jobId = run.job.id!;
  let instanceId = run.progress<CreateProgress>().instanceId;
  if (!instanceId) {
    const named = async () => (await cloud.listInstances(run.call)).filter((i) => i.name === command.name);
    let existing = await named();
    // An earlier attempt's create may still be held by the cloud: wait it out before sending another.
    if (existing.length === 0 && (await waitOutEarlierSend(run, cloud.timeoutMs))) existing = await named();
    // Ours: tagged by this job; or, where the cloud does not echo tags, the only one of that name
    // after this job recorded that it sent the create.
    const sent = run.progress<CreateProgress>().sent === true;
    const ours =
      existing.find((i) => i.tags?.[JOB_TAG] === jobId) ??
      (sent && existing.length === 1 && existing[0]!.tags?.[JOB_TAG] === undefined ? existing[0] : undefined);
    if (ours) {
      instanceId = ours.id;
      await recordOwner(run, ours);
    } else if (existing.length > 0) {
      throw new PermanentJobError(
        `An instance named ${command.name} already exists in this project (${existing[0]!.state}); pick another name.`,
      );
    } else {
      const filesystems = await resolveFilesystems(run, command.filesystems);
      // From the create form only: sealed in Redis, never in the command or the job data.
      const userData = await sealedInput(run, 'userData');
      await run.update('working', `Creating ${command.name} (${command.type})…`);
      const created = await sendOnce(run, () =>
        cloud.createInstance(
          {
            name: command.name,
            type: command.type,
            ...(command.image ? { image: command.image } : {}),
            preemptible: command.preemptible,
            ephemeral: command.ephemeral,
            ...(filesystems.length > 0 ? { filesystems } : {}),
            ...(userData !== undefined ? { userData } : {}),
            tags: { ...command.tags, [JOB_TAG]: jobId },
          },
          run.call,
        ),
      );
      instanceId = created.id;
      await recordOwner(run, created);
    }
    await run.saveProgress({ instanceId });
  }
  const current = await readInstance(run, instanceId);
  if (!current)
    throw new PermanentJobError(`${command.name} was created but is gone now; it may have been deleted.`);
  const running = (await waitForState(run, current, 'running')) ?? current;
  await recordOwner(run, running);
  return settled(run, running, '');
}

/**
 * Whoever asked owns it from the moment the cloud returns it: their Home tab lists it while it starts
 * (docs/home.md), and the idle-GPU watcher tells them by direct message (docs/watch.md).
 */
function recordOwner(run: JobRun, instance: Instance): Promise<void> {
  return recordInstanceOwner(run.deps.store, instance.id, run.data.ctx.userId, {
    name: instance.name,
    channelId: run.data.ctx.channelId,
    projectId: run.data.ctx.projectId ?? run.deps.defaultProjectId,
    type: instance.type,
    state: instance.state,
    recordedAt: Date.now(),
  });
}

async function resolveFilesystems(run: JobRun, refs: readonly string[]): Promise<string[]> {
  if (refs.length === 0) return [];
  if (!run.deps.cloud.supports('listFilesystems')) return [...refs];
  const all = await run.deps.cloud.listFilesystems(run.call);
  return refs.map((ref) => pickByRef(all, ref, 'filesystem').id);
}

export const handlers = {
  ls: listInstances,
  show: showInstance,
  start: startInstance,
  stop: stopInstance,
  rm: deleteInstance,
  create: (run, command) => {
    if (command.modal) throw new Error('a create from the modal arrives with its fields filled in');
    return createInstance(run, command);
  },
} satisfies Handlers;
