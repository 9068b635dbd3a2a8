import { SIM_COMMAND } from '../cli-options/commands.js';
import {
  CliUsageError,
  optionSet,
  optionValue,
  parseCli,
  readCommandArgs,
  wholeNumber,
} from '../cli-options/options.js';
import { SHAPES, type Shape } from '../cloud/shape.js';
import { readyEnvLines } from './ready-env.js';
import { type SimOptions, startSim } from './start-sim.js';

// `gpuops sim`: starts the simulator, prints the ready line (one JSON object) on stdout, logs on stderr,
// and stops cleanly on SIGTERM or SIGINT.

/** Parses the arguments of `gpuops sim` (its table: SIM_COMMAND); throws CliUsageError with a sentence a person can act on. */
export function parseSimArgs(args: readonly string[]): (SimOptions & { env?: boolean }) | 'help' {
  const parsed = parseCli(SIM_COMMAND, args);
  if (parsed.help) return 'help';
  const options: SimOptions & { env?: boolean } = { shape: 'B' };
  const port = optionValue(parsed, '--port');
  if (port !== undefined) options.port = wholeNumber('--port', port, 0, 65535);
  const host = optionValue(parsed, '--host');
  if (host !== undefined) options.host = host;
  const shape = optionValue(parsed, '--shape')?.toUpperCase();
  if (shape !== undefined) {
    if (!(SHAPES as readonly string[]).includes(shape)) {
      throw new CliUsageError(`--shape must be one of ${SHAPES.join(', ')}.`);
    }
    options.shape = shape as Shape;
  }
  const seed = optionValue(parsed, '--seed');
  if (seed !== undefined) options.seed = wholeNumber('--seed', seed, 0, 2 ** 32 - 1);
  const clock = optionValue(parsed, '--clock');
  if (clock !== undefined) {
    if (clock !== 'real' && clock !== 'manual') throw new CliUsageError('--clock must be real or manual.');
    options.clock = clock;
  }
  const transition = optionValue(parsed, '--transition-ms');
  if (transition !== undefined)
    options.transitionMs = wholeNumber('--transition-ms', transition, 0, 3_600_000);
  if (optionSet(parsed, '--no-metrics')) options.metrics = false;
  if (optionSet(parsed, '--env')) options.env = true;
  return options;
}

export async function runSim(args: string[]): Promise<number> {
  const read = readCommandArgs(SIM_COMMAND, () => parseSimArgs(args), process);
  if ('exit' in read) return read.exit;
  const { env, ...options } = read.options;

  let sim: Awaited<ReturnType<typeof startSim>>;
  try {
    sim = await startSim(options);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why =
      code === 'EADDRINUSE'
        ? `port ${options.port} is already in use; choose another with --port, or --port 0 for a free one.`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
          ? `cannot listen on ${options.host}; use an address of this machine such as 127.0.0.1.`
          : `could not start: ${(err as Error).message}`;
    process.stderr.write(`gpuops sim: ${why}\n`);
    return 1;
  }

  process.stdout.write(env ? `${readyEnvLines(sim.info).join('\n')}\n` : `${JSON.stringify(sim.info)}\n`);

  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    onSignal = resolve;
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  process.stderr.write(`[gpuops sim] ${signal}: closing\n`);
  await sim.close();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  return 0;
}
