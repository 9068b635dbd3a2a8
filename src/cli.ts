// The `gpuops` command: one subcommand per role or tool (DESIGN.md, Interfaces that are fixed).
const USAGE = `Usage: gpuops <command> [options]

Commands:
  start                       the role ROLE names (default all: listener and workers in one process)
  web                         the HTTP listener only
  worker                      the workers only
  sim [--port N] [--host H] [--shape A|B|C]
                              the cloud simulator; prints one JSON line when ready
  snapshot <instance> --out <file.png> [--metric M] [--range 1h]
                              write the PNG metric snapshot /gpu metrics would post
  demo                        everything on one machine with a terminal chat
  help                        this text
`;

type Command = (args: string[]) => Promise<number>;

const notYet =
  (name: string): Command =>
  async () => {
    process.stderr.write(`gpuops ${name}: not built yet in this version.\n`);
    return 2;
  };

const commands: Record<string, Command> = {
  start: async () => (await import('./main.js')).runBot(undefined),
  web: async () => (await import('./main.js')).runBot('web'),
  worker: async () => (await import('./main.js')).runBot('worker'),
  sim: async (args) => (await import('./sim/run-sim.js')).runSim(args),
  snapshot: async (args) => (await import('./snapshot/run-snapshot.js')).runSnapshot(args, process.env),
  demo: notYet('demo'),
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
