import { CLI_COMMANDS, START_COMMAND, WEB_COMMAND, WORKER_COMMAND } from './cli-options/commands.js';
import {
  type CliCommand,
  parseCli,
  readCommandArgs,
  renderCommandHelp,
  renderOverview,
} from './cli-options/options.js';
import { nearestWord } from './commands/suggest.js';

// The `gpuops` command: one subcommand per role or tool (their names and flags are a public interface:
// add, never rename). Each subcommand's options are a table in src/cli-options/commands.ts; `--help` prints
// the table and exits 0 before anything starts (no configuration, no Redis needed).

type Command = (args: string[]) => Promise<number>;

/** `gpuops start|web|worker`: no options; --help, or a clear refusal of anything else, before starting. */
async function runRole(
  spec: CliCommand,
  role: 'web' | 'worker' | undefined,
  args: string[],
): Promise<number> {
  const read = readCommandArgs(spec, () => (parseCli(spec, args).help ? 'help' : args), process);
  if ('exit' in read) return read.exit;
  return (await import('./app/run-bot.js')).runBot(role);
}

const commands: Record<string, Command> = {
  start: async (args) => runRole(START_COMMAND, undefined, args),
  web: async (args) => runRole(WEB_COMMAND, 'web', args),
  worker: async (args) => runRole(WORKER_COMMAND, 'worker', args),
  sim: async (args) => (await import('./sim/run-sim.js')).runSim(args),
  snapshot: async (args) => (await import('./snapshot/run-snapshot.js')).runSnapshot(args, process.env),
  audit: async (args) => (await import('./audit/run-audit-export.js')).runAuditExport(args, process.env),
  spend: async (args) =>
    (await import('./spend-export/run-spend-export.js')).runSpendExport(args, process.env),
  demo: async (args) => (await import('./demo/run-demo.js')).runDemo(args, process.env),
};

/** --help or -h among the options (not after `--`). */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const usage = renderOverview(CLI_COMMANDS);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    // `gpuops help sim` is `gpuops sim --help`.
    const topic = name === 'help' ? CLI_COMMANDS.find((c) => c.name.split(' ')[0] === rest[0]) : undefined;
    process.stdout.write(topic ? renderCommandHelp(topic) : usage);
    return name === undefined ? 2 : 0;
  }
  const spec = CLI_COMMANDS.find((c) => c.name.split(' ')[0] === name);
  if (spec && wantsHelp(rest)) {
    // Before the subcommand's module loads: help needs nothing else.
    process.stdout.write(renderCommandHelp(spec));
    return 0;
  }
  const command = commands[name];
  if (!command) {
    const near = nearestWord(name, Object.keys(commands));
    const guess = near === null ? '' : ` Did you mean gpuops ${near}?`;
    process.stderr.write(
      `gpuops: unknown command "${name}".${guess} The commands are ${Object.keys(commands).join(', ')}.\nRun gpuops --help for every command with its options.\n`,
    );
    return 2;
  }
  return command(rest);
}

const code = await main(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
