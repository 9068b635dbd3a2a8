import { SHAPES, type Shape } from '../cloud/shape.js';
import { type SimOptions, startSim } from './start-sim.js';

// `gpuops sim`: starts the simulator, prints the ready line (one JSON object) on stdout, logs on stderr,
// and stops cleanly on SIGTERM or SIGINT.

export const SIM_USAGE = `Usage: gpuops sim [--port N] [--host H] [--shape A|B|C] [--seed N]
                 [--clock real|manual] [--transition-ms N] [--no-metrics]

  --port N            port to listen on (default 0: a free port, shown in the ready line)
  --host H            address to bind (default 127.0.0.1)
  --shape A|B|C       shape of the infrastructure API (default B)
  --seed N            seed for ids, addresses and metric patterns (default 1)
  --clock MODE        real (default) or manual (moves only through POST /_sim/clock)
  --transition-ms N   how long state transitions take on the clock (default 2000)
  --no-metrics        do not start the metrics side (/read, /exporter)
`;

export class UsageError extends Error {}

function integer(flag: string, value: string | undefined, min: number, max: number): number {
  if (value === undefined) throw new UsageError(`${flag} needs a value.`);
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}; got "${value}".`);
  }
  return Number(value);
}

/** Parses the arguments of `gpuops sim`; throws UsageError with a sentence a person can act on. */
export function parseSimArgs(args: readonly string[]): SimOptions {
  const options: SimOptions = { shape: 'B' };
  for (let i = 0; i < args.length; i++) {
    const raw = args[i]!;
    const eq = raw.indexOf('=');
    const flag = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? args[++i];
    switch (flag) {
      case '--port':
        options.port = integer('--port', value(), 0, 65535);
        break;
      case '--host': {
        const host = value();
        if (!host) throw new UsageError('--host needs an address such as 127.0.0.1.');
        options.host = host;
        break;
      }
      case '--shape': {
        const shape = value()?.toUpperCase();
        if (!shape || !(SHAPES as readonly string[]).includes(shape)) {
          throw new UsageError(`--shape must be one of ${SHAPES.join(', ')}.`);
        }
        options.shape = shape as Shape;
        break;
      }
      case '--seed':
        options.seed = integer('--seed', value(), 0, 2 ** 32 - 1);
        break;
      case '--clock': {
        const mode = value();
        if (mode !== 'real' && mode !== 'manual') throw new UsageError('--clock must be real or manual.');
        options.clock = mode;
        break;
      }
      case '--transition-ms':
        options.transitionMs = integer('--transition-ms', value(), 0, 3_600_000);
        break;
      case '--no-metrics':
        options.metrics = false;
        break;
      default:
        throw new UsageError(`unknown option "${raw}".`);
    }
  }
  return options;
}

export async function runSim(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(SIM_USAGE);
    return 0;
  }
  let options: SimOptions;
  try {
    options = parseSimArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`gpuops sim: ${err.message}\n\n${SIM_USAGE}`);
    return 2;
  }

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

  process.stdout.write(`${JSON.stringify(sim.info)}\n`);

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
