import { afterEach, describe, expect, it } from 'vitest';
import { type GpuopsProcess, spawnGpuops } from '../support/gpuops-process.js';

// Every answer the command line gives to a line it refuses, reviewed once as a whole (as
// test/commands/error-wording.test.ts does for /gpu): typos in commands, options a command lacks, bad
// values, missing arguments, files it cannot read, and the settings `start` and `snapshot` miss when
// nothing is set. Each names what is wrong and what to do next, and exits 2 (usage) or 1 (settings).

const running: GpuopsProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});

const BAD_LINES: readonly string[][] = [
  ['strat'],
  ['frobnicate'],
  ['start'],
  ['worker'],
  ['start', '--port', '8080'],
  ['sim', '--shape', 'D'],
  ['sim', '--port', 'abc'],
  ['sim', '--port'],
  ['sim', '--clock', 'fast'],
  ['sim', '--seed', '-1'],
  ['snapshot'],
  ['snapshot', 'train-1'],
  ['snapshot', 'train-1', 'extra', '-o', 'x.png'],
  ['snapshot', 'train-1', '-o', 'x.png', '--metric', 'heat'],
  ['snapshot', 'train-1', '-o', 'x.png', '--range', '40d'],
  ['snapshot', 'train-1', '-o', 'x.png', '--end', 'yesterday'],
  ['snapshot', 'train-1', '-o', 'x.png'],
  ['demo', '--bogus'],
  ['demo', '--shape', 'D'],
  ['demo', '--timeout', '0'],
  ['demo', '--script', 'no-such-script.txt'],
  ['demo', '--script', 'docs'],
  ['audit'],
  ['audit', 'frob'],
  ['audit', 'export', '--bogus'],
];

/** What a person reads after the line: standard error, with the parts that differ per run left out. */
async function answer(args: readonly string[]): Promise<{ code: number | null; text: string }> {
  const child = spawnGpuops(args, {});
  running.push(child);
  const { code } = await child.exited;
  return { code, text: child.stderr().trimEnd() };
}

describe('what the command line answers to a line it refuses', () => {
  it('names what is wrong and what to do next, for each line (update with vitest -u after reading)', async () => {
    const answers: string[] = [];
    const unhelpful: string[] = [];
    // A few at a time: each is a whole node process.
    const results: { code: number | null; text: string }[] = [];
    for (let i = 0; i < BAD_LINES.length; i += 4) {
      results.push(...(await Promise.all(BAD_LINES.slice(i, i + 4).map(answer))));
    }
    for (const [i, args] of BAD_LINES.entries()) {
      const { code, text } = results[i]!;
      const line = `gpuops ${args.join(' ')}`;
      answers.push(`${line}  (exit ${code})\n${text.replace(/^/gm, '    ')}`);
      const first = text.split('\n')[0] ?? '';
      if (
        (code !== 1 && code !== 2) ||
        !/^gpuops( [a-z]+)?: /.test(first) ||
        !/[.?:]$/.test(first) ||
        /\bundefined\b|\[object|NaN|Error:|\n\s+at /.test(text) ||
        // The next step: a command to run, a file to read, or what to give instead.
        !/\b(Run|run|See|Give|Did you mean|must be|takes|needs|say what|the one action)\b/.test(text)
      ) {
        unhelpful.push(`${line} → ${text}`);
      }
    }
    expect(unhelpful).toEqual([]);
    await expect(`${answers.join('\n')}\n`).toMatchFileSnapshot('./__snapshots__/cli-wording.txt');
  }, 120_000);
});
