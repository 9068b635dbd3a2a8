import { checkSshPublicKey, checkTagKey } from '../../cloud/rules.js';
import type { Shape } from '../../cloud/shape.js';
import {
  type Fields,
  invalid,
  optionalString,
  optionalStringMap,
  requiredInteger,
  requiredString,
  requiredStringArray,
} from '../read-fields.js';
import type { ClusterKind, PoolInput, SimClusters, SimProject, SimState } from '../sim-state.js';

// What every route handler of the simulated infrastructure API shares: the call, the reply, and the
// readers of paths and bodies.

export interface Call {
  readonly shape: Shape;
  readonly state: SimState;
  readonly project: SimProject | undefined;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly query: URLSearchParams;
}

export type Reply =
  | { readonly json: unknown }
  | { readonly empty: true }
  | { readonly text: string; readonly contentType: string; readonly headers: Record<string, string> };

export type Handler = (call: Call) => Reply;

export const LABEL_RULE = (key: string): string | null =>
  key.length >= 1 && key.length <= 253 && !/\s/.test(key)
    ? null
    : 'a label key has 1 to 253 characters and no spaces';

export const json = (value: unknown): Reply => ({ json: value });
export const EMPTY: Reply = { empty: true };

export function projectOf(call: Call): SimProject {
  // Every route with projectHeader gets one resolved before its handler runs.
  if (!call.project) throw new Error(`route without a resolved project`);
  return call.project;
}

export function param(call: Call, name: string): string {
  const v = call.params[name];
  if (v === undefined) throw new Error(`route template lacks {${name}}`);
  return v;
}

export function readTags(o: Fields): Record<string, string> {
  return optionalStringMap(o, 'tags', checkTagKey) ?? {};
}

export function readPool(o: Fields, withVersion: boolean): PoolInput {
  const name = requiredString(o, 'name');
  const type = requiredString(o, 'type', 'an instance type such as h100-hgx-80gb.8x');
  const count = requiredInteger(o, 'count', 1, 1000);
  const version = withVersion ? optionalString(o, 'version') : undefined;
  return { name, type, count, ...(version !== undefined ? { version } : {}) };
}

export function readSshKeys(o: Fields): string[] {
  const keys = requiredStringArray(o, 'sshKeys', 'OpenSSH public keys');
  if (keys.length === 0) throw invalid('sshKeys', 'needs at least one OpenSSH public key');
  keys.forEach((key, i) => {
    const broken = checkSshPublicKey(key);
    if (broken) throw invalid(`sshKeys[${i}]`, broken);
  });
  return keys;
}

/** The cluster of `kind` that the path parameter `name` names, in the call's project. */
export function clusterOf<K extends ClusterKind>(call: Call, kind: K, name = 'id'): SimClusters[K] {
  return call.state.getCluster(projectOf(call), kind, param(call, name));
}
