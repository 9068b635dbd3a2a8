import { parse as parseYaml } from 'yaml';
import { checkLabelKey, checkLabelValue, checkName } from '../value-rules.js';
import {
  complete,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  nameInput,
  readMultiline,
  readPairs,
  readRequired,
  textInput,
} from './form-kit.js';

// `/gpu k8s register`: the name, the kubeconfig and labels. The kubeconfig is a secret: it goes to the
// listener to seal, never into the command. Slack caps a text field at 3,000 characters, so a longer
// kubeconfig is pasted over up to three fields, split at line breaks, and joined back here.

export const REGISTER_BLOCKS = {
  name: 'name',
  kubeconfig: 'kubeconfig',
  kubeconfig2: 'kubeconfig_2',
  kubeconfig3: 'kubeconfig_3',
  labels: 'labels',
} as const;
const B = REGISTER_BLOCKS;

/** Null when the text reads as a kubeconfig (YAML with at least one cluster), else what is wrong. */
export function checkKubeconfig(text: string): string | null {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return 'This is not valid YAML; paste the whole kubeconfig, split only at line breaks';
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return 'A kubeconfig is a YAML document with apiVersion, clusters and users';
  }
  const clusters = (doc as { clusters?: unknown }).clusters;
  if (!Array.isArray(clusters) || clusters.length === 0) {
    return 'This kubeconfig names no cluster (its clusters list is missing or empty)';
  }
  return null;
}

function view(ctx: FormContext) {
  const secret =
    'Treated as a secret: sealed for at most a day until the job uses it, never shown in Slack, job data or logs.';
  return formModal(
    k8sRegisterForm,
    ctx.metadata,
    [
      context('Registers an existing Kubernetes cluster with the cloud from its kubeconfig.'),
      nameInput(B.name, 'Cluster name', 'e.g. on-prem'),
      textInput(B.kubeconfig, 'Kubeconfig', {
        multiline: true,
        placeholder: 'apiVersion: v1\nkind: Config\nclusters: …',
        hint: `Up to 3,000 characters here; paste the rest in the next fields, split at line breaks. ${secret}`,
      }),
      textInput(B.kubeconfig2, 'Kubeconfig, continued', { optional: true, multiline: true }),
      textInput(B.kubeconfig3, 'Kubeconfig, continued further', { optional: true, multiline: true }),
      textInput(B.labels, 'Labels', {
        optional: true,
        multiline: true,
        placeholder: 'service.io/metrics-enabled=true',
        hint: 'key=value, one a line.',
      }),
    ],
    'Register',
  );
}

function read(values: FormValues, _ctx: FormContext) {
  const errors: Record<string, string> = {};
  const name = readRequired(values, B.name, errors, 'Give the cluster a name', checkName);
  const parts = [B.kubeconfig, B.kubeconfig2, B.kubeconfig3]
    .map((block) => readMultiline(values, block))
    .filter((p): p is string => p !== undefined);
  const kubeconfig = parts.join('\n');
  if (parts.length === 0) errors[B.kubeconfig] = 'Paste the kubeconfig of the cluster.';
  else {
    const problem = checkKubeconfig(kubeconfig);
    if (problem) errors[B.kubeconfig] = `${problem}.`;
  }
  const labels = readPairs(readMultiline(values, B.labels), 'label', checkLabelKey, checkLabelValue);
  if ('error' in labels) errors[B.labels] = labels.error;
  if (Object.keys(errors).length > 0 || 'error' in labels) return { ok: false as const, errors };
  return complete(
    { modal: false, name: name!, labels: labels.pairs },
    { kubeconfig: `${kubeconfig}\n` },
    { name: B.name, labels: B.labels },
    B.name,
  );
}

export const k8sRegisterForm: FormSpec = {
  title: 'Register a K8s cluster',
  needsCatalog: false,
  firstBlock: B.name,
  view,
  read,
};
