import { startBot } from '../../../src/app/start-bot.js';
import { parseConfig, type Role } from '../../../src/config.js';
import { createLogger } from '../../../src/log/logger.js';

// gpuops in a process of its own, exactly as `gpuops start|web|worker` composes it (startBot), plus the
// knobs a test needs and the CLI does not expose: short job locks so a killed worker's job is taken
// over in about a second, quick polls, and the worker concurrency. Run it with spawnScript:
//   node --import tsx test/reliability/support/bot-process.ts
// with the gpuops environment and BOT_ROLE, BOT_LOCK_MS, BOT_STALLED_MS, BOT_POLL_MS, BOT_CONCURRENCY,
// BOT_PROGRESS_QUIET_MS.
// It logs JSON lines on stdout like gpuops, and one {"msg":"bot ready","port":N} whatever the level. With BOT_WAIT_FOR_GO it
// loads everything, prints {"msg":"standing by"} and starts only on SIGUSR2 (a warm spare).

const number = (key: string, fallback: number): number => {
  const value = process.env[key];
  return value === undefined || value === '' ? fallback : Number(value);
};

const config = parseConfig(process.env, 'bot');
const log = createLogger({ level: config.LOG_LEVEL });

if (process.env.BOT_WAIT_FOR_GO) {
  // A signal listener alone does not keep Node running: a timer does, until the go.
  const alive = setInterval(() => {}, 60_000);
  const go = new Promise<void>((resolve) => process.on('SIGUSR2', () => resolve()));
  process.stdout.write(`${JSON.stringify({ msg: 'standing by', pid: process.pid })}\n`);
  await go;
  clearInterval(alive);
  process.stdout.write(`${JSON.stringify({ msg: 'going', pid: process.pid })}\n`);
}

const bot = await startBot(config, {
  role: (process.env.BOT_ROLE ?? config.ROLE) as Role,
  log,
  host: '127.0.0.1',
  lockDurationMs: number('BOT_LOCK_MS', 30_000),
  stalledIntervalMs: number('BOT_STALLED_MS', 30_000),
  workerConcurrency: number('BOT_CONCURRENCY', 8),
  shutdownGraceMs: 2_000,
  workerTiming: {
    pollStartMs: number('BOT_POLL_MS', 1_000),
    pollMaxMs: 4 * number('BOT_POLL_MS', 1_000),
    // Progress shows at once, as in the in-process stacks: the kill test waits for "Waiting" on screen.
    progressQuietMs: number('BOT_PROGRESS_QUIET_MS', 0),
  },
});

// Whatever LOG_LEVEL says, the test needs to know when and where it listens.
process.stdout.write(
  `${JSON.stringify({ msg: 'bot ready', port: bot.port, role: bot.role, pid: process.pid })}\n`,
);

process.once('SIGTERM', () => {
  void bot.stop().finally(() => {
    log.flush();
    setTimeout(() => process.exit(0), 100);
  });
});
