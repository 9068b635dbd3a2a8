import { beforeEach, describe, expect, it } from 'vitest';
import { JOB_TAG } from '../../src/commands/instances/handlers.js';
import { instancesOwnedBy } from '../../src/store/instance-owners.js';
import {
  CHANNEL,
  type HandlerHarness,
  OWNER,
  sentLongAgo,
  useHandlerHarness,
} from '../support/handler-harness.js';

// The instance handlers (src/commands/instances/handlers.ts) called as the worker calls them, against a
// cloud whose machines stay in creating, stopping or deleting until the test moves its clock: what the
// person reads, and how many machines the cloud holds, on first attempts, retries and takeovers.

const TYPE = 'h100-hgx-80gb.1x';
// Shape C: instances carry filesystems and tags, and filesystems can be listed by name.
const shapeC = useHandlerHarness('C');
let h: HandlerHarness;
beforeEach(() => {
  h = shapeC();
});

/** The machines of that name the cloud holds now. */
function machines(name: string) {
  return h.held().instances.filter((i) => i.name === name);
}

/** Every version of the job's channel message, oldest first. */
function history(job: { ts: string }): string[] {
  return (h.slack.message(CHANNEL, job.ts)?.history ?? []).map((v) => String(v.text));
}

async function machineIn(name: string, state: string): Promise<string> {
  const made = await h.cloud.createInstance({ name, type: TYPE });
  if (state === 'creating') return made.id;
  await h.settle();
  if (state === 'stopping' || state === 'stopped') await h.cloud.stopInstance({ id: made.id });
  if (state === 'stopped') await h.settle();
  if (state === 'deleting') await h.cloud.deleteInstance({ id: made.id });
  return made.id;
}

describe('create', () => {
  it('makes one machine, says it is being created while it is, and answers with its address once running', async () => {
    const job = await h.enqueue(`create slow-1 ${TYPE}`);
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for slow-1 to be running \(state: creating\)/);
    expect(machines('slow-1')).toHaveLength(1);
    // Owned from the moment the cloud returned it, with its type and state: the Home tab lists it now.
    expect(await instancesOwnedBy(h.store, OWNER)).toContainEqual(
      expect.objectContaining({ name: 'slow-1', type: TYPE, state: 'creating', channelId: CHANNEL }),
    );
    await h.settle();
    const { done, text } = await answer;
    const ip = String(machines('slow-1')[0]!.ip);
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(done).toBe(true);
    expect(text).toBe(`slow-1 is running at ${ip}.`);
    expect(history(job)).toContainEqual(expect.stringContaining(`Creating slow-1 (${TYPE})…`));
    const id = String(machines('slow-1')[0]!.id);
    // A Workflow Builder step gets the machine as data.
    expect(h.lastData()?.outputs).toEqual({ instance: 'slow-1', instanceId: id, state: 'running', ip });
    // Whoever asked owns it: the idle watcher and their Home tab find it there.
    expect(await instancesOwnedBy(h.store, OWNER)).toContainEqual({
      id,
      name: 'slow-1',
      channelId: CHANNEL,
      projectId: h.sim.info.projectId,
      type: TYPE,
      state: 'running',
      recordedAt: expect.any(Number),
    });
    expect(await h.store.job(job.id)).toMatchObject({ state: 'waiting' });
  });

  it('passes the image, the filesystems by name and the sealed user data on to the cloud', async () => {
    const fs = await h.cloud.createFilesystem({ name: 'data-fs', size: '100Gi' });
    // Another machine of another name is no reason to refuse the name.
    await machineIn('unrelated-1', 'creating');
    const userData = Buffer.from('#cloud-config\nruncmd: [echo hi]\n').toString('base64');
    const sealed = { userData: await h.sealer.seal(userData) };
    const job = await h.enqueue(
      `create with-all ${TYPE} --image ubuntu24.04 --fs data-fs --tag team=vision`,
      {
        sealed,
      },
    );
    const { answer } = await h.begin(job);
    await h.shows(job, /state: creating/);
    await h.settle();
    expect((await answer).done).toBe(true);
    const [made] = machines('with-all');
    expect(made).toMatchObject({
      image: 'ubuntu24.04',
      filesystems: [fs.id],
      userData,
      tags: { team: 'vision', [JOB_TAG]: job.id },
    });
    // The secret never went into the job's data.
    expect(JSON.stringify((await h.queue.getJob(job.id))?.data)).not.toContain(userData);
  });

  it('resumes a first attempt that died after the cloud made the machine: one machine, no second create', async () => {
    const job = await h.enqueue(`create resumed-1 ${TYPE}`);
    // The worker dies while the machine is still being created (its lock long gone by the cloud's clock).
    await h.diesAt(job, /state: creating/);
    const { answer: second } = await h.begin(job);
    await h.shows(job, /Waiting for resumed-1 to be running/);
    await h.settle();
    const { done, text } = await second;
    expect(done, text).toBe(true);
    expect(text).toMatch(/^resumed-1 is running at /);
    expect(h.sim.control.createCount('createInstance', 'resumed-1')).toBe(1);
  });

  it('recognises the machine a lost answer made, while it is still being created, and sends no second create', async () => {
    // The cloud holds the create past the client's timeout, then makes the machine anyway.
    h.loseNextAnswer('createInstance');
    const job = await h.enqueue(`create lost-1 ${TYPE}`);
    const first = await h.run(job);
    expect(first.done).toBe(false);
    expect(first.permanent).toBe(false);
    const { answer: retry } = await h.begin(job);
    await h.shows(job, /Waiting for lost-1 to be running \(state: creating\)/, 20_000);
    expect(machines('lost-1')).toHaveLength(1);
    // It told the person it was checking, and found the first machine rather than sending another.
    expect(history(job)).toContainEqual(
      expect.stringContaining(
        'An earlier attempt sent this request and lost the answer; checking whether it went through',
      ),
    );
    await h.settle();
    const { done, text } = await retry;
    expect(done, text).toBe(true);
    expect(h.sim.control.createCount('createInstance', 'lost-1')).toBe(1);
  });

  it('adopts at once the tagged machine a worker made just before it died, without waiting', async () => {
    const job = await h.enqueue(`create fresh-1 ${TYPE}`, { progress: { sent: true, sentAt: Date.now() } });
    await h.cloud.createInstance({ name: 'fresh-1', type: TYPE, tags: { [JOB_TAG]: job.id } });
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for fresh-1 to be running \(state: creating\)/);
    await h.settle();
    expect((await answer).done).toBe(true);
    expect(history(job).join('\n')).not.toMatch(/An earlier attempt sent this request/);
    expect(machines('fresh-1')).toHaveLength(1);
  });

  it('ends with what the cloud said when it cannot read the machine for another reason than its absence', async () => {
    const job = await h.enqueue(`create unread-1 ${TYPE}`);
    const { answer } = await h.begin(job);
    await h.shows(job, /state: creating/);
    h.sim.control.addFault({ operation: 'getInstance', status: 403 });
    const { done, permanent, text } = await answer;
    h.sim.control.clearFaults();
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).not.toMatch(/disappeared/);
    expect(machines('unread-1')).toHaveLength(1);
  });

  it('adopts the one untagged machine of its name that a dead worker made after recording the send', async () => {
    // A cloud that does not echo tags: the machine carries none of the job's.
    await h.cloud.createInstance({ name: 'taken-1', type: TYPE });
    const job = await h.enqueue(`create taken-1 ${TYPE}`, sentLongAgo());
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for taken-1 to be running \(state: creating\)/);
    await h.settle();
    const { done, text } = await answer;
    expect(done, text).toBe(true);
    expect(machines('taken-1')).toHaveLength(1);
  });

  it.each([
    ['someone else’s machine, and this job sent nothing', undefined, 1, 'creating'],
    ['a machine tagged by another job, though this job sent its create', 'other-job', 1, 'creating'],
    ['two untagged machines of that name, though this job sent its create', undefined, 2, 'creating'],
  ] as const)('refuses a name taken by %s', async (why, otherJob, count, state) => {
    for (let n = 0; n < count; n++) {
      await h.cloud.createInstance({
        name: 'busy-1',
        type: TYPE,
        ...(otherJob ? { tags: { [JOB_TAG]: otherJob } } : {}),
      });
    }
    const sent = why.includes('sent its create') ? sentLongAgo() : {};
    const job = await h.enqueue(`create busy-1 ${TYPE}`, sent);
    const { done, text, permanent } = await h.run(job);
    expect(done).toBe(false);
    expect(permanent).toBe(true);
    expect(text).toBe(
      `An instance named busy-1 already exists in this project (${state}); pick another name.`,
    );
    expect(machines('busy-1')).toHaveLength(count);
  });

  it('says so when the machine it made vanished before the retry', async () => {
    const job = await h.enqueue(`create gone-1 ${TYPE}`);
    await h.diesAt(job, /state: creating/);
    // Someone deletes it before another worker takes the job over.
    const [made] = machines('gone-1');
    await h.settle();
    await h.cloud.deleteInstance({ id: String(made!.id) });
    await h.settle();
    const { done, text, permanent } = await h.run(job);
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe('gone-1 was created but is gone now; it may have been deleted.');
    expect(h.sim.control.createCount('createInstance', 'gone-1')).toBe(1);
    expect(machines('gone-1')).toHaveLength(0);
  });

  it('says so when the machine vanishes while it waits for it to run', async () => {
    const job = await h.enqueue(`create vanish-1 ${TYPE}`);
    const { answer } = await h.begin(job);
    await h.shows(job, /state: creating/);
    const [made] = machines('vanish-1');
    await h.cloud.deleteInstance({ id: String(made!.id) });
    await h.shows(job, /state: deleting/);
    await h.settle();
    const { done, text, permanent } = await answer;
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe('vanish-1 disappeared while waiting for it to be running.');
    expect(h.sim.control.createCount('createInstance', 'vanish-1')).toBe(1);
  });
});

describe('ls and show', () => {
  it('lists the machines by name with their count, and shows one by name', async () => {
    await machineIn('b-1', 'running');
    await machineIn('a-1', 'creating');
    const listed = await h.run(await h.enqueue('ls'));
    expect(listed.text).toMatch(/^Instances \(2\)/);
    const blocks = h.lastData()!.blocks;
    expect(blocks.indexOf('*a-1*')).toBeGreaterThan(-1);
    expect(blocks.indexOf('*a-1*')).toBeLessThan(blocks.indexOf('*b-1*'));
    expect(await h.run(await h.enqueue('show b-1'))).toEqual({
      done: true,
      permanent: false,
      text: 'b-1: running',
    });
  });
});

describe('start and stop', () => {
  it.each([
    ['start', 'creating', 'only a stopped instance can be started'],
    ['start', 'stopping', 'only a stopped instance can be started'],
    ['start', 'deleting', 'only a stopped instance can be started'],
    ['stop', 'creating', 'only a running instance can be stopped'],
    ['stop', 'stopped', null],
    ['stop', 'deleting', 'only a running instance can be stopped'],
  ] as const)(
    '%s of a machine that is %s gets a clear answer and changes nothing',
    async (action, state, refusal) => {
      const name = `${action}-${state}`;
      await machineIn(name, state);
      const job = await h.enqueue(`${action} ${name}`);
      const { done, text, permanent } = await h.run(job);
      if (refusal === null) {
        expect(done).toBe(true);
        expect(text).toBe(`${name} is ${state}, nothing to do.`);
      } else {
        expect({ done, permanent }).toEqual({ done: false, permanent: true });
        expect(text).toBe(`${name} is ${state}; ${refusal}.`);
      }
      expect(h.shown(job)).not.toMatch(/Asking the cloud/);
      expect(machines(name)).toMatchObject([{ state }]);
    },
  );

  it('finds the machine by id as well as by name, and names what exists when neither matches', async () => {
    const id = await machineIn('by-id', 'stopped');
    const job = await h.enqueue(`start ${id}`);
    const { answer } = await h.begin(job);
    await h.shows(job, /state: starting/);
    await h.settle();
    expect((await answer).text).toMatch(/^by-id is running at /);
    const unknownId = '0b7e1a52-6d1c-4c8e-9f0a-3c2b1a0d9e8f';
    expect(await h.run(await h.enqueue(`stop ${unknownId}`))).toEqual({
      done: false,
      permanent: true,
      text: `No instance with id ${unknownId} in this project: check the id with /gpu ls.`,
    });
    expect(await h.run(await h.enqueue('stop nosuch'))).toEqual({
      done: false,
      permanent: true,
      text: 'No instance "nosuch" in this project. This project has: by-id. Check the name with /gpu ls.',
    });
    expect(machines('by-id')).toMatchObject([{ state: 'running' }]);
  });

  it('start of a running machine says where it is and that there is nothing to do', async () => {
    await machineIn('run-1', 'running');
    const ip = String(machines('run-1')[0]!.ip);
    const { done, text } = await h.run(await h.enqueue('start run-1'));
    expect(done).toBe(true);
    expect(text).toBe(`run-1 is running at ${ip}, nothing to do.`);
  });

  it.each([
    ['stop', 'running', 'stopping', 'stopped'],
    ['start', 'stopped', 'starting', 'running'],
  ] as const)(
    '%s of a %s machine asks the cloud, waits while it is %s, and answers once %s',
    async (action, from, during, to) => {
      const name = `${action}-ok`;
      await machineIn(name, from);
      const job = await h.enqueue(`${action} ${name}`);
      const { answer } = await h.begin(job);
      await h.shows(job, new RegExp(`Waiting for ${name} to be ${to} \\(state: ${during}\\)`));
      expect(history(job)).toContainEqual(expect.stringContaining(`Asking the cloud to ${action} ${name}…`));
      await h.settle();
      const { done, text } = await answer;
      expect(done).toBe(true);
      const [machine] = machines(name);
      const ip = String(machine!.ip);
      expect(text).toBe(to === 'running' ? `${name} is running at ${ip}.` : `${name} is stopped.`);
      // A stopped machine's address is not where to connect: it is left out of the data too.
      expect(h.lastData()?.outputs).toEqual({
        instance: name,
        instanceId: machine!.id,
        state: to,
        ...(to === 'running' ? { ip } : {}),
      });
    },
  );

  it('a retried start whose first attempt got through waits for the machine instead of refusing it', async () => {
    const id = await machineIn('restarted-1', 'stopped');
    await h.cloud.startInstance({ id });
    const job = await h.enqueue('start restarted-1');
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for restarted-1 to be running \(state: starting\)/);
    await h.settle();
    expect((await answer).text).toMatch(/^restarted-1 is running at /);
    expect(h.shown(job)).not.toMatch(/Asking the cloud/);
  });

  it('a retried stop whose first attempt got through waits for the machine instead of stopping it again', async () => {
    await machineIn('retried-1', 'stopping');
    const job = await h.enqueue('stop retried-1');
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for retried-1 to be stopped \(state: stopping\)/);
    await h.settle();
    const { done, text } = await answer;
    expect(done).toBe(true);
    expect(text).toBe('retried-1 is stopped.');
    expect(h.shown(job)).not.toMatch(/Asking the cloud/);
  });

  it('a stop that crosses another one (the cloud answers 409) waits for the machine to be stopped', async () => {
    const id = await machineIn('crossed-1', 'running');
    const job = await h.enqueue('stop crossed-1');
    const { answer } = await h.begin(job);
    // The handler's stop is held at the cloud's door while another stop gets through first.
    await h.crossedBy('stopInstance', () => h.cloud.stopInstance({ id }));
    await h.shows(job, /Waiting for crossed-1 to be stopped \(state: stopping\)/);
    await h.settle();
    const { done, text } = await answer;
    expect(done, text).toBe(true);
    expect(text).toBe('crossed-1 is stopped.');
  });

  it('a stop the cloud refuses for another reason fails with what the cloud said', async () => {
    await machineIn('refused-1', 'running');
    h.sim.control.addFault({ operation: 'stopInstance', status: 403, count: 1 });
    const { done, permanent } = await h.run(await h.enqueue('stop refused-1'));
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(machines('refused-1')).toMatchObject([{ state: 'running' }]);
  });
});

describe('rm', () => {
  it('a retried delete whose first attempt got through waits for the machine to go without deleting again', async () => {
    await machineIn('rm-1', 'deleting');
    const job = await h.enqueue('rm rm-1');
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for rm-1 to be deleted \(state: deleting\)/);
    expect(h.shown(job)).not.toMatch(/Deleting rm-1…/);
    await h.settle();
    const { done, text } = await answer;
    expect(done).toBe(true);
    expect(text).toBe('rm-1 is deleted.');
    expect(machines('rm-1')).toHaveLength(0);
  });
});
