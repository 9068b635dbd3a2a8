import { z } from 'zod';
import { checkSshPublicKey, checkUsername, SSH_KEY_RULE, USERNAME_RULE } from '../../cloud/rules.js';
import type { ArgReader } from '../arg-reader.js';
import { clusterNeed, clusterRefers, onClusterPaged, pagedCluster, readCluster } from '../cluster-kit.js';
import { sharedClusterSpecs } from '../cluster-specs.js';
import { slurmPoolForm } from '../forms/node-pool-modal.js';
import { slurmClusterForm } from '../forms/slurm-cluster-modal.js';
import { slurmUserForm } from '../forms/slurm-user-modal.js';
import { modal, name, ruled } from '../schema-kit.js';
import { defineCommand } from '../spec.js';

const username = ruled(checkUsername, USERNAME_RULE);

const { ls, show, rm, pools, poolAdd, poolRm } = sharedClusterSpecs('slurm', {
  title: 'Slurm',
  show: {
    summary: 'details of one cluster and its login nodes',
    // Shape C has no get, but its list carries everything a C Slurm cluster has (id and name).
    needs: [['getSlurmCluster', 'listSlurmClusters']],
  },
  poolForm: slurmPoolForm,
  example: { cluster: 'hpc', pool: 'compute', nodes: 'a100-sxm4-80gb.4x 4' },
});

const create = defineCommand({
  kind: 'slurm.create',
  group: 'slurm',
  usage: '/gpu slurm create [<name>]',
  summary: 'create a cluster; with no arguments a form',
  example: '/gpu slurm create hpc',
  schema: z.discriminatedUnion('modal', [
    modal('slurm.create'),
    z.object({ kind: z.literal('slurm.create'), modal: z.literal(false), name }),
  ]),
  parse(r: ArgReader) {
    const a = r.args();
    if (a.positionals.length === 0) return { kind: 'slurm.create', modal: true };
    const cluster = r.name(a.positionals[0], 'a name for the cluster');
    r.noMore(a, 1);
    return { kind: 'slurm.create', modal: false, name: cluster };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['createSlurmCluster'],
  creates: { what: 'Slurm clusters', list: 'listSlurmClusters', remove: 'deleteSlurmCluster' },
  form: { spec: slurmClusterForm },
});

const users = defineCommand({
  kind: 'slurm.users',
  group: 'slurm',
  usage: '/gpu slurm users <cluster> [--page N]',
  summary: 'list the users of a cluster',
  example: '/gpu slurm users hpc',
  schema: onClusterPaged('slurm.users'),
  parse: pagedCluster('slurm.users'),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['listSlurmUsers'],
  refers: (c) => clusterRefers('slurm', c.cluster),
  needsFor: (c) => clusterNeed('slurm', c.cluster),
});

const adduser = defineCommand({
  kind: 'slurm.adduser',
  group: 'slurm',
  usage: '/gpu slurm adduser <cluster> [--sudo] [--username U] [--form]',
  summary:
    'add yourself with the SSH keys you added; the username comes from your Slack profile unless given; --form opens a form',
  example: '/gpu slurm adduser hpc --username ada',
  schema: z.object({
    kind: z.literal('slurm.adduser'),
    cluster: name,
    sudo: z.boolean(),
    username: username.optional(),
    /** `--form`: open the form (prefilled with the other flags) instead of adding at once. */
    modal: z.boolean().optional(),
    /** The one key to add with (a workflow step's input); absent: the requester's keys. */
    publicKey: ruled(checkSshPublicKey, SSH_KEY_RULE).optional(),
  }),
  parse(r: ArgReader) {
    const a = r.args({ sudo: 'bool', username: 'value', form: 'bool' });
    const cluster = readCluster(r, a.positionals);
    r.noMore(a, 1);
    const given = a.values.username?.[0];
    const user = given === undefined ? undefined : r.username(given, 'a username');
    return {
      kind: 'slurm.adduser',
      cluster,
      sudo: a.bools.sudo ?? false,
      ...(user !== undefined ? { username: user } : {}),
      ...(a.bools.form ? { modal: true } : {}),
    };
  },
  delivery: 'channel',
  operationClass: 'operate',
  needs: ['addSlurmUser'],
  creates: { what: 'Slurm users', list: 'listSlurmUsers', remove: 'deleteSlurmUser' },
  refers: (c) => clusterRefers('slurm', c.cluster),
  needsFor: (c) => clusterNeed('slurm', c.cluster),
  form: {
    spec: slurmUserForm,
    prefill: (c) => ({
      cluster: c.cluster,
      sudo: c.sudo,
      ...(c.username !== undefined ? { username: c.username } : {}),
    }),
  },
});

const rmuser = defineCommand({
  kind: 'slurm.rmuser',
  group: 'slurm',
  usage: '/gpu slurm rmuser <cluster> <user>',
  summary: 'remove a user from a cluster',
  example: '/gpu slurm rmuser hpc ada',
  schema: z.object({ kind: z.literal('slurm.rmuser'), cluster: name, user: username }),
  parse(r: ArgReader) {
    const a = r.args();
    const cluster = readCluster(r, a.positionals);
    const user = r.username(a.positionals[1], 'the username to remove');
    r.noMore(a, 2);
    return { kind: 'slurm.rmuser', cluster, user };
  },
  delivery: 'channel',
  operationClass: 'operate',
  needs: ['deleteSlurmUser'],
  refers: (c) => clusterRefers('slurm', c.cluster),
  needsFor: (c) => clusterNeed('slurm', c.cluster),
});

const sudo = defineCommand({
  kind: 'slurm.sudo',
  group: 'slurm',
  usage: '/gpu slurm sudo <cluster> <user> on|off',
  summary: "grant or revoke a user's sudo",
  example: '/gpu slurm sudo hpc ada on',
  schema: z.object({ kind: z.literal('slurm.sudo'), cluster: name, user: username, sudo: z.boolean() }),
  parse(r: ArgReader) {
    const a = r.args();
    const cluster = readCluster(r, a.positionals);
    const user = r.username(a.positionals[1], 'the username');
    const state = a.positionals[2];
    if (state === undefined) r.fail(`${r.label()} needs on or off after the username`);
    const on = r.onOff(state);
    r.noMore(a, 3);
    return { kind: 'slurm.sudo', cluster, user, sudo: on === 'on' };
  },
  delivery: 'channel',
  operationClass: 'admin',
  // Root on every node of a cluster is worth a second pair of eyes.
  approval: 'always',
  describe: (c) => `/gpu slurm sudo ${c.cluster} ${c.user} ${c.sudo ? 'on' : 'off'}`,
  // The update needs the user's keys, which only a get returns.
  needs: ['getSlurmUser', 'updateSlurmUser'],
  refers: (c) => clusterRefers('slurm', c.cluster),
  needsFor: (c) => clusterNeed('slurm', c.cluster),
});

export const specs = [ls, show, create, rm, pools, poolAdd, poolRm, users, adduser, rmuser, sudo] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { user: 'users', pool: 'pools' };
