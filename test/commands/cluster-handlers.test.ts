import { beforeEach, describe, expect, it } from 'vitest';
import { NO_KEYS_MESSAGE } from '../../src/commands/slurm/handlers.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type HandlerHarness, OWNER, sentLongAgo, useHandlerHarness } from '../support/handler-harness.js';

// The Kubernetes and Slurm handlers (src/commands/k8s/handlers.ts, src/commands/slurm/handlers.ts and
// their shared steps in src/commands/kit/cluster-ops.ts) called as the worker calls them: in shape A a
// Kubernetes cluster reports PROVISIONING until the test moves the cloud's clock, and Slurm clusters
// have users; shape B has node pools and Slurm creates, and answers 409 to a name already taken. What the
// person reads, and how many clusters, pools and users the cloud holds.

const POOL_TYPE = 'l40s-48gb.2x';
const shapeA = useHandlerHarness('A');
const shapeB = useHandlerHarness('B');
/** The harness of the suite running now. */
let h: HandlerHarness;

const k8sClusters = (name: string) => h.held().kubernetesClusters.filter((c) => c.name === name);
const slurmClusters = (name: string) => h.held().slurmClusters.filter((c) => c.name === name);

describe('k8s create, shape A', () => {
  beforeEach(() => {
    h = shapeA();
  });

  it('recognises the cluster a lost answer made while it is still provisioning, and sends no second create', async () => {
    h.loseNextAnswer('createK8sCluster');
    const job = await h.enqueue('k8s create lostk8s v1.31');
    const first = await h.run(job);
    expect({ done: first.done, permanent: first.permanent }).toEqual({ done: false, permanent: false });
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for lostk8s to be ready \(status: PROVISIONING\)/, 20_000);
    await h.settle();
    const { done, text } = await answer;
    expect(done, text).toBe(true);
    expect(text).toBe('Kubernetes cluster lostk8s is ready (v1.31).');
    expect(h.sim.control.createCount('createK8sCluster', 'lostk8s')).toBe(1);
    expect(k8sClusters('lostk8s')).toHaveLength(1);
  });

  it('resumes a first attempt that died while the cluster was provisioning', async () => {
    const job = await h.enqueue('k8s create deadk8s v1.31');
    await h.diesAt(job, /status: PROVISIONING/);
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for deadk8s to be ready/);
    await h.settle();
    expect((await answer).text).toBe('Kubernetes cluster deadk8s is ready (v1.31).');
    expect(h.sim.control.createCount('createK8sCluster', 'deadk8s')).toBe(1);
  });

  it('adopts the provisioning cluster of its name once the job recorded that it sent the create', async () => {
    await h.cloud.createK8sCluster({ name: 'takenk8s', version: 'v1.31' });
    const job = await h.enqueue('k8s create takenk8s v1.31', sentLongAgo());
    const { answer } = await h.begin(job);
    await h.shows(job, /Waiting for takenk8s to be ready \(status: PROVISIONING\)/);
    await h.settle();
    expect((await answer).text).toBe('Kubernetes cluster takenk8s is ready (v1.31).');
    expect(k8sClusters('takenk8s')).toHaveLength(1);
  });

  it('refuses a name someone else’s cluster has', async () => {
    await h.cloud.createK8sCluster({ name: 'theirs', version: 'v1.30' });
    const { done, permanent, text } = await h.run(await h.enqueue('k8s create theirs v1.31'));
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe(
      'A Kubernetes cluster named theirs already exists in this project (v1.30); pick another name, or see it with /gpu k8s show theirs.',
    );
    expect(k8sClusters('theirs')).toMatchObject([{ version: 'v1.30' }]);
  });

  it('says so when the cluster vanishes while it waits for it', async () => {
    const job = await h.enqueue('k8s create gonek8s v1.31');
    const { answer } = await h.begin(job);
    await h.shows(job, /status: PROVISIONING/);
    await h.cloud.deleteK8sCluster({ id: k8sClusters('gonek8s')[0]!.id });
    const { done, permanent, text } = await answer;
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe('gonek8s disappeared while waiting for it to be ready.');
    expect(h.sim.control.createCount('createK8sCluster', 'gonek8s')).toBe(1);
  });
});

describe('k8s name races and node pools, shape B', () => {
  beforeEach(() => {
    h = shapeB();
  });

  it('refuses the name when another create gets in first (the cloud answers 409)', async () => {
    const job = await h.enqueue('k8s create raced v1.31');
    const { answer } = await h.begin(job);
    await h.crossedBy('createK8sCluster', () =>
      h.cloud.createK8sCluster({ name: 'raced', version: 'v1.30' }),
    );
    const { done, permanent, text } = await answer;
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe(
      'A Kubernetes cluster named raced already exists in this project; pick another name, or see it with /gpu k8s show raced.',
    );
    expect(k8sClusters('raced')).toHaveLength(1);
  });

  it('a retried delete whose first attempt got through ends with the cluster deleted', async () => {
    const made = await h.cloud.createK8sCluster({ name: 'rmk8s', version: 'v1.31' });
    await h.cloud.deleteK8sCluster({ id: made.id });
    const job = await h.enqueue('k8s rm rmk8s', { progress: { id: made.id, name: 'rmk8s' } });
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(text).toBe('Kubernetes cluster rmk8s is deleted.');
  });

  it('adopts the pool of its name once the job recorded that it sent the add', async () => {
    const cluster = await h.cloud.createK8sCluster({ name: 'poolk8s', version: 'v1.31' });
    await h.cloud.createK8sNodePool({
      clusterId: cluster.id,
      clusterName: 'poolk8s',
      name: 'p1',
      type: POOL_TYPE,
      count: 1,
    });
    const { done, text } = await h.run(
      await h.enqueue(`k8s pool add poolk8s p1 ${POOL_TYPE} 1`, sentLongAgo()),
    );
    expect(done, text).toBe(true);
    expect(text).toBe(`Node pool p1 of poolk8s is ready: 1 × ${POOL_TYPE}, 1/1 nodes ready.`);
    expect(k8sClusters('poolk8s')[0]!.pools).toHaveLength(1);
  });

  it('recognises the pool a lost answer made, and adds no second one', async () => {
    await h.cloud.createK8sCluster({ name: 'lostpool', version: 'v1.31' });
    h.loseNextAnswer('createK8sNodePool');
    const job = await h.enqueue(`k8s pool add lostpool p1 ${POOL_TYPE} 1`);
    expect((await h.run(job)).done).toBe(false);
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(k8sClusters('lostpool')[0]!.pools).toHaveLength(1);
  });

  it('refuses a pool name someone else has taken in that cluster, saying what that pool is', async () => {
    const cluster = await h.cloud.createK8sCluster({ name: 'fullk8s', version: 'v1.31' });
    await h.cloud.createK8sNodePool({
      clusterId: cluster.id,
      clusterName: 'fullk8s',
      name: 'p1',
      type: POOL_TYPE,
      count: 2,
    });
    const { done, permanent, text } = await h.run(await h.enqueue(`k8s pool add fullk8s p1 ${POOL_TYPE} 1`));
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe(
      `Cluster fullk8s already has a node pool named p1 (2 × ${POOL_TYPE}); pick another name, or see them with /gpu k8s pools fullk8s.`,
    );
    expect(k8sClusters('fullk8s')[0]!.pools).toMatchObject([{ count: 2 }]);
  });

  it('a retried pool delete whose first attempt got through ends with the pool deleted', async () => {
    const cluster = await h.cloud.createK8sCluster({ name: 'rmpool', version: 'v1.31' });
    const pool = await h.cloud.createK8sNodePool({
      clusterId: cluster.id,
      clusterName: 'rmpool',
      name: 'p1',
      type: POOL_TYPE,
      count: 1,
    });
    await h.cloud.deleteK8sNodePool({ clusterId: cluster.id, poolId: pool.id });
    const progress = { clusterId: cluster.id, clusterName: 'rmpool', poolId: pool.id, poolName: 'p1' };
    const { done, text } = await h.run(await h.enqueue('k8s pool rm rmpool p1', { progress }));
    expect(done, text).toBe(true);
    expect(text).toBe('Node pool p1 of rmpool is deleted.');
  });
});

describe('slurm clusters and pools, shape B', () => {
  beforeEach(() => {
    h = shapeB();
  });

  it('recognises the cluster a lost answer made, and sends no second create', async () => {
    h.loseNextAnswer('createSlurmCluster');
    const job = await h.enqueue('slurm create losthpc');
    expect((await h.run(job)).done).toBe(false);
    const { done, text } = await h.run(job);
    expect(done, text).toBe(true);
    expect(text).toMatch(/^Slurm cluster losthpc is ready \(Slurm .+\)\.$/);
    expect(h.sim.control.createCount('createSlurmCluster', 'losthpc')).toBe(1);
    expect(slurmClusters('losthpc')).toHaveLength(1);
  });

  it('refuses a name someone else’s cluster has', async () => {
    await h.cloud.createSlurmCluster({ name: 'hpc' });
    const { done, permanent, text } = await h.run(await h.enqueue('slurm create hpc'));
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe(
      'A Slurm cluster named hpc already exists in this project; pick another name, or see it with /gpu slurm show hpc.',
    );
    expect(slurmClusters('hpc')).toHaveLength(1);
  });

  it('adopts the pool of its name once the job recorded that it sent the add, and refuses it otherwise', async () => {
    const cluster = await h.cloud.createSlurmCluster({ name: 'hpc' });
    await h.cloud.createSlurmNodePool({ clusterId: cluster.id, name: 'part', type: POOL_TYPE, count: 2 });
    const adopted = await h.run(await h.enqueue(`slurm pool add hpc part ${POOL_TYPE} 2`, sentLongAgo()));
    expect(adopted).toEqual({
      done: true,
      permanent: false,
      text: `Node pool part of hpc is ready: 2 × ${POOL_TYPE}, 2/2 nodes up.`,
    });
    const refused = await h.run(await h.enqueue(`slurm pool add hpc part ${POOL_TYPE} 1`));
    expect(refused).toEqual({
      done: false,
      permanent: true,
      text: `Cluster hpc already has a node pool named part (2 × ${POOL_TYPE}); pick another name, or see them with /gpu slurm pools hpc.`,
    });
    expect(slurmClusters('hpc')[0]!.pools).toHaveLength(1);
  });
});

describe('slurm users, shape A', () => {
  beforeEach(async () => {
    h = shapeA();
    // The requester starts each test owning no key.
    for (const k of await h.store.keysOf(OWNER)) await h.store.removeKeyOwner(k.name);
  });

  const users = () => slurmClusters('slurm-1')[0]!.users;
  const loginIp = () =>
    String((slurmClusters('slurm-1')[0]!.loginNodes as { publicIP: string }[])[0]!.publicIP);

  async function ownsKey(publicKey: string): Promise<void> {
    await h.store.addKeyOwner({
      name: `k-${publicKey.slice(-8)}`,
      userId: OWNER,
      publicKey,
      addedAt: Date.now(),
    });
  }

  it('adds the requester with the keys they own', async () => {
    const key = ed25519PublicKey();
    await ownsKey(key);
    const { done, text } = await h.run(await h.enqueue('slurm adduser slurm-1 --username ada'));
    expect(done, text).toBe(true);
    expect(text).toBe(
      `Added you to slurm-1 as ada with 1 SSH key, without sudo. Log in with ssh ada@${loginIp()}.`,
    );
    expect(users()).toEqual([{ username: 'ada', sshKeys: [key], sudo: false }]);
  });

  it('an existing user with the same key (a retry, or the same request twice) is the requester: nothing added twice', async () => {
    const key = ed25519PublicKey('ada@laptop');
    await ownsKey(key);
    const cluster = slurmClusters('slurm-1')[0]!;
    // The same key under another comment is the same key.
    await h.cloud.addSlurmUser({
      clusterId: cluster.id,
      username: 'ada',
      sshKeys: [key.replace('ada@laptop', 'ada@desk')],
      sudo: true,
    });
    const { done, text } = await h.run(await h.enqueue('slurm adduser slurm-1 --username ada'));
    expect(done, text).toBe(true);
    expect(text).toBe(
      `You are on slurm-1 as ada with your 1 SSH key, with sudo. Log in with ssh ada@${loginIp()}.`,
    );
    expect(users()).toHaveLength(1);
  });

  it('refuses a username another person holds with other keys, and leaves their keys alone', async () => {
    await ownsKey(ed25519PublicKey());
    const theirs = ed25519PublicKey('bob@desk');
    await h.cloud.addSlurmUser({
      clusterId: slurmClusters('slurm-1')[0]!.id,
      username: 'ada',
      sshKeys: [theirs],
    });
    const { done, permanent, text } = await h.run(await h.enqueue('slurm adduser slurm-1 --username ada'));
    expect({ done, permanent }).toEqual({ done: false, permanent: true });
    expect(text).toBe('The username ada is already taken on slurm-1; pick another with --username.');
    expect(users()).toEqual([{ username: 'ada', sshKeys: [theirs], sudo: false }]);
  });

  it('asks for a key first when the requester owns none', async () => {
    const { done, permanent, text } = await h.run(await h.enqueue('slurm adduser slurm-1 --username ada'));
    expect({ done, permanent, text }).toEqual({ done: false, permanent: true, text: NO_KEYS_MESSAGE });
    expect(users()).toEqual([]);
  });

  it('a retried removal whose first attempt got through says the user is gone; a first one names who is there', async () => {
    const cluster = slurmClusters('slurm-1')[0]!;
    await h.cloud.addSlurmUser({ clusterId: cluster.id, username: 'bob', sshKeys: [ed25519PublicKey()] });
    const retried = await h.run(await h.enqueue('slurm rmuser slurm-1 ada', { progress: { sent: true } }));
    expect(retried).toEqual({ done: true, permanent: false, text: 'ada is no longer a user of slurm-1.' });
    const first = await h.run(await h.enqueue('slurm rmuser slurm-1 ada'));
    expect(first).toEqual({
      done: false,
      permanent: true,
      text: 'ada is not a user of slurm-1. Its users: bob. Check the name with /gpu slurm users slurm-1.',
    });
    expect(users().map((u) => u.username)).toEqual(['bob']);
  });
});
