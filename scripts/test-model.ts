import { spawnSync } from 'node:child_process';

// `npm run test:model [-- --runs N] [--seed S]`: the model-based test (test/model/, docs/testing.md).
// Vitest refuses flags it does not know, so the model's own are read here and handed to the test as
// GPUOPS_MODEL_RUNS and GPUOPS_MODEL_SEED; anything else goes to vitest as given.

const args = process.argv.slice(2);
const env = { ...process.env };
const rest: string[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if ((arg === '--runs' || arg === '--seed') && args[i + 1] !== undefined) {
    env[arg === '--runs' ? 'GPUOPS_MODEL_RUNS' : 'GPUOPS_MODEL_SEED'] = args[++i]!;
  } else {
    rest.push(arg);
  }
}
const result = spawnSync('npx', ['vitest', 'run', '--config', 'vitest.model.config.ts', ...rest], {
  stdio: 'inherit',
  env,
});
process.exit(result.status ?? 1);
