// The numbered targets of docs/performance.md (issue 16) as `npm run bench` reports them: each a ratio
// or a figure against its bound, measured in the same run as its baseline.

export interface Target {
  /** Which target, numbered as in docs/performance.md, and what it compares. */
  readonly name: string;
  readonly value: number;
  /** The bound, e.g. "<= 1.1" (a ratio to the baseline, unless the name gives a unit). */
  readonly target: string;
  readonly met: boolean;
}

export function atMost(name: string, value: number, bound: number): Target {
  return { name, value, target: `<= ${bound}`, met: Number.isFinite(value) && value <= bound };
}

export function atLeast(name: string, value: number, bound: number): Target {
  return { name, value, target: `>= ${bound}`, met: Number.isFinite(value) && value >= bound };
}

export function equalTo(name: string, value: number, bound: number): Target {
  return { name, value, target: `= ${bound}`, met: value === bound };
}

/** One line per target, for the console. */
export function formatTargets(targets: readonly Target[]): string {
  const width = Math.max(...targets.map((t) => t.name.length));
  return targets
    .map(
      (t) =>
        `${t.met ? 'met ' : 'MISS'}  ${t.name.padEnd(width)}  ${String(t.value).padStart(9)}  ${t.target}`,
    )
    .join('\n');
}
