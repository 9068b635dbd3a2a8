import { z } from 'zod';
import { checkK8sVersion, K8S_VERSION_RULE } from '../../cloud/rules.js';
import { type ArgReader, shown } from '../arg-reader.js';
import { CLUSTER_ARG, clusterNeed, clusterRefers, onCluster, readCluster } from '../cluster-kit.js';
import { sharedClusterSpecs } from '../cluster-specs.js';
import { k8sClusterForm } from '../forms/k8s-cluster-modal.js';
import { k8sRegisterForm } from '../forms/k8s-register-modal.js';
import { k8sPoolForm } from '../forms/node-pool-modal.js';
import { labelMap, modal, name, ruled } from '../schema-kit.js';
import { defineCommand } from '../spec.js';
import { checkLabelKey, checkLabelValue } from '../value-rules.js';

const version = ruled(checkK8sVersion, K8S_VERSION_RULE);

const { ls, show, rm, pools, poolAdd, poolRm } = sharedClusterSpecs('k8s', {
  title: 'Kubernetes',
  show: { summary: 'details of one cluster', needs: ['getK8sCluster'] },
  poolForm: k8sPoolForm,
  example: { cluster: 'prod', pool: 'gpu-a', nodes: 'h100-hgx-80gb.8x 2' },
});

const create = defineCommand({
  kind: 'k8s.create',
  group: 'k8s',
  usage: '/gpu k8s create [<name> <version>]',
  summary: 'create a cluster; with no arguments a form',
  example: '/gpu k8s create prod v1.31',
  schema: z.discriminatedUnion('modal', [
    modal('k8s.create'),
    z.object({ kind: z.literal('k8s.create'), modal: z.literal(false), name, version }),
  ]),
  parse(r: ArgReader) {
    const a = r.args();
    if (a.positionals.length === 0) return { kind: 'k8s.create', modal: true };
    const cluster = r.name(a.positionals[0], 'a name for the cluster');
    const v = r.version(a.positionals[1]);
    r.noMore(a, 2);
    return { kind: 'k8s.create', modal: false, name: cluster, version: v };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['createK8sCluster'],
  creates: { what: 'Kubernetes clusters', list: 'listK8sClusters', remove: 'deleteK8sCluster' },
  form: { spec: k8sClusterForm },
});

/** `k8s register` is typed without arguments; its form fills these in (the kubeconfig travels sealed). */
const register = defineCommand({
  kind: 'k8s.register',
  group: 'k8s',
  usage: '/gpu k8s register',
  summary: 'register an existing cluster (opens a form for its kubeconfig)',
  example: '/gpu k8s register',
  schema: z.discriminatedUnion('modal', [
    modal('k8s.register'),
    z.object({ kind: z.literal('k8s.register'), modal: z.literal(false), name, labels: labelMap }),
  ]),
  parse(r: ArgReader) {
    const a = r.args();
    if (a.positionals.length > 0) {
      r.fail(`${r.label()} takes no arguments: it opens a form for the name, kubeconfig and labels`);
    }
    return { kind: 'k8s.register', modal: true };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['registerK8sCluster'],
  form: { spec: k8sRegisterForm },
  notes:
    "`/gpu k8s register` takes no arguments: a kubeconfig does not belong on a command line (it would sit in the channel's history), so it always opens a form.",
});

const upgrade = defineCommand({
  kind: 'k8s.upgrade',
  group: 'k8s',
  usage: '/gpu k8s upgrade <cluster> <version>',
  summary: 'move a cluster to another version',
  example: '/gpu k8s upgrade prod v1.32',
  schema: z.object({ kind: z.literal('k8s.upgrade'), cluster: name, version }),
  parse(r: ArgReader) {
    const a = r.args();
    const cluster = readCluster(r, a.positionals);
    const v = r.version(a.positionals[1]);
    r.noMore(a, 2);
    return { kind: 'k8s.upgrade', cluster, version: v };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['updateK8sCluster'],
  refers: (c) => clusterRefers('k8s', c.cluster),
  needsFor: (c) => clusterNeed('k8s', c.cluster),
});

const label = defineCommand({
  kind: 'k8s.label',
  group: 'k8s',
  usage: '/gpu k8s label <cluster> k=v...',
  summary: 'merge labels into a cluster',
  example: '/gpu k8s label prod service.io/metrics-enabled=true',
  schema: z.object({
    kind: z.literal('k8s.label'),
    cluster: name,
    labels: labelMap.refine((v) => Object.keys(v).length > 0, { error: 'at least one label' }),
  }),
  parse(r: ArgReader) {
    const a = r.args();
    const cluster = readCluster(r, a.positionals);
    const pairs = a.positionals.slice(1);
    if (pairs.length === 0) r.fail(`${r.label()} needs at least one label as key=value after the cluster`);
    const labels: Record<string, string> = {};
    for (const text of pairs) {
      const [key, value] = r.pair(text, 'A label', checkLabelKey, checkLabelValue);
      if (Object.hasOwn(labels, key)) r.fail(`The label ${shown(key)} was given twice; give each key once`);
      labels[key] = value;
    }
    return { kind: 'k8s.label', cluster, labels };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['updateK8sCluster'],
  refers: (c) => clusterRefers('k8s', c.cluster),
  needsFor: (c) => clusterNeed('k8s', c.cluster),
});

const kubeconfig = defineCommand({
  kind: 'k8s.kubeconfig',
  group: 'k8s',
  usage: '/gpu k8s kubeconfig <cluster>',
  summary: 'send you the kubeconfig as a file in a direct message',
  example: '/gpu k8s kubeconfig prod',
  schema: onCluster('k8s.kubeconfig'),
  parse: (r) => ({ kind: 'k8s.kubeconfig', cluster: r.onlyName(CLUSTER_ARG) }),
  delivery: 'dm',
  operationClass: 'operate',
  needs: ['getKubeconfig'],
  refers: (c) => clusterRefers('k8s', c.cluster),
  needsFor: (c) => clusterNeed('k8s', c.cluster),
});

export const specs = [
  ls,
  show,
  create,
  register,
  rm,
  upgrade,
  label,
  pools,
  poolAdd,
  poolRm,
  kubeconfig,
] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = {
  kubernetes: 'k8s',
  kube: 'k8s',
  k8: 'k8s',
  pool: 'pools',
};
