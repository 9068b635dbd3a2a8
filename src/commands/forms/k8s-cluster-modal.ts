import { checkK8sVersion } from '../../cloud/rules.js';
import { checkName } from '../value-rules.js';
import {
  complete,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  nameInput,
  readRequired,
  textInput,
} from './form-kit.js';

// `/gpu k8s create` with no arguments: the cluster's name and Kubernetes version.

export const K8S_CREATE_BLOCKS = { name: 'name', version: 'version' } as const;
const B = K8S_CREATE_BLOCKS;

function view(ctx: FormContext) {
  return formModal(
    k8sClusterForm,
    ctx.metadata,
    [
      nameInput(B.name, 'Cluster name', 'e.g. prod'),
      textInput(B.version, 'Kubernetes version', {
        placeholder: 'e.g. v1.31',
        hint: 'v, then major.minor, optionally .patch: v1.31 or v1.31.2.',
        maxLength: 32,
      }),
    ],
    'Create',
  );
}

function read(values: FormValues, _ctx: FormContext) {
  const errors: Record<string, string> = {};
  const name = readRequired(values, B.name, errors, 'Give the cluster a name', checkName);
  const version = readRequired(values, B.version, errors, 'Give a version such as v1.31', checkK8sVersion);
  if (Object.keys(errors).length > 0) return { ok: false as const, errors };
  return complete(
    { modal: false, name: name!, version: version! },
    {},
    { name: B.name, version: B.version },
    B.name,
  );
}

export const k8sClusterForm: FormSpec = {
  title: 'Create a K8s cluster',
  needsCatalog: false,
  firstBlock: B.name,
  view,
  read,
};
