import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  type GpuopsProcess,
  spawnGpuops,
  spawnNode,
  spawnScript,
} from '../../test/support/gpuops-process.js';

// Which build of gpuops and of its baselines a benchmark runs. The source build is what a checkout
// runs (`node bin/gpuops.js`, which loads src/ through tsx; the baselines through tsx too); the
// production build is what the image runs: `npm run build`'s dist/ under plain node, against the
// baselines compiled the same way by tsc (bench/tsconfig.baselines.json, into tmp/bench-build/).

export interface BenchBuild {
  /** 'tsx' (the sources) or 'dist' (compiled). */
  readonly name: 'tsx' | 'dist';
  /** gpuops with these arguments (`start`, `web`). */
  gpuops(args: readonly string[], env: Readonly<Record<string, string>>): GpuopsProcess;
  /** The gpuops in another folder (its src/, or its dist/ for the production build), the same way. */
  gpuopsAt(root: string, args: readonly string[], env: Readonly<Record<string, string>>): GpuopsProcess;
  /** A baseline by its TypeScript path, e.g. bench/support/bolt-add.ts. */
  script(path: string, env: Readonly<Record<string, string>>): GpuopsProcess;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
/**
 * BENCH_GPUOPS_ROOT: another gpuops to measure against the same baselines, e.g. an earlier commit's
 * src/ (`git archive <commit> src | tar -x -C tmp/before`) and its dist/ (`tsc -p` it there), for a
 * before/after in one run. Inside this checkout (tmp/), so its imports find these node_modules.
 */
const other = process.env.BENCH_GPUOPS_ROOT;

export const SOURCE_BUILD: BenchBuild = {
  name: 'tsx',
  gpuops: other ? (args, env) => spawnScript(join(other, 'src', 'cli.ts'), env, args) : spawnGpuops,
  gpuopsAt: (folder, args, env) => spawnScript(join(folder, 'src', 'cli.ts'), env, args),
  script: (path, env) => spawnScript(path, env),
};

/** Builds dist/ and the compiled baselines, then runs them with node alone. */
export async function productionBuild(): Promise<BenchBuild> {
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  if (!other) await run(tsc, ['-p', 'tsconfig.build.json'], { cwd: root });
  await run(tsc, ['-p', 'bench/tsconfig.baselines.json'], { cwd: root });
  const cli = join(other ?? root, 'dist', 'cli.js');
  return {
    name: 'dist',
    gpuops: (args, env) => spawnNode(cli, args, env),
    gpuopsAt: (folder, args, env) => spawnNode(join(folder, 'dist', 'cli.js'), args, env),
    script: (path, env) => spawnNode(join('tmp/bench-build', path.replace(/\.ts$/, '.js')), [], env),
  };
}
