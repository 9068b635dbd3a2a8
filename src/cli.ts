// The `gpuops` command: one subcommand per role or tool (their names and flags are a public interface: add, never rename).
const USAGE = `Usage: gpuops <command> [options]

Commands:
  start                       the role ROLE names (default all: listener and workers in one process)
  web                         the HTTP listener only
  worker                      the workers only
  sim [--port N] [--host H] [--shape A|B|C]
                              the cloud simulator; prints one JSON line when ready
  snapshot <instance> --out <file.png> [--metric M] [--range 1h]
                              write the PNG metric snapshot /gpu metrics would post
  demo [--script FILE] [--shape A|B|C]
                              everything on one machine with a terminal chat (docs/demo.md)
  audit export [--out FILE]   the audit trail as JSON lines (reads REDIS_URL, GPUOPS_POLICY)
  help                        this text
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  start: async () => (await import('./app/run-bot.js')).runBot(undefined),
  web: async () => (await import('./app/run-bot.js')).runBot('web'),
  worker: async () => (await import('./app/run-bot.js')).runBot('worker'),
  sim: async (args) => (await import('./sim/run-sim.js')).runSim(args),
  snapshot: async (args) => (await import('./snapshot/run-snapshot.js')).runSnapshot(args, process.env),
  audit: async (args) => (await import('./audit/run-audit-export.js')).runAuditExport(args, process.env),
  demo: async (args) => (await import('./demo/run-demo.js')).runDemo(args, process.env),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`gpuops: unknown command "${name}".\n\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

const code = await main(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
