import {
  CloudConflictError,
  CloudNotFoundError,
  type SlurmCluster,
  type SlurmNodePool,
  type SlurmUser,
} from '../../cloud/index.js';
import { parseSshPublicKey } from '../../cloud/rules.js';
import {
  POOLS_OF_PROJECT_NOTE,
  slurmClusterBlocks,
  slurmClusterLine,
  slurmPoolLine,
  slurmPoolReadiness,
  slurmUserLine,
} from '../../render/clusters.js';
import {
  addPool,
  createOnce,
  deleteThenWait,
  ifExists,
  type PoolFamily,
  recordedTarget,
  removePool,
} from '../kit/cluster-ops.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { usernameFromSlackUser } from '../kit/posix-username.js';
import { resolveRef } from '../kit/resolve.js';
import { waitFor } from '../kit/wait-for.js';
import { withArguments } from '../kit/with-arguments.js';
import type { CommandOf } from '../registry.js';

// `/gpu slurm …`. A Slurm cluster reports no status in any shape: it is ready once it can be read. A
// node pool is ready when `count` of its nodes are up (no down/drain/fail state) where the shape
// lists nodes (A, B); C lists none. Users (A only) are added with the SSH keys the requester owns.

const WHAT = 'Slurm cluster';

export const NO_KEYS_MESSAGE =
  'You have no SSH keys registered with gpuops: add one with `/gpu keys add <name> <public key>` and try again.';

const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function resolveCluster(run: JobRun, ref: string): Promise<SlurmCluster> {
  const { cloud } = run.deps;
  return resolveRef(
    ref,
    WHAT,
    () => cloud.listSlurmClusters(run.call),
    // Shape C has no get: its list is all there is.
    cloud.supports('getSlurmCluster') ? (id) => cloud.getSlurmCluster({ id }, run.call) : undefined,
  );
}

async function readCluster(run: JobRun, id: string): Promise<SlurmCluster | undefined> {
  const { cloud } = run.deps;
  if (!cloud.supports('getSlurmCluster'))
    return (await cloud.listSlurmClusters(run.call)).find((c) => c.id === id);
  return ifExists(() => cloud.getSlurmCluster({ id }, run.call));
}

/** Whether the shape lists Slurm pools per cluster; C's route takes no cluster and lists the project's. */
function poolsPerCluster(run: JobRun): boolean {
  return run.deps.cloud.routes.listSlurmNodePools?.path.includes('{') ?? false;
}

async function poolsOf(run: JobRun, clusterId: string): Promise<SlurmNodePool[]> {
  return (await run.deps.cloud.listSlurmNodePools({ clusterId }, run.call)).sort(byName);
}

export async function listSlurmClusters(run: JobRun): Promise<Outcome> {
  const clusters = (await run.deps.cloud.listSlurmClusters(run.call)).sort(byName);
  const { text, blocks } = pagedList(
    run.data.command,
    `Slurm clusters (${clusters.length})`,
    clusters.map(slurmClusterLine),
  );
  return { detail: text, result: blocks };
}

export async function showSlurmCluster(run: JobRun, command: CommandOf<'slurm.show'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const pools = run.deps.cloud.supports('listSlurmNodePools') ? await poolsOf(run, cluster.id) : undefined;
  return {
    detail: `${cluster.name}: Slurm cluster${cluster.version ? ` ${cluster.version}` : ''}`,
    result: slurmClusterBlocks(cluster, pools, { poolsOfProject: !poolsPerCluster(run) }),
  };
}

function taken(name: string): PermanentJobError {
  return new PermanentJobError(
    `A Slurm cluster named ${name} already exists in this project; pick another name, or see it with /gpu slurm show ${name}.`,
  );
}

/** Idempotent by name, as the Kubernetes create: a retry adopts the cluster it recorded sending. */
export async function createSlurmCluster(run: JobRun, request: CommandOf<'slurm.create'>): Promise<Outcome> {
  const command = withArguments(request);
  const { cloud } = run.deps;
  const id = await createOnce(run, {
    idKey: 'clusterId',
    find: async () => (await cloud.listSlurmClusters(run.call)).find((c) => c.name === command.name),
    taken: () => taken(command.name),
    working: `Creating Slurm cluster ${command.name}…`,
    create: () => cloud.createSlurmCluster({ name: command.name }, run.call),
  });
  const cluster = await waitFor(run, {
    read: () => readCluster(run, id),
    done: (c) => c !== undefined,
    describe: (c) => (c ? 'readable' : 'not readable yet'),
    goal: `${command.name} to be ready`,
  });
  return {
    detail: `Slurm cluster ${cluster!.name} is ready${cluster!.version ? ` (Slurm ${cluster!.version})` : ''}.`,
    result: slurmClusterBlocks(cluster!),
  };
}

export async function deleteSlurmCluster(run: JobRun, command: CommandOf<'slurm.rm'>): Promise<Outcome> {
  const { id, name } = await recordedTarget(run, ['id', 'name'], async () => {
    const cluster = await resolveCluster(run, command.cluster);
    return { id: cluster.id, name: cluster.name };
  });
  await deleteThenWait(run, {
    working: `Deleting Slurm cluster ${name}…`,
    remove: () => run.deps.cloud.deleteSlurmCluster({ id }, run.call),
    read: () => readCluster(run, id),
    goal: `${name} to be deleted`,
  });
  return { detail: `Slurm cluster ${name} is deleted.` };
}

export async function listSlurmPools(run: JobRun, command: CommandOf<'slurm.pools'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const pools = await poolsOf(run, cluster.id);
  const perCluster = poolsPerCluster(run);
  const title = perCluster
    ? `Node pools of ${cluster.name} (${pools.length})`
    : `Slurm node pools of this project (${pools.length})`;
  const { text, blocks } = pagedList(run.data.command, title, pools.map(slurmPoolLine));
  if (!perCluster)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: POOLS_OF_PROJECT_NOTE }] });
  return { detail: text, result: blocks };
}

const nodePools: PoolFamily<SlurmNodePool> = {
  command: 'slurm',
  nodesAre: 'up',
  resolveCluster,
  pools: (run, cluster) => poolsOf(run, cluster.id),
  read: (run, clusterId, poolId) =>
    ifExists(() => run.deps.cloud.getSlurmNodePool({ clusterId, poolId }, run.call)),
  create: (run, cluster, pool) =>
    run.deps.cloud.createSlurmNodePool({ clusterId: cluster.id, ...pool }, run.call),
  remove: (run, clusterId, poolId) => run.deps.cloud.deleteSlurmNodePool({ clusterId, poolId }, run.call),
  readiness: slurmPoolReadiness,
  line: slurmPoolLine,
};

/** Idempotent by name within the cluster; waits for `count` nodes up where nodes are listed. */
export async function addSlurmPool(run: JobRun, request: CommandOf<'slurm.pool.add'>): Promise<Outcome> {
  return addPool(run, withArguments(request), nodePools);
}

export async function removeSlurmPool(run: JobRun, command: CommandOf<'slurm.pool.rm'>): Promise<Outcome> {
  return removePool(run, command, nodePools);
}

// ─── Users (shape A) ─────────────────────────────────────────────────────────────────────────────

export async function listSlurmUsers(run: JobRun, command: CommandOf<'slurm.users'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const users = (await run.deps.cloud.listSlurmUsers({ clusterId: cluster.id }, run.call)).sort((a, b) =>
    a.username.localeCompare(b.username),
  );
  const { text, blocks } = pagedList(
    command,
    `Users of ${cluster.name} (${users.length})`,
    users.map(slurmUserLine),
  );
  return { detail: text, result: blocks };
}

/** A key as the cloud compares it: type and data, without the comment. */
function keyId(key: string): string {
  const parsed = parseSshPublicKey(key);
  return typeof parsed === 'string' ? key.trim() : `${parsed.type} ${parsed.blob}`;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.map(keyId));
  const right = new Set(b.map(keyId));
  return left.size === right.size && [...left].every((k) => right.has(k));
}

function isSlackPlatformError(err: unknown): err is { data: { error?: string } } {
  return (err as { code?: string } | undefined)?.code === 'slack_webapi_platform_error';
}

/** The requester's username from their Slack profile (users.info), or a message asking for --username. */
async function usernameFromProfile(run: JobRun, cluster: string): Promise<string> {
  const example = `/gpu slurm adduser ${cluster} --username ada`;
  let user: Parameters<typeof usernameFromSlackUser>[0] | undefined;
  try {
    user = (await run.deps.slack.users.info({ user: run.data.ctx.userId })).user;
  } catch (err) {
    if (!isSlackPlatformError(err)) throw err;
    throw new PermanentJobError(
      `I could not read your Slack profile (Slack answered "${err.data.error ?? 'an error'}") to make a username; give one with --username, e.g. ${example}.`,
    );
  }
  const name = user ? usernameFromSlackUser(user) : undefined;
  if (!name) {
    throw new PermanentJobError(
      `Your Slack name gives no usable username (lowercase letters, digits, _ or -, starting with a letter); choose one with --username, e.g. ${example}.`,
    );
  }
  return name;
}

function loginHint(cluster: SlurmCluster, username: string): string {
  const ip = cluster.loginNodes?.find((n) => n.publicIP)?.publicIP;
  return ip ? ` Log in with ssh ${username}@${ip}.` : '';
}

type AddUserProgress = { username: string };

/**
 * Adds the requester with the SSH keys they own, under --username or a name from their Slack profile.
 * A user already there with exactly these keys (a retried job, or the same request twice) is adopted;
 * anyone else under that name makes the username taken.
 */
export async function addSlurmUser(run: JobRun, command: CommandOf<'slurm.adduser'>): Promise<Outcome> {
  const { cloud, store } = run.deps;
  const cluster = await resolveCluster(run, command.cluster);
  // A workflow step brings the key itself; a person typing the command uses the keys they added.
  const sshKeys = command.publicKey
    ? [command.publicKey]
    : (await store.keysOf(run.data.ctx.userId)).map((k) => k.publicKey);
  if (sshKeys.length === 0) throw new PermanentJobError(NO_KEYS_MESSAGE);
  // Recorded so a retry uses the same name even if the profile changed in between.
  let username = run.progress<AddUserProgress>().username;
  if (!username) {
    username = command.username ?? (await usernameFromProfile(run, cluster.name));
    await run.saveProgress({ username });
  }
  const derived = command.username ? '' : ' (from your Slack name; choose another with --username)';
  await run.update(
    'working',
    `Adding ${username} to ${cluster.name} with ${plural(sshKeys.length, 'SSH key')}…`,
  );
  let user: SlurmUser;
  let adopted = false;
  try {
    user = await cloud.addSlurmUser(
      { clusterId: cluster.id, username, sshKeys, sudo: command.sudo },
      run.call,
    );
  } catch (err) {
    if (!(err instanceof CloudConflictError)) throw err;
    const current = await findUser(run, cluster.id, username);
    if (!current || !sameKeys(current.sshKeys, sshKeys)) {
      throw new PermanentJobError(
        `The username ${username} is already taken on ${cluster.name}; pick another with --username.`,
      );
    }
    user = current;
    adopted = true;
  }
  const sudo = user.sudo ? 'with sudo' : 'without sudo';
  const detail = adopted
    ? `You are on ${cluster.name} as ${user.username}${derived} with your ${plural(sshKeys.length, 'SSH key')}, ${sudo}.`
    : `Added you to ${cluster.name} as ${user.username}${derived} with ${plural(sshKeys.length, 'SSH key')}, ${sudo}.`;
  return {
    detail: `${detail}${loginHint(cluster, user.username)}`,
    outputs: { username: user.username, cluster: cluster.name, login: loginLine(cluster, user.username) },
  };
}

/** The ssh line a new user logs in with; without a public login address, where to find one. */
function loginLine(cluster: SlurmCluster, username: string): string {
  const ip = cluster.loginNodes?.find((n) => n.publicIP)?.publicIP;
  return ip
    ? `ssh ${username}@${ip}`
    : `ssh ${username}@<login node of ${cluster.name}> (no public address yet: /gpu slurm show ${cluster.name})`;
}

async function findUser(run: JobRun, clusterId: string, username: string): Promise<SlurmUser | undefined> {
  const { cloud } = run.deps;
  if (!cloud.supports('getSlurmUser'))
    return (await cloud.listSlurmUsers({ clusterId }, run.call)).find((u) => u.username === username);
  return ifExists(() => cloud.getSlurmUser({ clusterId, username }, run.call));
}

async function notAUser(run: JobRun, cluster: SlurmCluster, username: string): Promise<PermanentJobError> {
  const users = run.deps.cloud.supports('listSlurmUsers')
    ? (await run.deps.cloud.listSlurmUsers({ clusterId: cluster.id }, run.call)).map((u) => u.username)
    : [];
  const known =
    users.length > 0
      ? ` Its users: ${users.slice(0, 10).join(', ')}${users.length > 10 ? ', …' : ''}.`
      : ' It has no users yet.';
  const next = run.deps.cloud.supports('listSlurmUsers')
    ? ` Check the name with /gpu slurm users ${cluster.name}.`
    : ' Check the spelling: a username is the one /gpu slurm adduser answered with.';
  return new PermanentJobError(`${username} is not a user of ${cluster.name}.${known}${next}`);
}

type RmUserProgress = { sent: boolean };

export async function removeSlurmUser(run: JobRun, command: CommandOf<'slurm.rmuser'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const wasSent = run.progress<RmUserProgress>().sent === true;
  await run.update('working', `Removing ${command.user} from ${cluster.name}…`);
  await run.saveProgress({ sent: true });
  try {
    await run.deps.cloud.deleteSlurmUser({ clusterId: cluster.id, username: command.user }, run.call);
  } catch (err) {
    if (!(err instanceof CloudNotFoundError)) throw err;
    // Gone already: by this job's earlier attempt, or never there.
    if (!wasSent) throw await notAUser(run, cluster, command.user);
  }
  return { detail: `${command.user} is no longer a user of ${cluster.name}.` };
}

/** The update resends the user's current keys: the API replaces the key list with what it is given. */
export async function setSlurmSudo(run: JobRun, command: CommandOf<'slurm.sudo'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const user = await findUser(run, cluster.id, command.user);
  if (!user) throw await notAUser(run, cluster, command.user);
  const state = command.sudo ? 'has sudo' : 'has no sudo';
  if (user.sudo === command.sudo) {
    return { detail: `${user.username} already ${state} on ${cluster.name}; nothing to do.` };
  }
  await run.update(
    'working',
    `${command.sudo ? 'Granting' : 'Revoking'} sudo for ${user.username} on ${cluster.name}…`,
  );
  const updated = await run.deps.cloud.updateSlurmUser(
    { clusterId: cluster.id, username: user.username, sshKeys: user.sshKeys, sudo: command.sudo },
    run.call,
  );
  return {
    detail: `${updated.username} now ${updated.sudo ? 'has sudo' : 'has no sudo'} on ${cluster.name}.`,
  };
}

export const handlers = {
  'slurm.ls': listSlurmClusters,
  'slurm.show': showSlurmCluster,
  'slurm.create': createSlurmCluster,
  'slurm.rm': deleteSlurmCluster,
  'slurm.pools': listSlurmPools,
  'slurm.pool.add': addSlurmPool,
  'slurm.pool.rm': removeSlurmPool,
  'slurm.users': listSlurmUsers,
  'slurm.adduser': addSlurmUser,
  'slurm.rmuser': removeSlurmUser,
  'slurm.sudo': setSlurmSudo,
} satisfies Handlers;
