import { type CostEstimate, estimateMachines } from '../pricing/cost.js';
import type { CommandCost, CostInput, Effects, Reference } from './spec.js';

// What follows from a command's declared effects (spec.ts, `Effects`), pure: the registry applies
// these to every command alike, so a new subcommand gets its checks, price and lease from its spec.

/** The names its effects give that must exist or be sold: the target machine, the launched type. */
export function effectReferences(effects: Effects): Reference[] {
  const type = effects.launches?.type;
  return [
    ...(effects.target ? [{ what: 'instance' as const, ref: effects.target.instance }] : []),
    ...(type !== undefined ? [{ what: 'type' as const, ref: type }] : []),
  ];
}

/** True when it makes machines run: a launch, or a start of a stopped machine. */
export function addsRunning(effects: Effects): boolean {
  return effects.launches !== undefined || effects.target?.does === 'starts';
}

/** True when its price is worth reading: it makes machines run or stops one. */
export function changesSpending(effects: Effects): boolean {
  return addsRunning(effects) || effects.target?.does === 'stops';
}

/**
 * The one machine it changes, by name: the target it starts, stops or deletes, or the machine it
 * launches by name. Requests on it run in the order accepted (docs/reliability.md).
 */
export function changedMachine(effects: Effects): string | undefined {
  return effects.target?.does !== undefined ? effects.target.instance : effects.launches?.instance;
}

/** The machine that gets a lease when it runs: the one it launches by name, or the one it starts. */
export function leasedMachine(effects: Effects): string | undefined {
  return (
    effects.launches?.instance ?? (effects.target?.does === 'starts' ? effects.target.instance : undefined)
  );
}

/**
 * The type a launch makes: its own, or the target's (`targetType`, from a cached listing) when it
 * copies the machine it names.
 */
export function launchedType(effects: Effects, targetType: string | undefined): string | undefined {
  return effects.launches ? (effects.launches.type ?? targetType) : undefined;
}

const unknownType = (what: string): CostEstimate => ({
  known: false,
  reason: `the type of ${what} is not known yet, so its price cannot be worked out`,
});

/**
 * The price per hour its effects give: a launch's type × count running, a start's machine running, a
 * stop's machine stopped. Undefined for a command that changes no spending.
 */
export function costOfEffects(effects: Effects, { prices, targetType }: CostInput): CommandCost | undefined {
  const { launches, target } = effects;
  const lasts = effects.costLasts;
  if (launches) {
    const type = launches.type ?? targetType;
    return {
      estimate: type
        ? estimateMachines({ prices, type, machines: launches.count })
        : unknownType(target?.instance ?? 'the machine it copies'),
      adds: true,
      label: lasts ?? 'while it runs',
    };
  }
  if (target?.does === 'starts' || target?.does === 'stops') {
    const state = target.does === 'starts' ? 'running' : 'stopped';
    return {
      estimate: targetType
        ? estimateMachines({ prices, type: targetType, state })
        : unknownType(target.instance),
      adds: state === 'running',
      label: lasts ?? (state === 'running' ? 'while it runs' : 'while it stays stopped'),
    };
  }
  return undefined;
}
