import { readFileSync } from 'node:fs';

// Where a CPU profile's time goes, for docs/performance.md: `npx tsx bench/support/profile-summary.ts
// tmp/profiles/<pid>.cpuprofile [top]` prints self time by package (or gpuops folder) and the top functions.

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src|bench|test)\/([^/]+)/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url;
  return url;
}

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file!, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (const [i, id] of profile.samples.entries())
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const areas = new Map<string, number>();
const fns = new Map<string, number>();
for (const [id, t] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') continue;
  const a = area(url, functionName);
  areas.set(a, (areas.get(a) ?? 0) + t);
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + t);
}
const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)} %`;
process.stdout.write(
  `busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms\n\nself time by area\n`,
);
for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 25))
  process.stdout.write(`${pct(t)}  ${a}\n`);
process.stdout.write('\ntop functions (self)\n');
for (const [f, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, Number(topArg ?? 25)))
  process.stdout.write(`${pct(t)}  ${f}\n`);
