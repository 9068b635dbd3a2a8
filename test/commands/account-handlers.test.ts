import { beforeEach, describe, expect, it } from 'vitest';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type HandlerHarness, OWNER, sentLongAgo, useHandlerHarness } from '../support/handler-harness.js';
import { until } from '../support/until.js';

// The filesystem and SSH key handlers (src/commands/filesystems/handlers.ts, src/commands/keys/handlers.ts)
// called as the worker calls them: creates whose answer was lost or whose worker died, names taken by
// someone else, the same key registered twice, retried deletes. What the person reads, and what the
// cloud and the account hold.

const shapeB = useHandlerHarness('B');
const shapeC = useHandlerHarness('C');
let h: HandlerHarness;

const filesystems = (name: string) => h.held().filesystems.filter((f) => f.name === name);

describe('fs create, shape C (filesystems can be listed)', () => {
  beforeEach(() => {
    h = shapeC();
  });

  it('recognises the filesystem a lost answer made, and sends no second create', async () => {
    h.loseNextAnswer('createFilesystem');
    const job = await h.enqueue('fs create lostfs 100Gi');
    const first = await h.run(job);
    expect({ done: first.done, permanent: first.permanent }).toEqual({ done: false, permanent: false });
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(text).toBe('Filesystem lostfs (100Gi) is ready; attach it with /gpu create … --fs lostfs.');
    expect(h.sim.control.createCount('createFilesystem', 'lostfs')).toBe(1);
    expect(filesystems('lostfs')).toHaveLength(1);
  });

  it('adopts the filesystem of its name once the job recorded that it sent the create', async () => {
    await h.cloud.createFilesystem({ name: 'deadfs', size: '100Gi' });
    const { done, text } = await h.run(await h.enqueue('fs create deadfs 100Gi', sentLongAgo()));
    expect(done, text).toBe(true);
    expect(filesystems('deadfs')).toHaveLength(1);
  });

  it('refuses a name someone else’s filesystem has, saying how to attach that one', async () => {
    await h.cloud.createFilesystem({ name: 'shared', size: '2Ti' });
    const answer = await h.run(await h.enqueue('fs create shared 100Gi'));
    expect(answer).toEqual({
      done: false,
      permanent: true,
      text: 'A filesystem named shared already exists in this project (2Ti); pick another name, or attach that one with --fs shared.',
    });
    expect(filesystems('shared')).toMatchObject([{ size: '2Ti' }]);
  });

  it('sends the create again when the cloud refused the first one with an error', async () => {
    h.sim.control.addFault({ operation: 'createFilesystem', status: 503, count: 1 });
    const job = await h.enqueue('fs create againfs 100Gi');
    const first = await h.run(job);
    expect({ done: first.done, permanent: first.permanent }).toEqual({ done: false, permanent: false });
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(filesystems('againfs')).toHaveLength(1);
  });

  it('says so when the filesystem it made is gone before the retry', async () => {
    const made = await h.cloud.createFilesystem({ name: 'gonefs', size: '100Gi' });
    await h.cloud.deleteFilesystem({ id: made.id });
    const job = await h.enqueue('fs create gonefs 100Gi', {
      progress: { sent: true, filesystemId: made.id },
    });
    expect(await h.run(job)).toEqual({
      done: false,
      permanent: true,
      text: 'Filesystem gonefs was created but is gone now; it may have been deleted.',
    });
    expect(filesystems('gonefs')).toHaveLength(0);
  });

  it('a retried delete whose first attempt got through ends with the filesystem deleted', async () => {
    const made = await h.cloud.createFilesystem({ name: 'rmfs', size: '100Gi' });
    await h.cloud.deleteFilesystem({ id: made.id });
    const progress = { filesystemId: made.id, name: 'rmfs', size: '100Gi' };
    expect(await h.run(await h.enqueue('fs rm rmfs', { progress }))).toEqual({
      done: true,
      permanent: false,
      text: 'Filesystem rmfs (100Gi) is deleted.',
    });
  });
});

describe('fs create, shape B (filesystems cannot be listed)', () => {
  beforeEach(() => {
    h = shapeB();
  });

  it('does not send a create whose answer was lost again: it asks the person to check', async () => {
    h.loseNextAnswer('createFilesystem');
    const job = await h.enqueue('fs create blindfs 100Gi');
    expect((await h.run(job)).done).toBe(false);
    expect(await h.run(job)).toEqual({
      done: false,
      permanent: true,
      text: 'The create of filesystem blindfs was sent but its answer was lost, and this cloud cannot list filesystems to check whether it was made; look in the cloud console before asking again.',
    });
    // The held create lands after the refusal: one filesystem, made by the first attempt alone.
    await until('the held create to land', () => filesystems('blindfs')[0]);
    expect(h.sim.control.createCount('createFilesystem', 'blindfs')).toBe(1);
  });
});

describe('SSH keys', () => {
  const keysNamed = async (name: string) => (await h.platform.listSshKeys()).filter((k) => k.name === name);

  beforeEach(async () => {
    h = shapeB();
    for (const k of await h.platform.listSshKeys()) await h.platform.deleteSshKey(k.name);
  });

  it('the same key registered twice by its owner: one key on the account, the second told it is already theirs', async () => {
    const key = ed25519PublicKey();
    const first = await h.run(await h.enqueue(`keys add laptop ${key}`));
    expect(first).toMatchObject({
      done: true,
      text: expect.stringMatching(/^Added SSH key laptop \(.+\) to the account\.$/),
    });
    const again = await h.run(await h.enqueue(`keys add laptop ${key}`));
    expect(again).toMatchObject({
      done: true,
      text: expect.stringMatching(
        /^SSH key laptop \(.+\) is already on the account and yours; nothing to do\.$/,
      ),
    });
    expect(await keysNamed('laptop')).toHaveLength(1);
    expect(await h.store.keyOwner('laptop')).toMatchObject({ userId: OWNER, publicKey: key });
  });

  it('a key added outside gpuops with the same public key becomes the requester’s', async () => {
    const key = ed25519PublicKey();
    await h.platform.addSshKey({ name: 'desk', public_key: key });
    const answer = await h.run(await h.enqueue(`keys add desk ${key}`));
    expect(answer.text).toMatch(
      /^SSH key desk \(.+\) was already on the account with this public key; it is now recorded as yours\.$/,
    );
    expect(await keysNamed('desk')).toHaveLength(1);
  });

  it('refuses a name held by another public key, or by another person’s key', async () => {
    const theirs = ed25519PublicKey('bob@desk');
    await h.platform.addSshKey({ name: 'desk', public_key: theirs });
    const other = await h.run(await h.enqueue(`keys add desk ${ed25519PublicKey()}`));
    expect(other).toEqual({
      done: false,
      permanent: true,
      text: 'An SSH key named desk is already on the account with a different public key; pick another name, e.g. /gpu keys add desk-2 <public key>.',
    });
    await h.store.addKeyOwner({ name: 'desk', userId: 'U0BOB', publicKey: theirs, addedAt: Date.now() });
    const owned = await h.run(await h.enqueue(`keys add desk ${theirs}`));
    expect(owned.text).toBe(
      'The SSH key desk is already on the account, added by another Slack user; it stays theirs. Nothing to do unless you meant another key.',
    );
    expect(await keysNamed('desk')).toMatchObject([{ public_key: theirs }]);
    expect(await h.store.keyOwner('desk')).toMatchObject({ userId: 'U0BOB' });
  });

  it('recognises the key a lost answer added, and adds it once', async () => {
    const key = ed25519PublicKey();
    h.loseNextAnswer('createSshKey');
    const job = await h.enqueue(`keys add lost ${key}`);
    expect((await h.run(job)).done).toBe(false);
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(text).toMatch(/^Added SSH key lost /);
    expect(await keysNamed('lost')).toHaveLength(1);
  });

  it('a retried removal whose first attempt got through says it is removed; a first one says there is no such key', async () => {
    expect(await h.run(await h.enqueue('keys rm gone', { progress: { sent: true } }))).toEqual({
      done: true,
      permanent: false,
      text: 'Removed SSH key gone from the account.',
    });
    expect(await h.run(await h.enqueue('keys rm gone'))).toEqual({
      done: false,
      permanent: true,
      text: 'There is no SSH key named gone on the account; /gpu keys lists the keys there are.',
    });
  });
});

describe('project use, shape B (projects are given by id)', () => {
  beforeEach(() => {
    h = shapeB();
  });

  it('refuses an id the cloud does not know with what to check, naming no API call', async () => {
    const unknownId = '0b7e1a52-6d1c-4c8e-9f0a-3c2b1a0d9e8f';
    expect(await h.run(await h.enqueue(`project use ${unknownId}`))).toEqual({
      done: false,
      permanent: true,
      text: `No project with id ${unknownId} that gpuops may use: check the id in the cloud's console, or ask whoever runs gpuops to give its account access to that project.`,
    });
  });
});
