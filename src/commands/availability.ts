import { operationInWords } from '../cloud/operation-words.js';
import { type Operation, ROUTES, type RouteTable } from '../cloud/routes.js';
import type { Shape } from '../cloud/shape.js';
import {
  commandPath,
  GPU_COMMAND_KINDS,
  type GpuCommand,
  type GpuCommandKind,
  needsOf,
  specFor,
} from './registry.js';
import type { Requirement } from './spec.js';

export type { Requirement };

// Which infrastructure operations a command needs, checked against the shape's route table (the pure
// data module, never the cloud client). Platform API (keys, configs), metrics API and bot-only
// commands need none and are available in every shape.

/** Every operation the command may call, for workers and tests. */
export function operationsFor(command: GpuCommand): Requirement[] {
  return needsOf(command).map((need) => need.requirement);
}

function satisfied(requirement: Requirement, table: RouteTable): boolean {
  const any: readonly Operation[] = typeof requirement === 'string' ? [requirement] : requirement;
  return any.some((op) => table[op] !== undefined);
}

function firstMissing(requirement: Requirement, table: RouteTable): Operation {
  const any: readonly Operation[] = typeof requirement === 'string' ? [requirement] : requirement;
  return any.find((op) => table[op] === undefined) ?? any[0]!;
}

/** What anyone can do when the cloud's API lacks an operation. */
const INSTEAD = "Use the cloud's own console or CLI for it; `/gpu help` lists what works here.";

/**
 * Null when the cloud can serve the command, else what is missing in words and what to do instead,
 * e.g. "`/gpu fs rm` does not work with this cloud: its API cannot delete filesystems. Use …".
 * `table` defaults to the shape's built-in routes; pass the effective table when CLOUD_ROUTES adds some.
 */
export function unavailableIn(
  command: GpuCommand,
  shape: Shape,
  table: RouteTable = ROUTES[shape],
): string | null {
  for (const need of needsOf(command)) {
    if (satisfied(need.requirement, table)) continue;
    const path = need.path ?? commandPath(command.kind);
    const base = `\`/gpu ${path}\` does not work with this cloud: its API cannot ${operationInWords(firstMissing(need.requirement, table))}.`;
    return `${base} ${need.hint ?? INSTEAD}`;
  }
  return null;
}

/** Kinds the shape lacks whatever the arguments, for help and docs. */
export function kindsMissingIn(shape: Shape, table: RouteTable = ROUTES[shape]): GpuCommandKind[] {
  return GPU_COMMAND_KINDS.filter(
    (kind) => !specFor(kind).needs.every((requirement) => satisfied(requirement, table)),
  );
}

/** Why a kind is missing, in words ("list filesystems"), or undefined when the cloud serves it. */
export function missingAbility(kind: GpuCommandKind, table: RouteTable): string | undefined {
  const need = specFor(kind).needs.find((requirement) => !satisfied(requirement, table));
  return need === undefined ? undefined : operationInWords(firstMissing(need, table));
}

/**
 * For a command that creates something the cloud cannot list or delete: one sentence saying so and
 * what the person will need instead, shown before the request runs. Undefined otherwise.
 */
export function orphanWarning(kind: GpuCommandKind, table: RouteTable): string | undefined {
  const creates = specFor(kind).creates;
  if (!creates) return undefined;
  const cannot = [
    table[creates.list] === undefined ? 'list' : undefined,
    table[creates.remove] === undefined ? 'delete' : undefined,
  ].filter((w) => w !== undefined);
  if (cannot.length === 0) return undefined;
  return `:information_source: This cloud's API can create ${creates.what} but cannot ${cannot.join(' or ')} them: gpuops will tell you the new id, and you will need the cloud's own console to ${cannot.length === 2 ? 'see or delete' : cannot[0] === 'list' ? 'see' : 'delete'} it later.`;
}
