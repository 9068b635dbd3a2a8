import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_COMMANDS } from '../../src/cli-options/commands.js';
import { renderMarkdownTable } from '../../src/cli-options/options.js';
import { spawnGpuops } from '../support/gpuops-process.js';

// `gpuops … --help` as a newcomer types it: with no configuration at all, every subcommand prints its
// help and exits 0 without starting; `gpuops help` lists every option each subcommand takes; a flag a
// command does not have is named, with a pointer to --help, and exit 2. The README's table is the one
// the option tables render.

const root = new URL('../..', import.meta.url);

/** Runs `gpuops <args>` with an empty environment (PATH and HOME only) to its exit. */
async function gpuops(args: readonly string[]) {
  const child = spawnGpuops(args, {});
  const { code } = await child.exited;
  return { code, stdout: child.lines.join('\n'), stderr: child.stderr() };
}

describe('gpuops --help', { timeout: 60_000 }, () => {
  it('prints the help of start, web and worker and exits 0 without configuration, instead of trying to start', async () => {
    const results = await Promise.all([
      gpuops(['start', '--help']),
      gpuops(['web', '--help']),
      gpuops(['worker', '-h']),
    ]);
    for (const [i, name] of ['start', 'web', 'worker'].entries()) {
      const r = results[i]!;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: gpuops ${name}`);
      expect(r.stdout).toContain('SLACK_BOT_TOKEN');
      expect(r.stdout).toContain('.env.example');
    }
  });

  it('shows every option each subcommand parses, in its own --help and in gpuops help', async () => {
    const [overview, sim, demo, snapshot, audit] = await Promise.all([
      gpuops(['help']),
      gpuops(['sim', '--help']),
      gpuops(['demo', '--help']),
      gpuops(['snapshot', '-h']),
      gpuops(['audit', 'export', '--help']),
    ]);
    for (const r of [overview, sim, demo, snapshot, audit]) expect(r.code).toBe(0);
    // The options the old top-level help left out.
    for (const flag of ['--seed', '--clock', '--transition-ms', '--no-metrics']) {
      expect(sim.stdout).toContain(flag);
    }
    for (const flag of ['--files', '--log', '--no-metrics', '--timeout', '--transition-ms']) {
      expect(demo.stdout).toContain(flag);
    }
    expect(snapshot.stdout).toContain('--end TIME');
    expect(demo.stdout).toContain('--timeout SECONDS  how long a script line may take');
    // Every subcommand and every option of its table, in gpuops help.
    for (const command of CLI_COMMANDS) {
      expect(overview.stdout).toContain(`  ${command.name} `);
      for (const option of command.options) expect(overview.stdout).toContain(option.flag);
    }
    const section = (name: string) => {
      const lines = overview.stdout.split('\n');
      const at = lines.findIndex((l) => l.startsWith(`  ${name} `));
      const end = lines.findIndex((l, i) => i > at && /^ {2}\S/.test(l));
      return lines.slice(at, end).join('\n');
    };
    expect(section('sim')).toContain('--transition-ms N');
    expect(section('sim')).toContain('--clock real|manual');
    expect(section('demo')).toContain('--timeout SECONDS');
    expect(section('demo')).toContain('--log FILE');
    expect(audit.stdout).toContain('Usage: gpuops audit export [--out FILE]');
  });

  it('names a flag a command does not have, points to --help, and exits 2', async () => {
    const [start, demo, sim] = await Promise.all([
      gpuops(['start', '--port', '3000']),
      gpuops(['demo', '--bogus']),
      gpuops(['sim', '--shape', 'B', '--verbose']),
    ]);
    expect(start.code).toBe(2);
    expect(start.stderr).toContain('gpuops start: unknown option "--port".');
    expect(start.stderr).toContain('gpuops start --help');
    expect(start.stderr).not.toMatch(/SLACK_BOT_TOKEN: required|Configuration/);
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain('gpuops demo: unknown option "--bogus".');
    expect(demo.stderr).toContain('Run gpuops demo --help');
    expect(sim.code).toBe(2);
    expect(sim.stderr).toContain('gpuops sim: unknown option "--verbose".');
    expect(sim.stderr).toContain('Run gpuops sim --help');
  });

  it("keeps the README's table of commands and options the same as the tables the parsers read", () => {
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    const start = readme.indexOf('<!-- cli-table:start');
    const end = readme.indexOf('<!-- cli-table:end -->');
    expect(start, 'README.md has no <!-- cli-table:start … --> marker').toBeGreaterThan(0);
    const table = readme.slice(readme.indexOf('\n', start) + 1, end);
    expect(table, 'README.md: replace the table between the cli-table markers with this').toBe(
      renderMarkdownTable(CLI_COMMANDS),
    );
  });
});
