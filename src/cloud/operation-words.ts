import { OPERATIONS, type Operation } from './routes.js';

// Operations in words, for people: users never see an operation id ('deleteFilesystem'), they read
// "delete filesystems". Pure.

const PROPER: Readonly<Record<string, string>> = {
  k8s: 'Kubernetes',
  slurm: 'Slurm',
  ssh: 'SSH',
  gpu: 'GPU',
};

/** The platform API's operations, which the infrastructure route table does not hold. */
const PLATFORM: Readonly<Record<string, string>> = {
  listSshKeys: 'list SSH keys',
  addSshKey: 'add SSH keys',
  deleteSshKey: 'delete SSH keys',
  listConfigurations: 'list GPU configurations',
  createInstanceByGpuType: 'create instances by GPU type',
};

/** 'deleteFilesystem' → "delete filesystems", 'listK8sClusters' → "list Kubernetes clusters". */
export function operationInWords(op: Operation): string {
  const [verb, ...rest] = op.split(/(?=[A-Z])/).map((w) => PROPER[w.toLowerCase()] ?? w.toLowerCase());
  const object = rest.join(' ');
  const plural = verb === 'list' || object.endsWith('s') || object === 'capacity' ? object : `${object}s`;
  return `${verb === 'get' ? 'look up' : verb} ${plural}`;
}

/** The words for any cloud or platform operation id, or undefined when `name` is none. */
export function operationPhrase(name: string): string | undefined {
  if (PLATFORM[name]) return PLATFORM[name];
  return (OPERATIONS as readonly string[]).includes(name) ? operationInWords(name as Operation) : undefined;
}

/**
 * A cloud error's sentence with its leading operation id put in words:
 * "listInstances failed with HTTP 500 — …" → "List instances: failed with HTTP 500 — …".
 */
export function inWords(message: string): string {
  const match = /^([a-z][A-Za-z0-9]*)(:?) (.*)$/s.exec(message);
  const phrase = match ? operationPhrase(match[1]!) : undefined;
  if (!match || !phrase) return message;
  return `${phrase.charAt(0).toUpperCase()}${phrase.slice(1)}: ${match[3]}`;
}
