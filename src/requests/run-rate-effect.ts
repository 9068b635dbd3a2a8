import { addsRunning, launchedType } from '../commands/effects.js';
import { effectsOf, type GpuCommand } from '../commands/registry.js';
import { type CostEstimate, estimateMachines, type PriceBook } from '../pricing/cost.js';

// The run rate a request adds, for budgets: what its spec's effects make run (a launch of count ×
// type, a start of a stopped machine, a copy of one), priced like its approval. A budget's admission
// asks this of every request before it is queued; one that makes nothing run adds nothing.

export interface RunRateEffect {
  /** The project the machines run in (the request's). */
  readonly projectId: string | undefined;
  /** Their instance type; undefined when the machine it starts or copies is not known here yet. */
  readonly instanceType: string | undefined;
  readonly machines: number;
  /** US dollars per hour it adds once running; undefined when the price cannot be worked out. */
  readonly perHour: number | undefined;
  /** The estimate behind it: its basis for a card, or why the price is unknown. */
  readonly estimate: CostEstimate;
}

export interface RunRateInput {
  readonly prices: PriceBook;
  readonly projectId?: string | undefined;
  /** The type of the machine the command acts on (a start, a copy), from a cached listing. */
  readonly targetType?: string | undefined;
}

/**
 * How much run rate ($/h) `command` adds, on which project and type; undefined when it makes nothing
 * run (a stop, a delete, a listing, a schedule made for later: its firings are requests of their own).
 */
export function runRateEffect(command: GpuCommand, input: RunRateInput): RunRateEffect | undefined {
  const effects = effectsOf(command);
  if (!addsRunning(effects)) return undefined;
  const machines = effects.launches?.count ?? 1;
  const instanceType = effects.launches ? launchedType(effects, input.targetType) : input.targetType;
  const what = effects.target?.instance ?? 'the machine';
  const estimate: CostEstimate = instanceType
    ? estimateMachines({ prices: input.prices, type: instanceType, machines })
    : { known: false, reason: `the type of ${what} is not known yet, so its price cannot be worked out` };
  return {
    projectId: input.projectId,
    instanceType,
    machines,
    perHour: estimate.known ? estimate.perHour : undefined,
    estimate,
  };
}
