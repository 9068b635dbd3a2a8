import { checkName } from '../../command/value-rules.js';
import {
  complete,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  readText,
  textInput,
} from './form-kit.js';

// `/gpu slurm create` with no arguments: the cluster's name.

export const SLURM_CREATE_BLOCKS = { name: 'name' } as const;

function view(ctx: FormContext) {
  return formModal(
    slurmClusterForm,
    ctx.metadata,
    [textInput(SLURM_CREATE_BLOCKS.name, 'Cluster name', { placeholder: 'e.g. hpc', maxLength: 63 })],
    'Create',
  );
}

function read(values: FormValues, ctx: FormContext) {
  const name = readText(values, SLURM_CREATE_BLOCKS.name);
  const problem = name === undefined ? 'Give the cluster a name' : checkName(name);
  if (problem) return { ok: false as const, errors: { [SLURM_CREATE_BLOCKS.name]: `${problem}.` } };
  return complete(
    { kind: 'slurm.create', modal: false, name: name! },
    {},
    ctx,
    { name: SLURM_CREATE_BLOCKS.name },
    SLURM_CREATE_BLOCKS.name,
  );
}

export const slurmClusterForm: FormSpec = {
  kind: 'slurm.create',
  title: 'Create a Slurm cluster',
  needsCatalog: false,
  firstBlock: SLURM_CREATE_BLOCKS.name,
  view,
  read,
};
