import { toImageRef } from '../../cloud/rules.js';
import {
  defineStep,
  type StepInputs,
  StepOutputError,
  type StepOutputs,
  type StepSpec,
} from './step-spec.js';

// The Workflow Builder custom steps gpuops offers (docs/workflows.md). Each runs one /gpu command as a
// job, through the same policy, approval and audit trail; the manifest's `functions` are made from
// this list (step-manifest.ts). A callback_id is stored in workflows people built: never rename one.

const str = (inputs: StepInputs, key: string): string | undefined => {
  const value = inputs[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};
const text = (data: Readonly<Record<string, unknown>>, key: string): string =>
  typeof data[key] === 'string' ? data[key] : '';

const instanceOutputs = {
  instance_name: {
    type: 'string',
    title: 'Instance name',
    description: 'The name of the instance.',
    required: true,
  },
  instance_id: {
    type: 'string',
    title: 'Instance id',
    description: "The cloud's id of the instance.",
    required: true,
  },
  state: {
    type: 'string',
    title: 'State',
    description: 'Its state once the step ended, e.g. running or stopped.',
    required: true,
  },
  ip_address: {
    type: 'string',
    title: 'IP address',
    description: 'Where to connect, while it runs (absent otherwise).',
  },
} as const;

function instanceOutputsOf(data: Readonly<Record<string, unknown>>): StepOutputs {
  return {
    instance_name: text(data, 'instance'),
    instance_id: text(data, 'instanceId'),
    state: text(data, 'state'),
    ...(typeof data.ip === 'string' ? { ip_address: data.ip } : {}),
  };
}

const instanceInput = {
  instance: {
    type: 'string',
    title: 'Instance',
    description:
      'The name or id of the instance, in the project of the progress channel (or the default project).',
    required: true,
    hint: 'train-01',
  },
} as const;

const createInstance = defineStep({
  callbackId: 'create_instance',
  title: 'Create a GPU instance',
  description: 'Creates a machine and waits until it runs. A costly type waits for an approver first.',
  showsProgress: true,
  inputs: {
    name: {
      type: 'string',
      title: 'Name',
      description: 'A name for the new instance.',
      required: true,
      hint: 'train-01',
    },
    instance_type: {
      type: 'string',
      title: 'Instance type',
      description: 'The type to create, as /gpu capacity lists it.',
      required: true,
      hint: 'h100-hgx-80gb.1x',
    },
    image: {
      type: 'string',
      title: 'Image',
      description: "The OS image; empty for the cloud's default.",
      hint: 'ubuntu22.04',
    },
    preemptible: {
      type: 'boolean',
      title: 'Preemptible',
      description: 'Cheaper, but the cloud may take it back.',
    },
  },
  outputs: instanceOutputs,
  command: (inputs) => {
    const image = str(inputs, 'image');
    return {
      kind: 'create',
      modal: false,
      name: str(inputs, 'name') ?? '',
      type: str(inputs, 'instance_type') ?? '',
      ...(image !== undefined ? { image: toImageRef(image) } : {}),
      preemptible: inputs.preemptible === true,
      ephemeral: false,
      filesystems: [],
      tags: {},
    };
  },
  outputsOf: instanceOutputsOf,
});

const startInstance = defineStep({
  callbackId: 'start_instance',
  title: 'Start a GPU instance',
  description: 'Starts a stopped machine and waits until it runs.',
  showsProgress: true,
  inputs: instanceInput,
  outputs: instanceOutputs,
  command: (inputs) => ({ kind: 'start', instance: str(inputs, 'instance') ?? '' }),
  outputsOf: instanceOutputsOf,
});

const stopInstance = defineStep({
  callbackId: 'stop_instance',
  title: 'Stop a GPU instance',
  description: 'Stops a running machine and waits until it is stopped.',
  showsProgress: true,
  inputs: instanceInput,
  outputs: instanceOutputs,
  command: (inputs) => ({ kind: 'stop', instance: str(inputs, 'instance') ?? '' }),
  outputsOf: instanceOutputsOf,
});

const addSlurmUser = defineStep({
  callbackId: 'add_slurm_user',
  title: 'Add a Slurm user from an SSH key',
  description:
    'Adds the person to a Slurm cluster with the public key given, under a username from their Slack name unless one is given.',
  showsProgress: true,
  inputs: {
    cluster: {
      type: 'string',
      title: 'Cluster',
      description: 'The name or id of the Slurm cluster.',
      required: true,
      hint: 'hpc',
    },
    public_key: {
      type: 'string',
      title: 'SSH public key',
      description: 'One OpenSSH public key (ssh-ed25519 AAAA… or ssh-rsa AAAA…), e.g. from a form.',
      required: true,
    },
    username: {
      type: 'string',
      title: 'Username',
      description: 'The POSIX username; empty to make one from their Slack name.',
      hint: 'ada',
    },
    sudo: { type: 'boolean', title: 'Sudo', description: 'Give the user sudo on the cluster.' },
  },
  outputs: {
    username: {
      type: 'string',
      title: 'Username',
      description: 'The POSIX username on the cluster.',
      required: true,
    },
    cluster: { type: 'string', title: 'Cluster', description: 'The name of the cluster.', required: true },
    login_command: {
      type: 'string',
      title: 'Login line',
      description: 'What to type to log in, e.g. ssh ada@203.0.113.10.',
      required: true,
    },
  },
  command: (inputs) => {
    const username = str(inputs, 'username');
    return {
      kind: 'slurm.adduser',
      cluster: str(inputs, 'cluster') ?? '',
      sudo: inputs.sudo === true,
      publicKey: str(inputs, 'public_key') ?? '',
      ...(username !== undefined ? { username } : {}),
    };
  },
  outputsOf: (data) => ({
    username: text(data, 'username'),
    cluster: text(data, 'cluster'),
    login_command: text(data, 'login'),
  }),
});

interface TypeFact {
  readonly name: string;
  readonly offered: boolean;
  readonly capacity?: number;
}

function typeFacts(data: Readonly<Record<string, unknown>>): TypeFact[] {
  return Array.isArray(data.types) ? (data.types as TypeFact[]) : [];
}

function capacityLine(t: TypeFact): string {
  if (t.capacity !== undefined)
    return `${t.name}: ${t.capacity > 0 ? `${t.capacity} available` : 'none available'}`;
  return `${t.name}: ${t.offered ? 'offered' : 'not offered now'}`;
}

const getCapacity = defineStep({
  callbackId: 'get_capacity',
  title: 'Get GPU capacity',
  description: 'What can be ordered now, for every instance type or one.',
  showsProgress: false,
  inputs: {
    instance_type: {
      type: 'string',
      title: 'Instance type',
      description: 'Only this type; empty for all of them.',
      hint: 'h100-hgx-80gb.8x',
    },
  },
  outputs: {
    summary: {
      type: 'string',
      title: 'Summary',
      description: 'One line per instance type, ready to post.',
      required: true,
    },
    types_available: {
      type: 'integer',
      title: 'Types available',
      description: 'How many of the types asked about can be ordered now.',
      required: true,
    },
    machines_available: {
      type: 'integer',
      title: 'Machines available',
      description: 'Free machines of those types, where the cloud counts them (absent otherwise).',
    },
  },
  keeps: ['instance_type'],
  command: () => ({ kind: 'capacity' }),
  outputsOf: (data, inputs) => {
    const all = typeFacts(data);
    const wanted = str(inputs, 'instance_type');
    const types = wanted === undefined ? all : all.filter((t) => t.name === wanted);
    if (wanted !== undefined && types.length === 0) {
      const known = all.map((t) => t.name).slice(0, 12);
      throw new StepOutputError(
        `No instance type named ${wanted} is listed here. Use one of: ${known.join(', ') || 'none listed'}.`,
      );
    }
    const counted = types.filter((t) => t.capacity !== undefined);
    return {
      summary: types.map(capacityLine).join('\n') || 'No instance types are listed.',
      types_available: types.filter((t) => t.offered).length,
      ...(counted.length > 0
        ? { machines_available: counted.reduce((n, t) => n + (t.capacity ?? 0), 0) }
        : {}),
    };
  },
});

/** Every step, in the order Workflow Builder lists them. */
export const STEPS: readonly StepSpec[] = [
  createInstance,
  startInstance,
  stopInstance,
  addSlurmUser,
  getCapacity,
];

export function stepFor(callbackId: string): StepSpec | undefined {
  return STEPS.find((s) => s.callbackId === callbackId);
}
