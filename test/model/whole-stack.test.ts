import fc from 'fast-check';
import { describe, it } from 'vitest';
import type { BotStack } from '../support/bot-stack.js';
import { allCommands } from './commands.js';
import { checkWorld, initialModel, type Real } from './model.js';
import { commandText } from './typed.js';
import { actor, quiescent, REQUEST_CHANNEL, startWorld } from './world.js';

// The model-based test of the whole stack (docs/testing.md, "Model"): random sequences of people typing
// commands, clicking approval cards, the clock passing and faults, run against the production wiring
// and checked against a small model after every step. A failure prints the seed and the shortest
// sequence fast-check shrank it to, one readable line per step.

// 80 runs of up to 20 steps take about three minutes on the 2-core machine (a stack each).
const RUNS = Number(process.env.GPUOPS_MODEL_RUNS ?? 80);
const SEED = process.env.GPUOPS_MODEL_SEED ? Number(process.env.GPUOPS_MODEL_SEED) : undefined;
const PATH = process.env.GPUOPS_MODEL_PATH;
// fast-check's record of which drawn steps ran, needed with the path to replay a shrunk sequence.
const REPLAY = process.env.GPUOPS_MODEL_REPLAY;
const MAX_STEPS = Number(process.env.GPUOPS_MODEL_STEPS ?? 20);

const VERBOSE = process.env.GPUOPS_MODEL_VERBOSE === '1';

/** The same steps, each written to stderr as it starts (and its failure as it happens) when GPUOPS_MODEL_VERBOSE=1. */
function traced<M extends object, R>(cmds: Iterable<fc.AsyncCommand<M, R>>): Iterable<fc.AsyncCommand<M, R>> {
  if (!VERBOSE) return cmds;
  process.stderr.write('-- a new sequence\n');
  return [...cmds].map((c) => ({
    check: (m: Readonly<M>) => c.check(m),
    run: async (m: M, r: R) => {
      process.stderr.write(`   ${String(c)}\n`);
      const started = Date.now();
      try {
        await c.run(m, r);
      } catch (err) {
        // Shrinking goes on after a failure: say at once what failed, and when.
        const what = err instanceof Error ? err.message : String(err);
        process.stderr.write(`   ✗ after ${Date.now() - started} ms: ${what}\n`);
        throw err;
      }
    },
    toString: () => String(c),
  }));
}

/** A fresh stack with demo-1 and demo-2 made by Ada through the bot. */
async function freshWorld(): Promise<BotStack> {
  const stack = await startWorld();
  try {
    const model = initialModel();
    const ada = actor('ada');
    for (const name of ['demo-1', 'demo-2']) {
      const { response } = await stack.command(commandText('create', name), {
        userId: ada.id,
        channelId: REQUEST_CHANNEL,
      });
      if (response.status !== 200) throw new Error(`setting up ${name}: HTTP ${response.status}`);
    }
    await quiescent(stack);
    await checkWorld(model, { stack });
  } catch (err) {
    await stack.close();
    throw err;
  }
  return stack;
}

// A path replays one sequence, but fast-check goes on through the rest of its shrink stream when that
// sequence passes (with a path it sets no limit on runs): a replay of seed 1334183498 ran its sibling
// sequences for over 400 s after its own had passed. Once the replayed sequence passes, the others are
// skipped (fc.pre, before a stack starts); when it fails, shrinking goes on from it as usual.
const replay = { runs: 0, passed: false };

describe('the whole stack against its model', () => {
  it('keeps every invariant over random people, doors and faults', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(allCommands, {
          maxCommands: MAX_STEPS,
          size: 'max',
          ...(REPLAY ? { replayPath: REPLAY } : {}),
        }),
        async (cmds) => {
          if (PATH) fc.pre(!replay.passed);
          replay.runs += 1;
          const stack = await freshWorld();
          try {
            await fc.asyncModelRun(
              () => ({ model: initialModel(), real: { stack } satisfies Real }),
              traced(cmds),
            );
            if (replay.runs === 1) replay.passed = true;
          } finally {
            await stack.close();
          }
        },
      ),
      {
        numRuns: RUNS,
        // A replay skips what follows its sequence when that passes (see replayedAndPassed).
        ...(PATH ? { maxSkipsPerRun: Number.MAX_SAFE_INTEGER } : {}),
        ...(SEED !== undefined ? { seed: SEED } : {}),
        ...(PATH ? { path: PATH } : {}),
        endOnFailure: false,
        // Shrinking restarts the stack for each candidate; bound it so a failure reports in minutes.
        interruptAfterTimeLimit: Number(process.env.GPUOPS_MODEL_TIME_LIMIT_MS ?? 20 * 60_000),
        markInterruptAsFailure: false,
        verbose: 1,
        reporter: (details) => {
          if (!details.failed) return;
          const shown = String(details.counterexample?.[0] ?? '');
          const replay = /replayPath="([^"]*)"/.exec(shown)?.[1] ?? '';
          const lines = [
            `The model test failed. Replay: GPUOPS_MODEL_SEED=${details.seed} GPUOPS_MODEL_PATH=${details.counterexamplePath ?? ''} GPUOPS_MODEL_REPLAY='${replay}' GPUOPS_MODEL_STEPS=${MAX_STEPS} npm run test:model`,
            `Shrunk sequence (${details.numShrinks} shrinks):`,
            ...shown.split(',').map((step) => `  ${step.replace(/\/\*replayPath=.*\*\//, '').trim()}`),
            `What went wrong: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
          ];
          throw new Error(lines.join('\n'));
        },
      },
    );
  });
});
