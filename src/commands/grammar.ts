import type { GpuCommandKind } from './command-schema.js';

// The /gpu grammar as people read it: one usage line, a summary and a working example per subcommand.
// Parser errors, help and docs/commands.md all quote this table, so they cannot drift apart.

export interface SubcommandDoc {
  readonly kind: GpuCommandKind;
  readonly usage: string;
  readonly summary: string;
  readonly example: string;
}

export const GROUPS = [
  { key: 'basics', title: 'Help and projects' },
  { key: 'instances', title: 'Instances' },
  { key: 'catalog', title: 'Capacity, prices and SSH keys' },
  { key: 'fs', title: 'Filesystems' },
  { key: 'k8s', title: 'Kubernetes' },
  { key: 'slurm', title: 'Slurm' },
  { key: 'observe', title: 'Metrics, jobs and the team' },
] as const;
export type GroupKey = (typeof GROUPS)[number]['key'];

const d = (kind: GpuCommandKind, usage: string, summary: string, example: string): SubcommandDoc => ({
  kind,
  usage,
  summary,
  example,
});

export const SUBCOMMAND_DOCS: Readonly<Record<GroupKey, readonly SubcommandDoc[]>> = {
  basics: [
    d('help', '/gpu help [topic]', 'this overview, or the syntax of one subcommand', '/gpu help k8s'),
    d('projects', '/gpu projects', 'list the projects of the account', '/gpu projects'),
    d('project', '/gpu project', 'show the project this channel works in', '/gpu project'),
    d(
      'project.use',
      '/gpu project use <name|id>',
      'bind this channel to a project',
      '/gpu project use research',
    ),
  ],
  instances: [
    d('ls', '/gpu ls', 'list the instances of the project', '/gpu ls'),
    d('show', '/gpu show <instance>', 'details of one instance', '/gpu show train-01'),
    d(
      'create',
      '/gpu create [<name> <type> [--image I] [--preemptible] [--ephemeral] [--fs <name>]... [--tag k=v]...]',
      'create an instance; with no arguments a form with configurations and prices',
      '/gpu create train-01 h100-hgx-80gb.1x --image ubuntu22.04 --tag team=vision',
    ),
    d('start', '/gpu start <instance>', 'start a stopped instance', '/gpu start train-01'),
    d('stop', '/gpu stop <instance>', 'stop a running instance', '/gpu stop train-01'),
    d('rm', '/gpu rm <instance>', 'delete an instance', '/gpu rm train-01'),
  ],
  catalog: [
    d('capacity', '/gpu capacity', 'machines available per instance type', '/gpu capacity'),
    d(
      'configs',
      '/gpu configs',
      'GPU configurations with prices, regions and provisioning time',
      '/gpu configs',
    ),
    d('keys', '/gpu keys', 'SSH public keys on the account and who added them', '/gpu keys'),
    d(
      'keys.add',
      '/gpu keys add [<name> <public key>]',
      'add your SSH public key (the rest of the line); with no arguments a form',
      '/gpu keys add laptop ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
    ),
    d('keys.rm', '/gpu keys rm <name>', 'remove an SSH key from the account', '/gpu keys rm laptop'),
  ],
  fs: [
    d('fs', '/gpu fs', 'list filesystems', '/gpu fs'),
    d(
      'fs.create',
      '/gpu fs create <name> <size>',
      'create a filesystem (size like 512Gi or 1Ti)',
      '/gpu fs create datasets 512Gi',
    ),
    d('fs.rm', '/gpu fs rm <name>', 'delete a filesystem', '/gpu fs rm datasets'),
  ],
  k8s: [
    d('k8s.ls', '/gpu k8s ls', 'list Kubernetes clusters', '/gpu k8s ls'),
    d('k8s.show', '/gpu k8s show <cluster>', 'details of one cluster', '/gpu k8s show prod'),
    d(
      'k8s.create',
      '/gpu k8s create [<name> <version>]',
      'create a cluster; with no arguments a form',
      '/gpu k8s create prod v1.31',
    ),
    d(
      'k8s.register',
      '/gpu k8s register',
      'register an existing cluster (opens a form for its kubeconfig)',
      '/gpu k8s register',
    ),
    d('k8s.rm', '/gpu k8s rm <cluster>', 'delete a cluster', '/gpu k8s rm prod'),
    d(
      'k8s.upgrade',
      '/gpu k8s upgrade <cluster> <version>',
      'move a cluster to another version',
      '/gpu k8s upgrade prod v1.32',
    ),
    d(
      'k8s.label',
      '/gpu k8s label <cluster> k=v...',
      'merge labels into a cluster',
      '/gpu k8s label prod service.io/metrics-enabled=true',
    ),
    d('k8s.pools', '/gpu k8s pools <cluster>', 'list the node pools of a cluster', '/gpu k8s pools prod'),
    d(
      'k8s.pool.add',
      '/gpu k8s pool add <cluster> [<name> <type> <count>]',
      'add a node pool; with only the cluster a form',
      '/gpu k8s pool add prod gpu-a h100-hgx-80gb.8x 2',
    ),
    d(
      'k8s.pool.rm',
      '/gpu k8s pool rm <cluster> <pool>',
      'delete a node pool',
      '/gpu k8s pool rm prod gpu-a',
    ),
    d(
      'k8s.kubeconfig',
      '/gpu k8s kubeconfig <cluster>',
      'send you the kubeconfig as a file in a direct message',
      '/gpu k8s kubeconfig prod',
    ),
  ],
  slurm: [
    d('slurm.ls', '/gpu slurm ls', 'list Slurm clusters', '/gpu slurm ls'),
    d(
      'slurm.show',
      '/gpu slurm show <cluster>',
      'details of one cluster and its login nodes',
      '/gpu slurm show hpc',
    ),
    d(
      'slurm.create',
      '/gpu slurm create [<name>]',
      'create a cluster; with no arguments a form',
      '/gpu slurm create hpc',
    ),
    d('slurm.rm', '/gpu slurm rm <cluster>', 'delete a cluster', '/gpu slurm rm hpc'),
    d(
      'slurm.pools',
      '/gpu slurm pools <cluster>',
      'list the node pools of a cluster',
      '/gpu slurm pools hpc',
    ),
    d(
      'slurm.pool.add',
      '/gpu slurm pool add <cluster> [<name> <type> <count>]',
      'add a node pool; with only the cluster a form',
      '/gpu slurm pool add hpc compute a100-sxm4-80gb.4x 4',
    ),
    d(
      'slurm.pool.rm',
      '/gpu slurm pool rm <cluster> <pool>',
      'delete a node pool',
      '/gpu slurm pool rm hpc compute',
    ),
    d('slurm.users', '/gpu slurm users <cluster>', 'list the users of a cluster', '/gpu slurm users hpc'),
    d(
      'slurm.adduser',
      '/gpu slurm adduser <cluster> [--sudo] [--username U] [--form]',
      'add yourself with the SSH keys you added; the username comes from your Slack profile unless given; --form opens a form',
      '/gpu slurm adduser hpc --username ada',
    ),
    d(
      'slurm.rmuser',
      '/gpu slurm rmuser <cluster> <user>',
      'remove a user from a cluster',
      '/gpu slurm rmuser hpc ada',
    ),
    d(
      'slurm.sudo',
      '/gpu slurm sudo <cluster> <user> on|off',
      "grant or revoke a user's sudo",
      '/gpu slurm sudo hpc ada on',
    ),
  ],
  observe: [
    d(
      'metrics',
      '/gpu metrics <instance> [--range 1h]',
      'chart of GPU use of an instance over a range (default 1h)',
      '/gpu metrics train-01 --range 6h',
    ),
    d(
      'metrics.query',
      '/gpu metrics query <promql> [--range 1h]',
      'chart of any PromQL expression (the rest of the line)',
      '/gpu metrics query avg(DCGM_FI_DEV_GPU_UTIL) --range 1d',
    ),
    d(
      'watch',
      '/gpu watch [on|off]',
      'post state changes and idle-GPU alerts in this channel, or show whether it does',
      '/gpu watch on',
    ),
    d('jobs', '/gpu jobs', "this channel's recent jobs and their state", '/gpu jobs'),
    d('approvals', '/gpu approvals', 'requests waiting for an approver', '/gpu approvals'),
    d('waitlist', '/gpu waitlist', "this channel's capacity waitlist", '/gpu waitlist'),
    d(
      'waitlist.add',
      '/gpu waitlist <type> [<count>]',
      'be told when this many machines of a type are free (default 1)',
      '/gpu waitlist h100-hgx-80gb.8x 2',
    ),
    d('waitlist.rm', '/gpu waitlist rm <id>', 'leave the waitlist', '/gpu waitlist rm w-3f9a'),
    d('audit', '/gpu audit [n]', 'the last n actions (default 20, at most 500)', '/gpu audit 50'),
  ],
};

export const ALL_SUBCOMMAND_DOCS: readonly SubcommandDoc[] = GROUPS.flatMap((g) => SUBCOMMAND_DOCS[g.key]);

export function docFor(kind: GpuCommandKind): SubcommandDoc {
  const doc = ALL_SUBCOMMAND_DOCS.find((x) => x.kind === kind);
  if (!doc) throw new Error(`no usage documented for ${kind}`);
  return doc;
}
