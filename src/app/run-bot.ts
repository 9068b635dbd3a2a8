import type { Config, Role } from '../config.js';
import { ConfigError, parseConfig } from '../config.js';
import { AppError } from '../errors.js';
import { createLogger, redactText } from '../log/logger.js';
import { type RunningBot, startBot } from './start-bot.js';

/**
 * `gpuops start|web|worker`: reads the environment, runs the role until SIGTERM or SIGINT, and
 * returns the exit code. A second signal exits at once.
 */
export async function runBot(
  forcedRole: Role | undefined,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const command = forcedRole ?? 'start';
  let config: Config;
  try {
    config = parseConfig(forcedRole ? { ...env, ROLE: forcedRole } : env, 'bot');
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(
        `gpuops ${command}: ${err.message}\nSee .env.example for every setting. To try gpuops without Slack or a cloud account, run gpuops demo: it needs none of these.\n`,
      );
      return 1;
    }
    throw err;
  }
  const log = createLogger({ level: config.LOG_LEVEL });
  let bot: RunningBot;
  try {
    bot = await startBot(config, { log });
  } catch (err) {
    const message =
      err instanceof AppError ? err.message : redactText((err as Error)?.message ?? String(err));
    log.fatal({ err }, 'gpuops could not start');
    log.flush();
    process.stderr.write(`gpuops ${command}: ${message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        log.warn({ signal }, 'second signal: exiting now');
        log.flush();
        process.exit(1);
      }
      signalled = true;
      log.info({ signal }, 'signal received: shutting down (send it again to exit at once)');
      bot.stop().then(
        () => finish(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          finish(1);
        },
      );
    };
    const finish = (code: number) => {
      log.flush();
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      // Exit on our own once everything is closed; a handle some library left open must not hold it.
      setTimeout(() => process.exit(code), 500).unref();
      resolve(code);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A stray rejection in some library's background work is logged, not a crash of every job in hand.
    process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled promise rejection'));
  });
}
