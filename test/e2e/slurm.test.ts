import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlurmCluster } from '../../src/cloud/index.js';
import { ed25519PublicKey, rsaPublicKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { answeredPrivately, privateAnswer, refused, settled, shown } from '../support/slash-requests.js';

// `/gpu slurm …` end to end in every shape that has each subcommand: what the requester sees in Slack,
// and what the simulator then holds. A and C start with the seeded cluster `slurm-1` (pool `gpu`, two
// nodes); only B creates clusters and pools; only A has users.

const ADA = 'U0ADA';
const BOB = 'U0BOB';

async function clusterNamed(stack: BotStack, name: string): Promise<SlurmCluster | undefined> {
  return (await stack.cloud.listSlurmClusters()).find((c) => c.name === name);
}

/** Registers a key on the account and records its Slack owner, as `/gpu keys add` does. */
async function giveKey(stack: BotStack, userId: string, name: string, publicKey: string) {
  await stack.platform.addSshKey({ name, public_key: publicKey });
  await stack.store.addKeyOwner({ name, userId, publicKey, addedAt: Date.now() });
}

describe('Slurm end to end, shape A (seeded cluster, users)', () => {
  let stack: BotStack;
  let clusterId: string;
  const adaKey = ed25519PublicKey('ada@laptop');
  const adaKey2 = rsaPublicKey('ada@desk');
  const bobKey = ed25519PublicKey('bob@laptop');

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'A',
      slack: {
        users: [
          { id: ADA, name: 'ada', real_name: 'Augusta Ada King', display_name: 'Ada Lovelace' },
          { id: BOB, name: 'bob', real_name: 'Ada Lovelace', display_name: '' },
          { id: 'U0YAMADA', name: '山田', real_name: '山田 太郎', display_name: '山田' },
        ],
      },
    });
    clusterId = (await clusterNamed(stack, 'slurm-1'))!.id;
  });
  afterAll(async () => {
    await stack?.close();
  });

  const users = () => stack.cloud.listSlurmUsers({ clusterId });

  it('lists and shows the cluster with its login node and pool', async () => {
    expect(shown(await privateAnswer(stack, 'slurm ls'))).toMatch(
      /\*slurm-1\* · Slurm [\d.]+ · login slurm-1-login-01 \(/,
    );
    const text = shown(await privateAnswer(stack, 'slurm show slurm-1'));
    expect(text).toContain('slurm-1-login-01');
    expect(text).toContain('*gpu* · 2 × h100-hgx-80gb.8x · :large_green_circle: 2/2 up');
    expect(shown(await privateAnswer(stack, 'slurm pools slurm-1'))).toContain('Node pools of slurm-1 (1)');
  });

  it('tells a requester with no SSH keys how to add one', async () => {
    const message = await settled(stack, 'slurm adduser slurm-1', 'Failed');
    expect(message.text).toContain(
      'You have no SSH keys registered with gpuops: add one with `/gpu keys add <name> <public key>` and try again.',
    );
    expect(await users()).toEqual([]);
  });

  it('adds the requester with their keys under a name from their Slack profile', async () => {
    await giveKey(stack, ADA, 'ada-laptop', adaKey);
    await giveKey(stack, ADA, 'ada-desk', adaKey2);
    await giveKey(stack, BOB, 'bob-laptop', bobKey);
    const message = await settled(stack, 'slurm adduser slurm-1', 'Done', {
      userId: ADA,
      channelId: 'C0TWO',
    });
    expect(message.text).toContain('Added you to slurm-1 as ada_lovelace (from your Slack name');
    expect(message.text).toContain('with 2 SSH keys, without sudo. Log in with ssh ada_lovelace@');
    const ada = (await users()).find((u) => u.username === 'ada_lovelace');
    expect(ada?.sshKeys.sort()).toEqual([adaKey, adaKey2].sort());
    expect(ada?.sudo).toBe(false);
  });

  it('adopts the user when the same person asks again with the same keys', async () => {
    const message = await settled(stack, 'slurm adduser slurm-1', 'Done', {
      userId: ADA,
      channelId: 'C0THREE',
    });
    expect(message.text).toContain('You are on slurm-1 as ada_lovelace');
    expect((await users()).filter((u) => u.username === 'ada_lovelace')).toHaveLength(1);
  });

  it('says a username is taken when someone else holds it, and how to pick another', async () => {
    // Bob's real name gives the same username as Ada's display name.
    const message = await settled(stack, 'slurm adduser slurm-1', 'Failed', { userId: BOB });
    expect(message.text).toContain(
      'The username ada_lovelace is already taken on slurm-1; pick another with --username.',
    );
    const ada = (await users()).find((u) => u.username === 'ada_lovelace');
    expect(ada?.sshKeys).not.toContain(bobKey);
  });

  it('takes --username and --sudo', async () => {
    const message = await settled(stack, 'slurm adduser slurm-1 --username bob --sudo', 'Done', {
      userId: BOB,
    });
    expect(message.text).toContain('Added you to slurm-1 as bob with 1 SSH key, with sudo.');
    expect(message.text).not.toContain('from your Slack name');
    expect((await users()).find((u) => u.username === 'bob')).toMatchObject({
      sshKeys: [bobKey],
      sudo: true,
    });
  });

  it('refuses an invalid --username at once, with the rule', async () => {
    const text = await refused(stack, 'slurm adduser slurm-1 --username Bob!');
    expect(text).toContain('a username starts with a lowercase letter or _');
    expect(text).toContain('/gpu slurm adduser');
  });

  it('asks for --username when the Slack name gives none', async () => {
    await giveKey(stack, 'U0YAMADA', 'yamada-laptop', ed25519PublicKey('yamada@laptop'));
    const message = await settled(stack, 'slurm adduser slurm-1', 'Failed', { userId: 'U0YAMADA' });
    expect(message.text).toContain('Your Slack name gives no usable username');
    expect(message.text).toContain('--username, e.g. /gpu slurm adduser slurm-1 --username ada');
  });

  it('asks for --username when Slack will not give the profile', async () => {
    await giveKey(stack, 'U0GHOST', 'ghost-laptop', ed25519PublicKey('ghost@laptop'));
    const message = await settled(stack, 'slurm adduser slurm-1', 'Failed', { userId: 'U0GHOST' });
    expect(message.text).toContain('I could not read your Slack profile (Slack answered "user_not_found")');
    expect(message.text).toContain('give one with --username');
  });

  it('lists the users privately', async () => {
    const text = shown(await privateAnswer(stack, 'slurm users slurm-1'));
    expect(text).toContain('Users of slurm-1 (2)');
    expect(text).toContain('*ada_lovelace* · 2 SSH keys');
    expect(text).toContain('*bob* · sudo · 1 SSH key');
  });

  it('grants and revokes sudo, keeping the user’s keys', async () => {
    const on = await settled(stack, 'slurm sudo slurm-1 ada_lovelace on', 'Done');
    expect(on.text).toContain('ada_lovelace now has sudo on slurm-1.');
    let ada = (await users()).find((u) => u.username === 'ada_lovelace');
    expect(ada?.sudo).toBe(true);
    expect(ada?.sshKeys).toHaveLength(2);
    const off = await settled(stack, 'slurm sudo slurm-1 ada_lovelace off', 'Done');
    expect(off.text).toContain('ada_lovelace now has no sudo on slurm-1.');
    ada = (await users()).find((u) => u.username === 'ada_lovelace');
    expect(ada?.sudo).toBe(false);
  });

  it('removes a user, and names the users there are when one is unknown', async () => {
    const message = await settled(stack, 'slurm rmuser slurm-1 bob', 'Done');
    expect(message.text).toContain('bob is no longer a user of slurm-1.');
    expect((await users()).map((u) => u.username)).toEqual(['ada_lovelace']);
    const unknown = await settled(stack, 'slurm rmuser slurm-1 nobody', 'Failed');
    expect(unknown.text).toContain(
      'nobody is not a user of slurm-1. Its users: ada_lovelace. Check the name with /gpu slurm users slurm-1.',
    );
  });

  it('tells only the requester when a cluster does not exist; the channel sees nothing', async () => {
    expect(await answeredPrivately(stack, 'slurm users hpc')).toBe(
      'No Slurm cluster "hpc" in this project. This project has: slurm-1. Check the name with `/gpu slurm ls`.',
    );
    expect(await answeredPrivately(stack, 'slurm adduser slurm-2', { userId: ADA })).toBe(
      'No Slurm cluster "slurm-2" in this project. Did you mean `slurm-1`? (`/gpu slurm ls` lists them.)',
    );
  });

  it('says clusters and pools cannot be created here', async () => {
    expect(await refused(stack, 'slurm create hpc')).toContain(
      "`/gpu slurm create` does not work with this cloud: its API cannot create Slurm clusters. Use the cloud's own console or CLI for it; `/gpu help` lists what works here.",
    );
    expect(await refused(stack, 'slurm pool add slurm-1 cpu cpu.16x 1')).toContain(
      'does not work with this cloud',
    );
    expect(stack.slack.violations).toEqual([]);
  });
});

describe('Slurm end to end, shape B (clusters and pools)', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a cluster once and reports it ready with its login node', async () => {
    const message = await settled(stack, 'slurm create hpc', 'Done');
    expect(message.text).toMatch(/Slurm cluster hpc is ready \(Slurm [\d.]+\)\./);
    expect(JSON.stringify(message.blocks)).toContain('hpc-login-01');
    expect((await stack.cloud.listSlurmClusters()).filter((c) => c.name === 'hpc')).toHaveLength(1);
    expect(stack.sim.control.createCount('createSlurmCluster', 'hpc')).toBe(1);
  });

  it('refuses a second cluster of the same name', async () => {
    const message = await settled(stack, 'slurm create hpc', 'Failed', { userId: BOB });
    expect(message.text).toContain('A Slurm cluster named hpc already exists in this project');
    expect(stack.sim.control.createCount('createSlurmCluster', 'hpc')).toBe(1);
  });

  it('adds a node pool once, through a cloud fault after the create, and waits for its nodes', async () => {
    // The create goes through, then reading the pool fails more often than the client retries: the
    // job's retry resumes from the recorded pool instead of adding a second one.
    stack.sim.control.addFault({ operation: 'getSlurmNodePool', status: 503, count: 4 });
    const message = await settled(stack, 'slurm pool add hpc compute a100-sxm4-80gb.4x 2', 'Done');
    expect(message.history.map((v) => String(v.text)).join('\n')).toContain('Retrying (attempt 2 of 6)');
    expect(stack.sim.control.createCount('createSlurmNodePool', 'compute')).toBe(1);
    expect(message.text).toContain('Node pool compute of hpc is ready: 2 × a100-sxm4-80gb.4x, 2/2 nodes up.');
    const cluster = await clusterNamed(stack, 'hpc');
    const pools = await stack.cloud.listSlurmNodePools({ clusterId: cluster!.id });
    expect(pools.map((p) => [p.name, p.count, p.nodes?.length])).toEqual([['compute', 2, 2]]);
  });

  it('refuses a second pool of the same name', async () => {
    const message = await settled(stack, 'slurm pool add hpc compute rtx-a5000-24gb.1x 1', 'Failed');
    expect(message.text).toContain(
      'Cluster hpc already has a node pool named compute (2 × a100-sxm4-80gb.4x)',
    );
    expect(stack.sim.control.createCount('createSlurmNodePool', 'compute')).toBe(1);
  });

  it('lists and shows clusters and pools privately', async () => {
    expect(shown(await privateAnswer(stack, 'slurm ls'))).toContain('*hpc* · Slurm');
    const show = shown(await privateAnswer(stack, 'slurm show hpc'));
    expect(show).toContain('*compute* · 2 × a100-sxm4-80gb.4x · :large_green_circle: 2/2 up');
    expect(show).toContain('Log in with `ssh &lt;username&gt;@');
    expect(shown(await privateAnswer(stack, 'slurm pools hpc'))).toContain('Node pools of hpc (1)');
  });

  it('names the pools and clusters there are when one is unknown', async () => {
    const pool = await settled(stack, 'slurm pool rm hpc gpu', 'Failed');
    expect(pool.text).toContain('Cluster hpc has no node pool "gpu". Its pools: compute.');
    expect(await answeredPrivately(stack, 'slurm show hcp')).toBe(
      'No Slurm cluster "hcp" in this project. Did you mean `hpc`? (`/gpu slurm ls` lists them.)',
    );
    expect(await answeredPrivately(stack, 'slurm pool rm hcp compute')).toContain(
      'No Slurm cluster "hcp" in this project. Did you mean `hpc`?',
    );
  });

  it('says users are not managed in this shape', async () => {
    expect(await refused(stack, 'slurm adduser hpc')).toContain(
      "`/gpu slurm adduser` does not work with this cloud: its API cannot add Slurm users. Use the cloud's own console or CLI for it; `/gpu help` lists what works here.",
    );
  });

  it('removes a pool, then the cluster, waiting until each is gone', async () => {
    const pool = await settled(stack, 'slurm pool rm hpc compute', 'Done');
    expect(pool.text).toContain('Node pool compute of hpc is deleted.');
    const cluster = await clusterNamed(stack, 'hpc');
    expect(await stack.cloud.listSlurmNodePools({ clusterId: cluster!.id })).toEqual([]);
    const rm = await settled(stack, 'slurm rm hpc', 'Done');
    expect(rm.text).toContain('Slurm cluster hpc is deleted.');
    expect(await clusterNamed(stack, 'hpc')).toBeUndefined();
    expect(stack.slack.violations).toEqual([]);
  });
});

describe('Slurm end to end, shape C (seeded cluster, read only)', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lists the clusters and shows one from the list', async () => {
    expect(shown(await privateAnswer(stack, 'slurm ls'))).toContain('*slurm-1*');
    const show = shown(await privateAnswer(stack, 'slurm show slurm-1'));
    expect(show).toContain(':desktop_computer: *slurm-1*');
    expect(show).toContain('*gpu* · h100-hgx-80gb.8x');
    expect(show).toContain('does not say which cluster each belongs to');
  });

  it('lists the project’s Slurm pools, saying they are not per cluster', async () => {
    const text = shown(await privateAnswer(stack, 'slurm pools slurm-1'));
    expect(text).toContain('Slurm node pools of this project (1)');
    expect(text).toContain('*gpu* · h100-hgx-80gb.8x');
    expect(text).toContain('whole project');
  });

  it('names the clusters there are when one is unknown, to the requester alone', async () => {
    expect(await answeredPrivately(stack, 'slurm show nope')).toBe(
      'No Slurm cluster "nope" in this project. This project has: slurm-1. Check the name with `/gpu slurm ls`.',
    );
  });

  it('says what this shape cannot do', async () => {
    expect(await refused(stack, 'slurm create hpc')).toContain('does not work with this cloud');
    expect(await refused(stack, 'slurm users slurm-1')).toContain('does not work with this cloud');
    expect(stack.slack.violations).toEqual([]);
  });
});
