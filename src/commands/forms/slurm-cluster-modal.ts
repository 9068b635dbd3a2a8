import { checkName } from '../value-rules.js';
import {
  complete,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  nameInput,
  readRequired,
} from './form-kit.js';

// `/gpu slurm create` with no arguments: the cluster's name.

export const SLURM_CREATE_BLOCKS = { name: 'name' } as const;

function view(ctx: FormContext) {
  return formModal(
    slurmClusterForm,
    ctx.metadata,
    [nameInput(SLURM_CREATE_BLOCKS.name, 'Cluster name', 'e.g. hpc')],
    'Create',
  );
}

function read(values: FormValues, _ctx: FormContext) {
  const errors: Record<string, string> = {};
  const name = readRequired(values, SLURM_CREATE_BLOCKS.name, errors, 'Give the cluster a name', checkName);
  if (name === undefined) return { ok: false as const, errors };
  return complete({ modal: false, name }, {}, { name: SLURM_CREATE_BLOCKS.name }, SLURM_CREATE_BLOCKS.name);
}

export const slurmClusterForm: FormSpec = {
  title: 'Create a Slurm cluster',
  needsCatalog: false,
  firstBlock: SLURM_CREATE_BLOCKS.name,
  view,
  read,
};
