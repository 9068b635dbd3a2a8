// The options of each `gpuops` subcommand as data: one table per subcommand, read by the parser
// (parseCli) and rendered as its --help, as the top-level help and as the README's table of commands,
// so none of them can say something the others do not. Names of subcommands, flags and environment
// variables are a public interface: add, never rename.

/** One option of a subcommand. */
export interface CliOption {
  /** The long flag, `--port`. */
  readonly flag: string;
  /** A one-letter alias, `-o`. */
  readonly short?: string;
  /** The value's placeholder (`N`, `FILE`, `A|B|C`); absent for a switch that takes no value. */
  readonly value?: string;
  readonly description: string;
  /** What applies when the option is not given, in words (`B`, `0: a free port`). */
  readonly default?: string;
  /** Shown without brackets in the usage line; the command checks it is there. */
  readonly required?: boolean;
}

/** A positional argument (`<instance>`). */
export interface CliArgument {
  readonly name: string;
  readonly description: string;
}

/** A subcommand: its words after `gpuops`, what it does, its arguments and options. */
export interface CliCommand {
  /** As typed after `gpuops`: `sim`, `audit export`. */
  readonly name: string;
  readonly summary: string;
  readonly args?: readonly CliArgument[];
  readonly options: readonly CliOption[];
  /** Further lines of its help: what it reads from the environment, where the docs are. */
  readonly notes?: readonly string[];
}

/** Every subcommand answers `--help` and `-h` with its help, and does nothing else. */
export const HELP_OPTION: CliOption = {
  flag: '--help',
  short: '-h',
  description: 'show this help and exit',
};

/** A command line that does not fit the table; the message names what is wrong. */
export class CliUsageError extends Error {}

export type ParsedCli =
  | { readonly help: true }
  | {
      readonly help: false;
      /** Given options by long flag: their value, or true for a switch. The last one given wins. */
      readonly values: ReadonlyMap<string, string | true>;
      /** Positional arguments, the subcommand's own words (`export`) removed. */
      readonly args: readonly string[];
    };

function findOption(command: CliCommand, name: string): CliOption | undefined {
  return command.options.find((o) => o.flag === name || (o.short !== undefined && o.short === name));
}

/**
 * Reads `argv` (what follows the subcommand's first word) against the command's table: `--flag value`,
 * `--flag=value`, `-f value`, switches, positionals, and `--` before positionals that start with `-`.
 * `--help`/`-h` anywhere wins over everything else. Throws CliUsageError for an unknown option, a
 * missing value, a value given to a switch, or an argument too many.
 */
export function parseCli(command: CliCommand, argv: readonly string[]): ParsedCli {
  const end = argv.indexOf('--');
  const flags = end < 0 ? argv : argv.slice(0, end);
  if (flags.some((a) => a === HELP_OPTION.flag || a === HELP_OPTION.short)) return { help: true };
  const values = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const raw = flags[i]!;
    if (!raw.startsWith('-') || raw === '-') {
      positionals.push(raw);
      continue;
    }
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const name = eq > 0 ? raw.slice(0, eq) : raw;
    const option = findOption(command, name);
    if (!option) throw new CliUsageError(`unknown option "${name}"`);
    if (option.value === undefined) {
      if (eq > 0) throw new CliUsageError(`${option.flag} takes no value; give it alone.`);
      values.set(option.flag, true);
      continue;
    }
    const next = flags[i + 1];
    const value =
      eq > 0 ? raw.slice(eq + 1) : next !== undefined && !next.startsWith('--') ? next : undefined;
    if (eq <= 0 && value !== undefined) i++;
    if (value === undefined || value === '') {
      throw new CliUsageError(`${option.flag} needs a value (${option.flag} ${option.value}).`);
    }
    values.set(option.flag, value);
  }
  if (end >= 0) positionals.push(...argv.slice(end + 1));
  const words = command.name.split(' ').slice(1);
  for (const word of words) {
    const given = positionals.shift();
    if (given !== word) {
      throw new CliUsageError(
        given === undefined
          ? `say what to do: ${word}.`
          : `unknown action "${given}"; the one action is ${word}.`,
      );
    }
  }
  const allowed = command.args?.length ?? 0;
  if (positionals.length > allowed) {
    throw new CliUsageError(`unexpected argument "${positionals[allowed]}".`);
  }
  return { help: false, values, args: positionals };
}

/** The value of an option that takes one, if given. */
export function optionValue(parsed: ParsedCli, flag: string): string | undefined {
  if (parsed.help) return undefined;
  const v = parsed.values.get(flag);
  return typeof v === 'string' ? v : undefined;
}

/** True when a switch was given. */
export function optionSet(parsed: ParsedCli, flag: string): boolean {
  return !parsed.help && parsed.values.get(flag) === true;
}

/** A whole number from min to max, or a CliUsageError that says so. */
export function wholeNumber(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new CliUsageError(`${flag} must be a whole number from ${min} to ${max}; got "${value}".`);
  }
  return Number(value);
}

// ---------- rendering ----------

const WIDTH = 100;

function optionLabel(option: CliOption): string {
  const flag = option.value ? `${option.flag} ${option.value}` : option.flag;
  return option.short ? `${option.short}, ${flag}` : flag;
}

function optionText(option: CliOption): string {
  if (option.default !== undefined) return `${option.description} (default: ${option.default})`;
  return option.required ? `${option.description} (required)` : option.description;
}

/** Words packed into lines of at most `width`, the first after `first`, the others after `indent`. */
function wrap(text: string, first: string, indent: string, width = WIDTH): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line += (empty ? '' : ' ') + word;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** `gpuops sim [--port N] [--host H] …`, wrapped under itself. */
export function synopsis(command: CliCommand): string[] {
  const parts = [
    ...(command.args ?? []).map((a) => a.name),
    ...command.options.map((o) => {
      const text = o.value ? `${o.flag} ${o.value}` : o.flag;
      return o.required ? text : `[${text}]`;
    }),
  ];
  const head = `gpuops ${command.name}`;
  const lines: string[] = [];
  let line = head;
  for (const part of parts) {
    if (line.length + 1 + part.length > WIDTH && line !== head) {
      lines.push(line);
      line = ' '.repeat(head.length);
    }
    line += ` ${part}`;
  }
  lines.push(line);
  return lines;
}

/** Two columns, the labels padded to one width, the texts wrapped. */
function table(rows: readonly (readonly [string, string])[], indent: string): string[] {
  const labelWidth = Math.max(...rows.map(([label]) => label.length)) + 2;
  return rows.flatMap(([label, text]) => {
    const first = `${indent}${label.padEnd(labelWidth)}`;
    return wrap(text, first, ' '.repeat(first.length));
  });
}

/** `gpuops <command> --help`. */
export function renderCommandHelp(command: CliCommand): string {
  const [first = '', ...rest] = synopsis(command);
  const lines = [
    `Usage: ${first}`,
    ...rest.map((l) => `       ${l}`),
    '',
    ...wrap(command.summary, '', ''),
    '',
  ];
  const rows: [string, string][] = [
    ...(command.args ?? []).map((a): [string, string] => [a.name, a.description]),
    ...[...command.options, HELP_OPTION].map((o): [string, string] => [optionLabel(o), optionText(o)]),
  ];
  lines.push(...table(rows, '  '));
  if (command.notes && command.notes.length > 0) {
    lines.push('');
    for (const note of command.notes) lines.push(...wrap(note, '', ''));
  }
  return `${lines.join('\n')}\n`;
}

/** `gpuops help`: every subcommand with every option, from the same tables. */
export function renderOverview(commands: readonly CliCommand[]): string {
  const lines = [
    'Usage: gpuops <command> [options]',
    '       gpuops <command> --help   shows one command with its options',
    '',
    'Commands:',
  ];
  for (const command of commands) {
    lines.push('');
    lines.push(...wrap(command.summary, `  ${command.name.padEnd(14)} `, ' '.repeat(17)));
    const rows: [string, string][] = [
      ...(command.args ?? []).map((a): [string, string] => [a.name, a.description]),
      ...command.options.map((o): [string, string] => [optionLabel(o), optionText(o)]),
    ];
    if (rows.length > 0) lines.push(...table(rows, '      '));
  }
  lines.push('', '  help           this text (also gpuops --help)');
  return `${lines.join('\n')}\n`;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The README's table of commands and options (checked against these tables by a test). */
export function renderMarkdownTable(commands: readonly CliCommand[]): string {
  const rows = ['| command | option | default | what it does |', '|---|---|---|---|'];
  for (const command of commands) {
    rows.push(`| \`gpuops ${command.name}\` | | | ${cell(command.summary)} |`);
    for (const a of command.args ?? []) rows.push(`| | \`${cell(a.name)}\` | | ${cell(a.description)} |`);
    for (const o of command.options) {
      const given = o.default ?? (o.required ? 'required' : '');
      rows.push(
        `| | \`${cell(optionLabel(o))}\` | ${cell(given)}${given ? ' ' : ''}| ${cell(o.description)} |`,
      );
    }
  }
  return `${rows.join('\n')}\n`;
}

/** What a wrong command line prints on stderr: the reason, the usage line, where the help is. */
export function usageErrorText(command: CliCommand, message: string): string {
  const reason = message.startsWith('unknown option') ? `${message}.` : message;
  const [first = '', ...rest] = synopsis(command);
  const top = command.name.split(' ')[0];
  return [
    `gpuops ${top}: ${reason.replace(/\.\.$/, '.')}`,
    `Usage: ${first}`,
    ...rest.map((l) => `       ${l}`),
    command.options.length > 0
      ? `Run gpuops ${command.name} --help for what each option does.`
      : `gpuops ${command.name} takes no options; run gpuops ${command.name} --help for what it reads instead.`,
    '',
  ].join('\n');
}

/** Where a subcommand writes its help and its usage errors. */
export interface CliOutput {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/**
 * Reads a subcommand's arguments with `parse` (which throws CliUsageError for a wrong command line):
 * `--help` prints its help and exits 0, a usage error prints the reason and its usage and exits 2.
 */
export function readCommandArgs<T>(
  command: CliCommand,
  parse: () => T | 'help',
  io: CliOutput,
): { readonly options: T } | { readonly exit: 0 | 2 } {
  let parsed: T | 'help';
  try {
    parsed = parse();
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    io.stderr.write(usageErrorText(command, err.message));
    return { exit: 2 };
  }
  if (parsed === 'help') {
    io.stdout.write(renderCommandHelp(command));
    return { exit: 0 };
  }
  return { options: parsed };
}
