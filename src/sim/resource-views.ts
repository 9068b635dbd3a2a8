import type { Shape } from '../cloud/shape.js';
import type { SimInstanceType } from './catalog.js';
import type {
  SimFilesystem,
  SimInstance,
  SimK8sCluster,
  SimK8sPool,
  SimNode,
  SimProject,
  SimSlurmCluster,
  SimSlurmPool,
  SimSlurmUser,
} from './sim-state.js';

// How each resource looks on the wire in each shape (spec: Resources and their fields, variant letters).
// Built per request from the state, never cached, so a response always shows the current state.

type Json = Record<string, unknown>;

const iso = (ms: number): string => new Date(ms).toISOString();

const DRIVER_VERSION = '550.127.08';
const CUDA_VERSION = '12.4';

export function projectView(p: SimProject): Json {
  return { id: p.id, name: p.name, state: p.state, tags: p.tags };
}

export function instanceView(i: SimInstance, shape: Shape): Json {
  const out: Json = {
    id: i.id,
    name: i.name,
    type: i.type.name,
    ip: i.ip,
    state: i.state,
    image: i.image,
    preemptible: i.preemptible,
    ephemeral: i.ephemeral,
    userData: i.userData,
    tags: i.tags,
  };
  // cluster_id is A's link to a cluster; instances created through this API belong to none.
  if (shape === 'A') out.cluster_id = null;
  else out.filesystems = i.filesystems;
  return out;
}

export function filesystemView(f: SimFilesystem): Json {
  return { id: f.id, name: f.name, size: f.size };
}

/** Kubernetes-label style product name, as the reference's example shows (NVIDIA-H100-80GB-HBM3). */
function product(type: SimInstanceType): string {
  return type.gpuModel.trim().replace(/\s+/g, '-');
}

function acceleratorView(type: SimInstanceType, shape: Shape): Json | undefined {
  if (type.gpuCount === 0) return undefined;
  const out: Json = { type: 'nvidia/gpu', product: product(type), driverVersion: DRIVER_VERSION };
  if (shape === 'A') {
    out.cudaVersion = CUDA_VERSION;
    out.count = type.gpuCount;
  }
  return out;
}

function k8sNodeView(n: SimNode, pool: SimK8sPool, shape: Shape): Json {
  const at = iso(n.createdAt);
  const out: Json = {
    name: n.name,
    instanceID: n.instanceID,
    state: 'ready',
    kubeletVersion: pool.version.startsWith('v') ? pool.version : `v${pool.version}`,
    createdAt: at,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        lastHeartbeatTime: at,
        lastTransitionTime: at,
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
      },
    ],
    labels: {
      'kubernetes.io/hostname': n.name,
      'node.kubernetes.io/instance-type': pool.type.name,
      'gpuops.sim/node-pool': pool.name,
    },
    taints: pool.type.gpuCount > 0 ? [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }] : [],
  };
  const accelerator = acceleratorView(pool.type, shape);
  if (accelerator) out.accelerator = accelerator;
  if (shape === 'A') {
    out.publicIP = n.publicIP;
    out.privateIP = n.privateIP;
  }
  return out;
}

export function k8sClusterView(c: SimK8sCluster, shape: Shape): Json {
  const out: Json = { id: c.id, name: c.name, version: c.version };
  if (shape === 'C') return out;
  out.certificateAuthorityData = c.certificateAuthorityData;
  if (shape === 'A') {
    out.status = { type: c.status, details: {} };
    out.labels = c.labels;
  }
  return out;
}

export function k8sPoolView(p: SimK8sPool, cluster: SimK8sCluster, shape: Shape): Json {
  const out: Json = {
    id: p.id,
    name: p.name,
    cluster: cluster.name,
    type: p.type.name,
    count: p.count,
    version: p.version,
  };
  if (shape !== 'C') out.nodes = p.nodes.map((n) => k8sNodeView(n, p, shape));
  return out;
}

export function slurmClusterView(c: SimSlurmCluster, shape: Shape): Json {
  if (shape === 'C') return { id: c.id, name: c.name };
  return { id: c.id, name: c.name, version: c.version, loginNodes: c.loginNodes };
}

function slurmNodeView(n: SimNode, pool: SimSlurmPool, shape: Shape): Json {
  const out: Json = {
    name: n.name,
    instanceID: n.instanceID,
    states: ['idle'],
    slurmdVersion: '24.05.7',
    partitions: [pool.name],
    reservation: '',
    reason: '',
  };
  if (shape === 'A') {
    out.publicIP = n.publicIP;
    out.privateIP = n.privateIP;
    const accelerator = acceleratorView(pool.type, shape);
    if (accelerator) out.accelerator = accelerator;
  }
  return out;
}

export function slurmPoolView(p: SimSlurmPool, shape: Shape): Json {
  if (shape === 'C') return { id: p.id, name: p.name, type: p.type.name };
  return {
    id: p.id,
    name: p.name,
    type: p.type.name,
    count: p.count,
    nodes: p.nodes.map((n) => slurmNodeView(n, p, shape)),
  };
}

export function slurmUserView(u: SimSlurmUser): Json {
  return { username: u.username, sshKeys: u.sshKeys, sudo: u.sudo };
}

/** A YAML scalar: bare when it is plainly safe, else double-quoted (JSON strings are valid YAML). */
const scalar = (value: string): string =>
  /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value) ? value : JSON.stringify(value);

/** A plausible kubeconfig for a cluster; only ever sent base64-encoded, never logged. */
export function kubeconfigYaml(c: SimK8sCluster): string {
  const name = scalar(c.name);
  const user = scalar(`${c.name}-admin`);
  const host =
    c.name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'cluster';
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    // .invalid never resolves: the simulated API server must not be mistaken for a real one.
    `    server: https://${host}.k8s.sim.invalid:6443`,
    `    certificate-authority-data: ${c.certificateAuthorityData}`,
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${user}`,
    `current-context: ${name}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${c.adminToken}`,
    '',
  ].join('\n');
}
