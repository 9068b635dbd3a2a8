import type { GpuCommand } from '../../commands/command-schema.js';
import { createInstanceForm } from './create-instance-modal.js';
import type { FormSpec } from './form-kit.js';
import { k8sClusterForm } from './k8s-cluster-modal.js';
import { k8sRegisterForm } from './k8s-register-modal.js';
import type { FormKind, ModalMetadata } from './modal-metadata.js';
import { k8sPoolForm, slurmPoolForm } from './node-pool-modal.js';
import { slurmClusterForm } from './slurm-cluster-modal.js';
import { slurmUserForm } from './slurm-user-modal.js';
import { sshKeyForm } from './ssh-key-modal.js';

// Every form by kind: what the listener opens for a command typed without arguments, and what the
// submission listener and the catalogue job look up from a view's metadata.

export const FORMS: Readonly<Record<FormKind, FormSpec>> = {
  create: createInstanceForm,
  'keys.add': sshKeyForm,
  'k8s.create': k8sClusterForm,
  'k8s.register': k8sRegisterForm,
  'k8s.pool.add': k8sPoolForm,
  'slurm.create': slurmClusterForm,
  'slurm.pool.add': slurmPoolForm,
  'slurm.adduser': slurmUserForm,
};

/** The form a command opens, with what it prefills; undefined when the command has its arguments. */
export function formFor(
  command: GpuCommand,
): { form: FormKind; prefill: Pick<ModalMetadata, 'cluster' | 'username' | 'sudo'> } | undefined {
  if (!('modal' in command) || command.modal !== true) return undefined;
  switch (command.kind) {
    case 'create':
    case 'keys.add':
    case 'k8s.create':
    case 'k8s.register':
    case 'slurm.create':
      return { form: command.kind, prefill: {} };
    case 'k8s.pool.add':
    case 'slurm.pool.add':
      return { form: command.kind, prefill: { cluster: command.cluster } };
    case 'slurm.adduser':
      return {
        form: 'slurm.adduser',
        prefill: {
          cluster: command.cluster,
          sudo: command.sudo,
          ...(command.username !== undefined ? { username: command.username } : {}),
        },
      };
    default:
      return undefined;
  }
}
