import type { Operation } from '../../cloud/routes.js';
import { checkUsername } from '../../cloud/rules.js';
import { asFields, check, optionalBoolean, optionalString, requiredString } from '../read-fields.js';
import { slurmClusterView, slurmPoolView, slurmUserView } from '../resource-views.js';
import { DEFAULT_SLURM_VERSION } from '../sim-state.js';
import { clusterOf, EMPTY, type Handler, json, param, projectOf, readPool, readSshKeys } from './kit.js';

// Slurm clusters, their node pools and users.

export const slurmRoutes = {
  listSlurmClusters: (call) =>
    json([...projectOf(call).slurm.values()].map((c) => slurmClusterView(c, call.shape))),
  createSlurmCluster: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const version = optionalString(o, 'version') ?? DEFAULT_SLURM_VERSION;
    return json(slurmClusterView(call.state.createSlurmCluster(projectOf(call), name, version), call.shape));
  },
  getSlurmCluster: (call) => json(slurmClusterView(clusterOf(call, 'slurm'), call.shape)),
  deleteSlurmCluster: (call) => {
    call.state.deleteCluster(projectOf(call), 'slurm', param(call, 'id'));
    return EMPTY;
  },
  listSlurmNodePools: (call) => {
    if (call.shape === 'C') {
      const out: unknown[] = [];
      for (const cluster of projectOf(call).slurm.values()) {
        for (const pool of cluster.pools.values()) out.push(slurmPoolView(pool, call.shape));
      }
      return json(out);
    }
    return json(
      [...clusterOf(call, 'slurm', 'clusterId').pools.values()].map((p) => slurmPoolView(p, call.shape)),
    );
  },
  createSlurmNodePool: (call) => {
    const cluster = clusterOf(call, 'slurm', 'clusterId');
    const pool = call.state.createSlurmPool(cluster, readPool(asFields(call.body), false));
    return json(slurmPoolView(pool, call.shape));
  },
  getSlurmNodePool: (call) =>
    json(
      slurmPoolView(
        call.state.getPool(clusterOf(call, 'slurm', 'clusterId'), param(call, 'poolId')),
        call.shape,
      ),
    ),
  deleteSlurmNodePool: (call) => {
    call.state.deletePool(clusterOf(call, 'slurm', 'clusterId'), param(call, 'poolId'));
    return EMPTY;
  },
  listSlurmUsers: (call) => json([...clusterOf(call, 'slurm').users.values()].map(slurmUserView)),
  addSlurmUser: (call) => {
    const cluster = clusterOf(call, 'slurm');
    const o = asFields(call.body);
    const username = requiredString(o, 'username', 'a POSIX user name such as alice');
    check('username', username, checkUsername);
    const sshKeys = readSshKeys(o);
    const sudo = optionalBoolean(o, 'sudo') ?? false;
    return json(slurmUserView(call.state.addSlurmUser(cluster, { username, sshKeys, sudo })));
  },
  getSlurmUser: (call) =>
    json(slurmUserView(call.state.getSlurmUser(clusterOf(call, 'slurm'), param(call, 'username')))),
  updateSlurmUser: (call) => {
    const cluster = clusterOf(call, 'slurm');
    const username = param(call, 'username');
    call.state.getSlurmUser(cluster, username);
    const o = asFields(call.body);
    const sshKeys = readSshKeys(o);
    const sudo = optionalBoolean(o, 'sudo');
    return json(slurmUserView(call.state.updateSlurmUser(cluster, username, sshKeys, sudo)));
  },
  deleteSlurmUser: (call) => {
    call.state.deleteSlurmUser(clusterOf(call, 'slurm'), param(call, 'username'));
    return EMPTY;
  },
} satisfies Partial<Record<Operation, Handler>>;
