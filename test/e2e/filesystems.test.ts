import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Filesystem } from '../../src/cloud/index.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import {
  CHANNEL,
  channelRequest,
  expectCleanSlack,
  finalMessage,
  listenerAnswer,
  privateAnswer,
} from './answers.js';

// /gpu fs, /gpu fs create, /gpu fs rm. Shape C has all three, B can only create, A has none.

/** The filesystems the simulator holds in the stack's project. */
function simFilesystems(stack: BotStack): Filesystem[] {
  const project = stack.sim.control
    .state()
    .projects.find((p) => (p as { id: string }).id === stack.sim.info.projectId) as {
    filesystems: Filesystem[];
  };
  return project.filesystems;
}

describe.each(['B', 'C'] as const)('/gpu fs create, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a filesystem and shows its size and id in the channel', async () => {
    const ts = await channelRequest(stack, 'fs create datasets 512Gi');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain(
      'Filesystem datasets (512Gi) is ready; attach it with /gpu create … --fs datasets.',
    );
    const made = simFilesystems(stack).filter((f) => f.name === 'datasets');
    expect(made).toHaveLength(1);
    expect(JSON.stringify(message.blocks)).toContain(made[0]!.id);
    expect(message.history.map((v) => String(v.text).split(':')[0])).toEqual(
      expect.arrayContaining(['Queued', 'Working', 'Done']),
    );
    expectCleanSlack(stack);
  });

  it('retries a cloud fault and makes one filesystem, with one final answer', async () => {
    stack.sim.control.addFault({ operation: 'createFilesystem', status: 503, count: 1 });
    const ts = await channelRequest(stack, 'fs create scratch 1Ti');
    const message = await finalMessage(stack, ts, 'Done', CHANNEL, 20_000);
    expect(message.text).toContain('Filesystem scratch (1Ti) is ready');
    expect(simFilesystems(stack).filter((f) => f.name === 'scratch')).toHaveLength(1);
    expect(message.history.some((v) => String(v.text).includes('Retrying (attempt 2 of 6)'))).toBe(true);
    expect(message.history.filter((v) => /^(Done|Failed):/.test(String(v.text)))).toHaveLength(1);
  });

  it('shows one filesystem privately by its id, in every shape that can create one', async () => {
    const made = simFilesystems(stack).find((f) => f.name === 'datasets')!;
    const answer = await privateAnswer(stack, `fs show ${made.id}`);
    expect(answer.text).toBe('datasets: 512Gi');
    expect(answer.blocksJson).toContain(made.id);
    expectCleanSlack(stack);
  });

  if (shape === 'B') {
    it('asks for the id when shape B cannot look a filesystem name up', async () => {
      expect(await listenerAnswer(stack, 'fs show datasets')).toContain(
        '`/gpu fs show` does not work with this cloud: its API cannot list filesystems. Give the filesystem id instead of its name.',
      );
    });

    it('says listing and deleting filesystems are not available in shape B', async () => {
      expect(await listenerAnswer(stack, 'fs')).toContain('`/gpu fs` does not work with this cloud');
      expect(await listenerAnswer(stack, 'fs rm datasets')).toContain(
        '`/gpu fs rm` does not work with this cloud',
      );
      expect(simFilesystems(stack).some((f) => f.name === 'datasets')).toBe(true);
    });
    return;
  }

  it('refuses a name already taken in the project', async () => {
    const ts = await channelRequest(stack, 'fs create datasets 1Ti');
    expect((await finalMessage(stack, ts, 'Failed')).text).toContain(
      'A filesystem named datasets already exists in this project (512Gi); pick another name',
    );
    expect(simFilesystems(stack).filter((f) => f.name === 'datasets')).toHaveLength(1);
  });

  it('shows one filesystem privately by name, and names the ones there are for an unknown name', async () => {
    const answer = await privateAnswer(stack, 'fs show scratch');
    expect(answer.text).toBe('scratch: 1Ti');
    // A name that is not there is answered at once by the listener, with no job.
    expect(await listenerAnswer(stack, 'fs show nope')).toBe(
      'No filesystem "nope" in this project. This project has: datasets, scratch. Check the name with `/gpu fs`.',
    );
    expect(await listenerAnswer(stack, 'fs show scrach')).toContain('Did you mean `scratch`?');
    expectCleanSlack(stack);
  });

  it('lists filesystems privately', async () => {
    const answer = await privateAnswer(stack, 'fs');
    expect(answer.text).toBe('Filesystems (2): 2 items');
    expect(answer.blocksJson).toContain('*datasets* · 512Gi');
    expect(answer.blocksJson).toContain('*scratch* · 1Ti');
    expectCleanSlack(stack);
  });

  it('deletes a filesystem by name, and names the ones there are for an unknown name', async () => {
    const ts = await channelRequest(stack, 'fs rm scratch');
    expect((await finalMessage(stack, ts, 'Done')).text).toContain('Filesystem scratch (1Ti) is deleted.');
    expect(simFilesystems(stack).some((f) => f.name === 'scratch')).toBe(false);

    // To the requester alone: the channel sees no "Queued" and no "Failed" for a typo.
    const since = stack.slack.mark();
    expect(await listenerAnswer(stack, 'fs rm nope')).toContain(
      'No filesystem "nope" in this project. This project has: datasets.',
    );
    expect(stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= since)).toEqual([]);
    expectCleanSlack(stack);
  });
});

describe('/gpu fs in shape A', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'A' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('says filesystems are not available, and queues nothing', async () => {
    expect(await listenerAnswer(stack, 'fs')).toContain('`/gpu fs` does not work with this cloud');
    expect(await listenerAnswer(stack, 'fs create datasets 512Gi')).toContain(
      '`/gpu fs create` does not work with this cloud',
    );
    expect(await stack.requestsQueued()).toBe(0);
  });
});
