import { startBot } from '../../src/app/start-bot.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log/logger.js';
import { OPEN_TEST_POLICY } from './guardrails.js';

// `gpuops worker` in a process of its own, for tests that kill it (SIGKILL mid-job) and start another:
// `node --import tsx test/support/worker-entry.ts` with a bot stack's environment (stack.env()), plus
// LOCK_MS and STALLED_MS, the job lock and stalled-job check that the CLI leaves at 30 s (and, to join a
// stack with a policy, GPUOPS_POLICY, APPROVAL_EXPIRY_EVERY_MS and REQUEST_SWEEP_EVERY_MS). It is
// assembled by startBot as production assembles it, and prints {"msg":"worker ready"} once it takes jobs.

const config = parseConfig({ ...process.env, ROLE: 'worker' }, 'bot');
const log = createLogger({ level: process.env.LOG_LEVEL ?? 'warn', name: 'test-worker' });
const bot = await startBot(config, {
  log,
  host: '127.0.0.1',
  // GPUOPS_POLICY, when given, as `gpuops worker` reads it (the model test's own policy).
  ...(process.env.GPUOPS_POLICY ? {} : { policy: OPEN_TEST_POLICY }),
  lockDurationMs: Number(process.env.LOCK_MS ?? 1_000),
  stalledIntervalMs: Number(process.env.STALLED_MS ?? 500),
  workerConcurrency: 2,
  // Each worker that starts sets the job schedulers' periods (the last start wins): a worker joining a
  // bot stack must use the stack's (bot-stack.ts: 200 ms with a policy), not production's minute.
  ...(process.env.APPROVAL_EXPIRY_EVERY_MS
    ? { approvalExpiryEveryMs: Number(process.env.APPROVAL_EXPIRY_EVERY_MS) }
    : {}),
  ...(process.env.REQUEST_SWEEP_EVERY_MS
    ? { requestSweepEveryMs: Number(process.env.REQUEST_SWEEP_EVERY_MS) }
    : {}),
  shutdownGraceMs: 2_000,
  workerTiming: { pollStartMs: 50, pollMaxMs: 200, settleTimeoutMs: 20_000 },
});
process.stdout.write(`${JSON.stringify({ msg: 'worker ready', pid: process.pid })}\n`);

process.once('SIGTERM', () => {
  void bot.stop().finally(() => {
    log.flush();
    process.exit(0);
  });
});
