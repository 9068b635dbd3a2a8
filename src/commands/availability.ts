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

function firstOperation(requirement: Requirement): Operation {
  return typeof requirement === 'string' ? requirement : requirement[0]!;
}

/**
 * Null when the shape can serve the command, else one sentence saying which operation is missing,
 * e.g. "`/gpu fs rm` is not available in shape B: this cloud has no 'deleteFilesystem' operation."
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
    const base = `\`/gpu ${path}\` is not available in shape ${shape}: this cloud has no '${firstOperation(need.requirement)}' operation.`;
    return need.hint ? `${base} ${need.hint}` : base;
  }
  return null;
}

/** Kinds the shape lacks whatever the arguments, for help and docs. */
export function kindsMissingIn(shape: Shape, table: RouteTable = ROUTES[shape]): GpuCommandKind[] {
  return GPU_COMMAND_KINDS.filter(
    (kind) => !specFor(kind).needs.every((requirement) => satisfied(requirement, table)),
  );
}
